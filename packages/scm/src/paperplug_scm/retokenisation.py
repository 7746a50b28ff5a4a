"""Re-tokenising streamed text with SCM's own tokenizer (paper §4.3, deployment).

The watched LLM's text arrives in arbitrary pieces. The monitor judges it up to the start of
the last whitespace run (the trailing word may still grow) and keeps the token ids of that
judged prefix up to date incrementally: each time the prefix grows, only the text from one
word boundary back is re-tokenised, and the ids that changed there (a merge across the
boundary) are reported so the KV cache rolls back over them alone. This is exact for
tokenizers whose pieces never cross two whitespace boundaries and that tokenise a segment
starting at a boundary as they would in context (word-level, WordPiece, byte-level BPE with
GPT-2, Qwen2 or Llama-3 pre-tokenisation, Metaspace): `tail_retokenisation_is_exact`
checks a tokenizer on a probe text, and the monitor re-tokenises the whole prefix where it
fails.
"""

from __future__ import annotations

from typing import Any

from paperplug.checks import check_choice, check_scalar, check_type

MODES = ("tail", "full")

# Spaces, blank lines, tabs, punctuation before a line break, digits, contractions,
# indentation, accents and text without spaces: where tokenizers merge or split differently.
PROBE = (
    "Hello, world.\n\nIt's 12345 dollars -- ok?  Yes:\tno\n- item one\n  indented (x=1); done.\n"
    "Café naïve résumé 東京タワー end!!  \n\n\nLast"
)


def check_tokenizer(tokenizer: Any) -> Any:
    """A Hugging Face tokenizer: callable on text, with `decode`."""
    if not callable(tokenizer) or not callable(getattr(tokenizer, "decode", None)):
        raise TypeError(
            f"tokenizer must be a Hugging Face tokenizer, got {type(tokenizer).__name__}"
        )
    return tokenizer


def hold_back(text: str, judged: int, max_hold: int | None) -> tuple[int, bool]:
    """How far `text` can be judged now, given that `text[:judged]` already is: (end,
    at_boundary). The end is the start of the last whitespace run, since the word after it
    may still grow; or all of `text`, when more than `max_hold` characters would wait."""
    check_type(text, "text", str)
    check_scalar(judged, "judged", "int", low=0, high=len(text))
    check_scalar(max_hold, "max_hold", "int", low=0, allow_none=True)
    end = len(text)
    while end > judged and not text[end - 1].isspace():  # the trailing word
        end -= 1
    while end > judged and text[end - 1].isspace():  # the whitespace run before it
        end -= 1
    if max_hold is not None and len(text) - end > max_hold:
        return len(text), False
    return end, end > judged


class IncrementalTokens:
    """Token ids of `text[:end]` as `end` grows, re-tokenising a bounded tail (mode "tail")
    or the whole prefix (mode "full")."""

    def __init__(self, tokenizer: Any, mode: str = "tail") -> None:
        self.tokenizer, self.mode = check_tokenizer(tokenizer), check_choice(mode, "mode", MODES)
        self.ids: list[int] = []
        self.end = 0
        self._bounds: list[tuple[int, int]] = []  # (boundary char, ids before it), the last few

    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"]) if text else []

    def update(self, text: str, end: int, boundary: bool) -> tuple[int, list[int]]:
        """Advance to the ids of `text[:end]` (`boundary`: `end` starts a whitespace run).

        Returns (keep, new): the first `keep` ids are unchanged and `new` follows them."""
        check_type(text, "text", str)
        check_type(boundary, "boundary", bool)
        if check_scalar(end, "end", "int", low=0, high=len(text)) < self.end:
            raise ValueError(f"end: the judged text only grows: end {end} < {self.end}")
        start, before = (0, 0)
        if self.mode == "tail":  # the boundary one word back, so a merge across the last is seen
            start, before = ([b for b in self._bounds if b[0] < self.end] or [(0, 0)])[-1]
        tail = self.encode(text[start:end])
        same = 0
        for a, b in zip(tail, self.ids[before:], strict=False):
            if a != b:
                break
            same += 1
        keep = before + same
        if keep < len(self.ids):  # a token ran across the previous end: it is no boundary now
            self._bounds = [b for b in self._bounds if b[0] <= start]
        self.ids[keep:] = tail[same:]
        self.end = end
        if boundary and self.mode == "tail":
            self._bounds = [*self._bounds[-2:], (end, len(self.ids))]
        return keep, tail[same:]


def tail_retokenisation_is_exact(tokenizer: Any, text: str = PROBE) -> bool:
    """Whether tail re-tokenisation gives the ids of a full pass at every step on `text`
    streamed character by character, with and without forced commits (`max_hold`)."""
    check_tokenizer(tokenizer)
    check_type(text, "text", str)
    for max_hold in (None, 3):
        inc = IncrementalTokens(tokenizer, "tail")
        for n in range(1, len(text) + 1):
            end, boundary = hold_back(text[:n], inc.end, max_hold)
            if end > inc.end:
                inc.update(text[:n], end, boundary)
                if inc.ids != inc.encode(text[:end]):
                    return False
        inc.update(text, len(text), False)
        if inc.ids != inc.encode(text):
            return False
    return True
