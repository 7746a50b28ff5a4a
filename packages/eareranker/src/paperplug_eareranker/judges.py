"""LLM judges over any ChatModel that grade a (query, document) pair on the paper's adequacy
dimensions (verifiability, coverage, completeness, structure) as a number in [0, 1]; several
judges' grades are combined by `aggregate_judges` (Alg. 1)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from paperplug import ChatModel
from paperplug.checks import check_scalar, check_sequence, check_type
from paperplug_eareranker.aggregation import aggregate_judges

PROMPT = (
    "Rate how adequate the DOCUMENT is for answering the QUERY, considering whether it can be "
    "verified, how much of the query it covers, how complete it is and how well structured. "
    "Answer with one number between 0 (irrelevant) and 1 (precise), nothing else.\n\n"
    "QUERY: {query}\n\nDOCUMENT: {document}\n\nScore:"
)
# a number (a sentence's full stop after it is not a decimal point; "0,85" is a decimal comma),
# then optionally "%", "/ 10" or "out of 10"
_NUMBER = r"(?<![\w.,])([-+]?(?:\d+(?:[.,]\d+)?|[.,]\d+))(?![\d])"
_SCALE = r"(?:\s*(%)|\s*(?:/|out\s+of)\s*(\d+(?:\.\d+)?))?"
_SCORE = re.compile(_NUMBER + _SCALE, re.IGNORECASE)
_LABEL = re.compile(r"\b(?:score|rating|grade|adequacy|answer)\b[^\d.+-]{0,20}", re.IGNORECASE)


def parse_score(reply: str) -> float | None:
    """The judge's number in [0, 1] from its reply, or None: the first number after a label
    ("Score:", "rating", ...) where there is one, else the first number; "85%", "8/10" and
    "7 out of 10" are scaled; a number outside [0, 1] unscaled, or none, is None."""
    text = reply.replace("*", "").replace("`", "")
    label = _LABEL.search(text)
    match = _SCORE.search(text, label.end() if label else 0) or (
        _SCORE.search(text) if label else None
    )
    if match is None:
        return None
    number, percent, scale = match.groups()
    value = float(number.replace(",", "."))
    if percent:
        value /= 100
    elif scale:
        value = value / float(scale) if float(scale) > 0 else float("nan")
    return value if 0 <= value <= 1 else None


class LLMJudge:
    """One judge: a ChatModel asked for a score; `None` when the reply holds no number in [0, 1]
    (an unusable reply is reported, never read as 0)."""

    def __init__(self, chat_model: Any, *, prompt: str = PROMPT, max_tokens: int = 16) -> None:
        check_type(chat_model, "chat_model", ChatModel, what="a ChatModel (chat(messages) -> str)")
        check_type(prompt, "prompt", str)
        if "{query}" not in prompt or "{document}" not in prompt:
            raise ValueError("prompt must hold the fields {query} and {document}")
        check_scalar(max_tokens, "max_tokens", "int", low=1)
        self.chat_model, self.prompt, self.max_tokens = chat_model, prompt, max_tokens

    def grade(self, query: str, document: str) -> float | None:
        """The judge's adequacy score of `document` for `query`, or None if unusable."""
        check_type(query, "query", str)
        check_type(document, "document", str)
        reply = self.chat_model.chat(
            [{"role": "user", "content": self.prompt.format(query=query, document=document)}],
            temperature=0,
            max_tokens=self.max_tokens,
        )
        return parse_score(reply)


def label_pairs(
    judges: Sequence[LLMJudge], pairs: Sequence[tuple[str, str]], **aggregate: Any
) -> dict[str, list]:
    """Labels for text pairs from several judges: {"label", "branch", "grades", "unusable"}; a pair
    with fewer usable grades than Alg. 1 needs gets label None."""
    judges = check_sequence(judges, "judges", LLMJudge, what="LLMJudge")
    pairs = check_sequence(pairs, "pairs", tuple, min_len=0, what="(query, document) tuple")
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
