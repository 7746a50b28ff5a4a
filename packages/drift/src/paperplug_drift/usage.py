"""What a DRIFT run cost and where it failed safe: LLM calls and tokens per stage, parse
failures per stage, refusals per reason. Every component takes an optional Usage to count into.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Usage:
    """Counters of one run (or many: `merge`)."""

    llm_calls: Counter = field(default_factory=Counter)
    prompt_tokens: Counter = field(default_factory=Counter)
    completion_tokens: Counter = field(default_factory=Counter)
    parse_failures: Counter = field(default_factory=Counter)
    refusals: Counter = field(default_factory=Counter)
    removed_instructions: int = 0

    @property
    def total_llm_calls(self) -> int:
        return sum(self.llm_calls.values())

    @property
    def total_tokens(self) -> int:
        return sum(self.prompt_tokens.values()) + sum(self.completion_tokens.values())

    def merge(self, other: Usage) -> Usage:
        """Add `other`'s counts into this one; returns self."""
        for name in ("llm_calls", "prompt_tokens", "completion_tokens", "parse_failures"):
            getattr(self, name).update(getattr(other, name))
        self.refusals.update(other.refusals)
        self.removed_instructions += other.removed_instructions
        return self

    def to_dict(self) -> dict[str, Any]:
        return {
            "llm_calls": dict(self.llm_calls),
            "prompt_tokens": dict(self.prompt_tokens),
            "completion_tokens": dict(self.completion_tokens),
            "parse_failures": dict(self.parse_failures),
            "refusals": dict(self.refusals),
            "removed_instructions": self.removed_instructions,
            "total_llm_calls": self.total_llm_calls,
            "total_tokens": self.total_tokens,
        }


def ask(
    model: Any,
    system: str,
    user: str,
    *,
    stage: str,
    usage: Usage | None,
    max_tokens: int = 512,
) -> str:
    """One system+user exchange with any ChatModel at temperature 0 (the paper's setting),
    counted in `usage` under `stage`. Tokens come from the backend's reported usage where it
    has `complete`; a model with only `chat` reports none (counted as 0)."""
    return converse(
        model,
        [{"role": "system", "content": system}, {"role": "user", "content": user}],
        stage=stage,
        usage=usage,
        max_tokens=max_tokens,
    )


def converse(
    model: Any,
    messages: Sequence[Mapping[str, Any]],
    *,
    stage: str,
    usage: Usage | None,
    max_tokens: int = 512,
) -> str:
    """A whole conversation to any ChatModel (temperature 0), counted under `stage`."""
    complete = getattr(model, "complete", None)
    kw = {"temperature": 0, "max_tokens": max_tokens}
    if callable(complete):
        reply = complete(list(messages), **kw)
        text = reply if isinstance(reply, str) else reply.text
        counts = {} if isinstance(reply, str) else dict(getattr(reply, "usage", {}) or {})
    else:
        text, counts = model.chat(list(messages), **kw), {}
    if usage is not None:
        usage.llm_calls[stage] += 1
        usage.prompt_tokens[stage] += int(counts.get("prompt_tokens", 0))
        usage.completion_tokens[stage] += int(counts.get("completion_tokens", 0))
    return text or ""
