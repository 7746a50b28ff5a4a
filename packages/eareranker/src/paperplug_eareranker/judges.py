"""LLM judges over any ChatModel that grade a (query, document) pair on the paper's adequacy
dimensions (verifiability, coverage, completeness, structure) as a number in [0, 1]; several
judges' grades are combined by `aggregate_judges` (Alg. 1)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from paperplug_eareranker.aggregation import aggregate_judges

PROMPT = (
    "Rate how adequate the DOCUMENT is for answering the QUERY, considering whether it can be "
    "verified, how much of the query it covers, how complete it is and how well structured. "
    "Answer with one number between 0 (irrelevant) and 1 (precise), nothing else.\n\n"
    "QUERY: {query}\n\nDOCUMENT: {document}\n\nScore:"
)
_NUMBER = re.compile(r"(?<![\d.])(0(?:\.\d+)?|1(?:\.0+)?)(?![\d.])")


class LLMJudge:
    """One judge: a ChatModel asked for a score; `None` when the reply holds no number in [0, 1]
    (an unusable reply is reported, never read as 0)."""

    def __init__(self, chat_model: Any, *, prompt: str = PROMPT, max_tokens: int = 8) -> None:
        if not callable(getattr(chat_model, "chat", None)):
            raise TypeError("chat_model must implement the ChatModel protocol (chat(messages))")
        self.chat_model, self.prompt, self.max_tokens = chat_model, prompt, max_tokens

    def grade(self, query: str, document: str) -> float | None:
        reply = self.chat_model.chat(
            [{"role": "user", "content": self.prompt.format(query=query, document=document)}],
            temperature=0,
            max_tokens=self.max_tokens,
        )
        match = _NUMBER.search(reply)
        return float(match.group(1)) if match else None


def label_pairs(
    judges: Sequence[LLMJudge], pairs: Sequence[tuple[str, str]], **aggregate: Any
) -> dict[str, list]:
    """Labels for text pairs from several judges: {"label", "branch", "grades", "unusable"}; a pair
    with fewer usable grades than Alg. 1 needs gets label None."""
    out: dict[str, list] = {"label": [], "branch": [], "grades": [], "unusable": []}
    first = aggregate.get("first", 4)
    for query, document in pairs:
        grades = [j.grade(query, document) for j in judges]
        usable = [g for g in grades if g is not None]
        out["grades"].append(grades)
        out["unusable"].append(len(grades) - len(usable))
        if len(usable) < first:
            out["label"].append(None)
            out["branch"].append("too few usable grades")
            continue
        label, branch = aggregate_judges(np.array(usable), **aggregate)
        out["label"].append(label)
        out["branch"].append(branch)
    return out
