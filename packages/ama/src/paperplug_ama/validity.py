"""Validity constraints on attack metadata (AMA: metadata stay syntactically and semantically
valid): a snake_case name, a bounded description, no n-gram copied from the user queries."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from paperplug.checks import check_scalar, check_type
from paperplug_ama.arguments import check_texts

NAME_PATTERN = re.compile(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$")
MAX_NAME_CHARS = 64  # OpenAI's limit on function names
MAX_WORDS = 60
NGRAM = 5
_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def words(text: str) -> list[str]:
    """Lower-cased word tokens (letters, digits, inner apostrophes)."""
    return _WORD.findall(text.lower())


def ngrams(text: str, n: int) -> set[tuple[str, ...]]:
    """The set of word n-grams of `text`."""
    tokens = words(text)
    return {tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)}


def copied_ngrams(description: str, queries: Iterable[str], n: int = NGRAM) -> set[tuple[str, ...]]:
    """Word n-grams of `description` that also occur in any query (copying wins retrieval trivially)."""
    check_type(description, "description", str)
    queries = check_texts(queries, "queries")
    check_scalar(n, "n", "int", low=1)
    seen: set[tuple[str, ...]] = set()
    for q in queries:
        seen |= ngrams(q, n)
    return ngrams(description, n) & seen


def check_metadata(
    tool: Mapping[str, Any],
    queries: Iterable[str] = (),
    *,
    existing_names: Iterable[str] = (),
    max_words: int = MAX_WORDS,
    ngram: int = NGRAM,
) -> list[str]:
    """Every violated constraint, as a sentence; an empty list means the metadata are valid."""
    check_type(tool, "tool", Mapping, what="a tool mapping")
    queries = check_texts(queries, "queries")
    existing_names = check_texts(existing_names, "existing_names")
    check_scalar(max_words, "max_words", "int", low=1)
    check_scalar(ngram, "ngram", "int", low=1)
    problems = []
    name, description = tool.get("name"), tool.get("description")
    if not isinstance(name, str) or not NAME_PATTERN.match(name):
        problems.append(f"name {name!r} is not snake_case ([a-z][a-z0-9_]*)")
    elif len(name) > MAX_NAME_CHARS:
        problems.append(f"name has {len(name)} characters, more than {MAX_NAME_CHARS}")
    elif name in set(existing_names):
        problems.append(f"name {name!r} impersonates an existing tool")
    if not isinstance(description, str) or not words(description):
        problems.append("description is empty")
    else:
        n_words = len(description.split())
        if n_words > max_words:
            problems.append(f"description has {n_words} words, more than {max_words}")
        copied = copied_ngrams(description, queries, ngram)
        if copied:
            shown = ", ".join(sorted(" ".join(g) for g in copied)[:3])
            problems.append(f"description copies {len(copied)} {ngram}-gram(s) of a query: {shown}")
    params = tool.get("parameters")
    if params is not None and (not isinstance(params, Mapping) or params.get("type") != "object"):
        problems.append("parameters must be a JSON schema of type 'object'")
    return problems


def is_valid(tool: Mapping[str, Any], queries: Iterable[str] = (), **kw: Any) -> bool:
    """True when `check_metadata` finds nothing wrong."""
    return not check_metadata(tool, queries, **kw)
