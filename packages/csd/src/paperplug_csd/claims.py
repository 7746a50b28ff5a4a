"""Claim segmentation of a stream (C-SafeGen §3): a claim ends at a sentence boundary once it
has at least `min_tokens` tokens, or after `max_claim_tokens` tokens, or at the end of the reply.

The decoder asks `ends_claim(text, n_tokens)` after every generated token, so a boundary is
seen as soon as the token that closes the sentence arrives (no look-ahead for the space after
the full stop); `split_claims` cuts a finished text the same way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from paperplug.checks import check_callable, check_scalar, check_sequence, check_type

# A full stop, exclamation or question mark (optionally followed by closing quotes or brackets)
# at the end of the text; a newline at the end also closes a claim.
_SENTENCE_END = re.compile(r"[.!?][\"')\]]*\s*$")


@dataclass(frozen=True)
class ClaimSegmenter:
    """Where claims end: sentence boundaries (`[.!?]` then space or end, or a newline) once a
    claim has `min_tokens` tokens, else at `max_claim_tokens` (notes §3: min 5 tokens)."""

    min_tokens: int = 5
    max_claim_tokens: int = 64

    def __post_init__(self) -> None:
        for name in ("min_tokens", "max_claim_tokens"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be an int >= 1, got {value!r}")
        if self.min_tokens > self.max_claim_tokens:
            raise ValueError(
                f"min_tokens ({self.min_tokens}) must not exceed max_claim_tokens "
                f"({self.max_claim_tokens})"
            )

    def ends_claim(self, text: str, n_tokens: int) -> bool:
        """Does the claim `text` (of `n_tokens` tokens) end here?"""
        check_type(text, "text", str)
        check_scalar(n_tokens, "n_tokens", "int", low=0)
        if n_tokens >= self.max_claim_tokens:
            return True
        if n_tokens < self.min_tokens or not text.strip():
            return False
        return bool(_SENTENCE_END.search(text)) or text.rstrip(" \t").endswith("\n")

    def split_claims(self, text: str, tokenize: Any = str.split) -> list[str]:
        """Cut a finished text into claims (the pieces join back to `text`); `tokenize`
        counts tokens (whitespace words by default, a tokenizer's `encode` for token counts)."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        check_callable(tokenize, "tokenize", what="function counting a text's tokens")
        claims: list[str] = []
        start = 0
        for m in re.finditer(r"\S+\s*", text):
            piece = text[start : m.end()]
            if self.ends_claim(piece, len(tokenize(piece))):
                claims.append(piece)
                start = m.end()
        if start < len(text):
            claims.append(text[start:])
        return claims


@dataclass
class Claim:
    """One drawn claim: its text, its token ids (where the generator has tokens), and whether
    the reply ends after it (`end`: end of sequence or the reply's token limit)."""

    text: str
    token_ids: list[int] = field(default_factory=list)
    end: bool = False

    def __post_init__(self) -> None:
        check_type(self.text, "text", str)
        ids = check_sequence(self.token_ids, "token_ids", min_len=0, what="token ids")
        for i, t in enumerate(ids):
            check_scalar(t, f"token_ids[{i}]", "int", low=0)
        check_type(self.end, "end", bool)

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "token_ids": list(self.token_ids), "end": self.end}
