"""LLM judges that grade a (query, document) pair on the paper's adequacy dimensions
(verifiability, coverage, completeness, structure) as a number in [0, 1]: `LLMJudge` over any
ChatModel (parses a generated reply), `DigitJudge` over a local causal LM (reads the next-token
distribution over the grade digits in one forward pass); several judges' grades are combined by
`aggregate_judges` (Alg. 1)."""

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
    check_type(reply, "reply", str)
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


DIGIT_PROMPT = (
    "How well does the DOCUMENT answer the QUERY? Grade it from 0 to {top}: 0 irrelevant, "
    "1 same topic only, 2 partly answers it, 3 mostly answers it, {top} answers it precisely "
    "(verifiable, complete, well structured). Reply with one digit.\n\n"
    "QUERY: {query}\n\nDOCUMENT: {document}"
)


class DigitJudge:
    """One judge over a local causal LM (an HFChatModel: `prompt_ids`, `model`, `tokenizer`): one
    forward pass, the next-token distribution renormalised over the digits 0..top after the
    assistant's `prefill`; the grade is its expectation / top (no generation, nothing to parse)."""

    def __init__(
        self,
        chat_model: Any,
        *,
        prompt: str = DIGIT_PROMPT,
        top: int = 4,
        prefill: str = "Grade: ",
        max_words: int = 120,
    ) -> None:
        for need in ("prompt_ids", "model", "tokenizer"):
            if not hasattr(chat_model, need):
                raise TypeError(
                    "chat_model must be a local causal LM with prompt_ids, model and tokenizer "
                    f"(an HFChatModel), got {type(chat_model).__name__}"
                )
        check_type(prompt, "prompt", str)
        if "{query}" not in prompt or "{document}" not in prompt:
            raise ValueError("prompt must hold the fields {query} and {document}")
        self.top = check_scalar(top, "top", "int", low=1, high=9)
        try:
            prompt.format(query="", document="", top=top)
        except (KeyError, IndexError, ValueError) as exc:
            raise ValueError(
                f"prompt may hold the fields {{query}}, {{document}} and {{top}} only: {exc!r}"
            ) from None
        check_type(prefill, "prefill", str)
        self.max_words = check_scalar(max_words, "max_words", "int", low=1)
        digits = [chat_model.tokenizer.encode(str(k), add_special_tokens=False) for k in range(top + 1)]  # fmt: skip
        if any(len(ids) != 1 for ids in digits):
            raise ValueError("the tokenizer must give each digit 0..top one token")
        self.chat_model, self.prompt, self.prefill = chat_model, prompt, prefill
        self.digit_ids = [ids[0] for ids in digits]

    def distribution(self, query: str, document: str) -> np.ndarray:
        """P(grade = k), k = 0..top: the model's next-token probabilities of the digits, summing
        to 1 (the document cut to `max_words` words)."""
        import torch

        check_type(query, "query", str)
        check_type(document, "document", str)
        document = " ".join(document.split()[: self.max_words])
        content = self.prompt.format(query=query, document=document, top=self.top)
        ids = self.chat_model.prompt_ids([{"role": "user", "content": content}])
        ids = ids + self.chat_model.tokenizer.encode(self.prefill, add_special_tokens=False)
        model = self.chat_model.model
        context = getattr(getattr(model, "config", None), "max_position_embeddings", None)
        if context is not None and len(ids) > context:
            raise ValueError(
                f"the query and document make a prompt of {len(ids)} tokens, beyond the model's "
                f"context of {context} (the document is cut to max_words={self.max_words} words)"
            )
        with torch.inference_mode():
            logits = model(input_ids=torch.tensor([ids], device=next(model.parameters()).device)).logits  # fmt: skip
        return torch.softmax(logits[0, -1, self.digit_ids].double(), -1).detach().cpu().numpy()

    def grade(self, query: str, document: str) -> float:
        """The expected grade / top, in [0, 1]."""
        return float(self.distribution(query, document) @ np.arange(self.top + 1) / self.top)


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
    judges: Sequence[LLMJudge | DigitJudge], pairs: Sequence[tuple[str, str]], **aggregate: Any
) -> dict[str, list]:
    """Labels for text pairs from several judges: {"label", "branch", "grades", "unusable"}; a pair
    with fewer usable grades than Alg. 1 needs gets label None."""
    judges = check_sequence(judges, "judges", (LLMJudge, DigitJudge), what="LLMJudge or DigitJudge")
    pairs = check_sequence(pairs, "pairs", tuple, min_len=0, what="(query, document) tuple")
    for i, pair in enumerate(pairs):
        if len(pair) != 2 or not all(isinstance(text, str) for text in pair):
            raise ValueError(f"pairs[{i}] must be a (query, document) pair of strings")
    out: dict[str, list] = {"label": [], "branch": [], "grades": [], "unusable": []}
    first = check_scalar(aggregate.get("first", 4), "first", "int", low=1)
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
