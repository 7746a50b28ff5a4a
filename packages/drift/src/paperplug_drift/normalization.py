"""Unicode normalisation before injection detection: what a reader (or a model) reads, not the
code points an attacker chose. NFKC (full-width and mathematical letters, compatibility
spaces), invisible characters dropped (zero-width, bidirectional controls, soft hyphens, tag
characters, variation selectors), combining marks stripped, Cyrillic and Greek look-alikes
mapped to Latin, typographic quotes and dashes made plain, every space one " ", lower case.

`normalize_map` keeps, for each character of the normalised text, the index of the character
of the original it came from, so a detection on the normalised text cuts the original.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from paperplug.checks import check_type

# Cyrillic, Greek and other letters that render like Latin ones (after NFKC and lower case)
CONFUSABLES = str.maketrans(
    {
        "\u0430": "a", "\u0431": "b", "\u0432": "b", "\u0435": "e", "\u0451": "e", "\u043a": "k",
        "\u043c": "m", "\u043d": "h", "\u043e": "o", "\u0440": "p", "\u0441": "c", "\u0442": "t",
        "\u0443": "y", "\u0445": "x", "\u0456": "i", "\u0457": "i", "\u0458": "j", "\u0455": "s",
        "\u0501": "d", "\u051b": "q", "\u051d": "w", "\u04bb": "h", "\u04cf": "l", "\u0261": "g",
        "\u0269": "i", "\u03b1": "a", "\u03b2": "b", "\u03b5": "e", "\u03b9": "i", "\u03ba": "k",
        "\u03bd": "v", "\u03bf": "o", "\u03c1": "p", "\u03c4": "t", "\u03c5": "u", "\u03c7": "x",
        "\u03b7": "n", "\u03b6": "z", "\u0251": "a", "\u0131": "i", "\u0237": "j", "\u01c0": "l",
        "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'", "\u0060": "'",
        "\u00b4": "'", "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u2033": '"', "\u00ab": '"',
        "\u00bb": '"', "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-",
        "\u2015": "-", "\u2212": "-", "\u2043": "-",
    }
)  # fmt: skip
ZERO_WIDTH = frozenset("\u200b\u200c\u200d\u2060\ufeff\u180e")
LINE_BREAKS = frozenset("\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029")


def _invisible(char: str) -> bool:
    """Format characters (zero-width, bidi controls, soft hyphen, tags) and variation
    selectors: nothing a reader sees."""
    return unicodedata.category(char) == "Cf" or "\ufe00" <= char <= "\ufe0f" or char in ZERO_WIDTH


@dataclass(frozen=True)
class NormalizedText:
    """`text` normalised; `origin[k]` is the index in the original of `text[k]`, and
    `origin[len(text)]` is the original's length."""

    text: str
    origin: tuple[int, ...]

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The original span of the normalised span [start, end)."""
        if end <= start:
            return self.origin[start], self.origin[start]
        return self.origin[start], self.origin[end - 1] + 1


def _fold(char: str) -> str:
    """One original character as a reader reads it (possibly several characters, or none)."""
    out = []
    for c in unicodedata.normalize("NFKC", char):
        for d in unicodedata.normalize("NFD", c):
            if unicodedata.category(d) != "Mn":
                out.append(d)
    return "".join(out).translate(CONFUSABLES).casefold().translate(CONFUSABLES)


def normalize_map(text: str, *, zero_width_as_space: bool = False) -> NormalizedText:
    """`text` normalised with its origin map. Runs of spaces become one " ", runs holding a
    line break one "\\n" ("\\n\\n" for a blank line). `zero_width_as_space`: read zero-width
    characters as spaces (an attacker may glue words with them) instead of dropping them."""
    out: list[str] = []
    origin: list[int] = []
    pending, breaks, start = False, 0, 0  # a run of whitespace not yet written

    for i, char in enumerate(text):
        if zero_width_as_space and char in ZERO_WIDTH:
            char = " "
        if char in LINE_BREAKS or char.isspace():
            if not pending:
                pending, breaks, start = True, 0, i
            breaks += char in LINE_BREAKS and not (char == "\n" and i and text[i - 1] == "\r")
            continue
        if _invisible(char):
            continue
        folded = _fold(char)
        if not folded:
            continue
        if pending:
            if out:
                gap = "\n\n" if breaks >= 2 else "\n" if breaks else " "
                out.append(gap)
                origin.extend([start] * len(gap))
            pending = False
        for c in folded:
            if c.isspace():  # NFKC made a space (e.g. from U+00A0 before a combining mark)
                if out and out[-1] not in " \n":
                    out.append(" ")
                    origin.append(i)
                continue
            out.append(c)
            origin.append(i)
    origin.append(len(text))
    return NormalizedText("".join(out), tuple(origin))


def normalize(text: str, *, zero_width_as_space: bool = False) -> str:
    """`text` as a reader reads it, on one line (every run of whitespace one space)."""
    check_type(text, "text", str)
    check_type(zero_width_as_space, "zero_width_as_space", bool)
    flat = normalize_map(text, zero_width_as_space=zero_width_as_space).text
    return " ".join(flat.split())
