"""Chat messages and the completion every backend returns (OpenAI's chat-completions shape)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

ROLES = ("system", "user", "assistant", "tool")


@dataclass
class ToolCall:
    """One call the model proposes: a tool name and its arguments (a dict once parsed)."""

    name: str
    arguments: dict[str, Any] | str
    id: str = ""

    def to_openai(self) -> dict[str, Any]:
        args = self.arguments if isinstance(self.arguments, str) else json.dumps(self.arguments)
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": args},
        }


@dataclass
class Completion:
    """A reply: text, proposed tool calls, why it stopped, token usage, optional per-token data."""

    text: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str = "stop"
    usage: dict[str, int] = field(default_factory=dict)
    tokens: list[str] | None = None  # generated tokens, where the backend exposes them
    token_ids: list[int] | None = None
    logprobs: list[float] | None = None  # log p(token | prefix) under the model, one per token

    def message(self) -> dict[str, Any]:
        """The assistant message to append to the conversation."""
        msg: dict[str, Any] = {"role": "assistant", "content": self.text}
        if self.tool_calls:
            msg["tool_calls"] = [c.to_openai() for c in self.tool_calls]
        return msg


def check_messages(messages: Any) -> list[dict[str, Any]]:
    """Validate a conversation and return a copy (the caller's list is never touched)."""
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence):
        raise TypeError(
            f"messages must be a list of {{'role', 'content'}} dicts, got {type(messages).__name__}"
        )
    if not messages:
        raise ValueError("messages is empty: give at least one message")
    out = []
    for i, m in enumerate(messages):
        if not isinstance(m, Mapping):
            raise TypeError(f"messages[{i}] must be a dict, got {type(m).__name__}")
        if m.get("role") not in ROLES:
            raise ValueError(f"messages[{i}]['role'] must be one of {ROLES}, got {m.get('role')!r}")
        content = m.get("content")
        if content is not None and not isinstance(content, str):
            raise TypeError(f"messages[{i}]['content'] must be a str, got {type(content).__name__}")
        if content is None and not m.get("tool_calls"):
            raise ValueError(f"messages[{i}] has no 'content'")
        out.append(json.loads(json.dumps(dict(m))))  # deep copy of JSON data
    return out
