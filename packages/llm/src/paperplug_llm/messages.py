"""Chat messages and the completion every backend returns (OpenAI's chat-completions shape)."""

from __future__ import annotations

import json
from collections.abc import Generator, Iterator, Mapping, Sequence
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


class ReplyStream:
    """A streamed reply: iterating yields the text as it comes; afterwards `completion` holds
    the whole reply (finish reason, usage, tool calls), as the backend reported it.

    Wraps a generator that yields text deltas and returns the Completion."""

    def __init__(self, deltas: Generator[str, None, Completion]) -> None:
        self._deltas = deltas
        self.completion: Completion | None = None

    def __iter__(self) -> Iterator[str]:
        self.completion = yield from self._deltas

    def close(self) -> None:
        """Stop the backend early (the reader went away)."""
        self._deltas.close()


def _text_of(content: Any, where: str) -> str | None:
    """Message content as a string: a string, None, or a list of text parts joined by newlines
    (OpenAI's content-part form, as vLLM joins them); other part types are refused."""
    if content is None or isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise TypeError(
            f"{where} must be a string or a list of text parts, got {type(content).__name__}"
        )
    texts = []
    for j, part in enumerate(content):
        if not isinstance(part, Mapping) or part.get("type") != "text":
            kind = part.get("type") if isinstance(part, Mapping) else type(part).__name__
            raise ValueError(f"{where}[{j}] is a {kind!r} part; only text parts are supported")
        if not isinstance(part.get("text"), str):
            raise TypeError(f"{where}[{j}]['text'] must be a string")
        texts.append(part["text"])
    return "\n".join(texts)


def check_tool_calls(calls: Any, where: str) -> None:
    """An assistant message's `tool_calls`: OpenAI's {id, type: function, function: {name,
    arguments}} entries (arguments a JSON string, or an object)."""
    if not isinstance(calls, list):
        raise TypeError(f"{where} must be a list, got {type(calls).__name__}")
    for j, call in enumerate(calls):
        fn = call.get("function") if isinstance(call, Mapping) else None
        if not isinstance(fn, Mapping) or not isinstance(fn.get("name"), str) or not fn["name"]:
            raise ValueError(f"{where}[{j}] needs function.name (a non-empty string)")
        if call.get("type", "function") != "function":
            raise ValueError(f"{where}[{j}].type must be 'function', got {call.get('type')!r}")
        if not isinstance(fn.get("arguments", "{}"), (str, Mapping)):
            raise TypeError(f"{where}[{j}].function.arguments must be a JSON string")


def check_messages(messages: Any) -> list[dict[str, Any]]:
    """Validate a conversation and return a normalised copy (the caller's list is untouched):
    content given as a list of text parts becomes one string, and the `developer` role (the
    system role of OpenAI's newer models) becomes `system`."""
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
        role = m.get("role")
        if role not in (*ROLES, "developer"):
            raise ValueError(
                f"messages[{i}]['role'] must be one of {(*ROLES, 'developer')}, got {role!r}"
            )
        content = _text_of(m.get("content"), f"messages[{i}]['content']")
        if m.get("tool_calls") is not None:
            if role != "assistant":
                raise ValueError(f"messages[{i}] has tool_calls but role {role!r}")
            check_tool_calls(m["tool_calls"], f"messages[{i}]['tool_calls']")
        if content is None and not m.get("tool_calls"):
            raise ValueError(f"messages[{i}] has no 'content'")
        copy = json.loads(json.dumps(dict(m)))  # deep copy of JSON data
        copy["role"] = "system" if role == "developer" else role
        copy["content"] = content
        out.append(copy)
    return out


def check_tools(tools: Any, name: str = "tools") -> list[dict[str, Any]] | None:
    """OpenAI `tools`: a list of {type: function, function: {name, description?, parameters?}};
    `name` is the argument's name in the messages."""
    if tools is None:
        return None
    if not isinstance(tools, list):
        raise TypeError(f"{name} must be a list, got {type(tools).__name__}")
    for j, t in enumerate(tools):
        fn = t.get("function") if isinstance(t, Mapping) else None
        if not isinstance(t, Mapping) or t.get("type") != "function" or not isinstance(fn, Mapping):
            raise ValueError(f"{name}[{j}] must be {{'type': 'function', 'function': {{...}}}}")
        if not isinstance(fn.get("name"), str) or not fn["name"]:
            raise ValueError(f"{name}[{j}].function.name must be a non-empty string")
        if not isinstance(fn.get("parameters", {}), Mapping):
            raise TypeError(f"{name}[{j}].function.parameters must be a JSON schema object")
    return list(tools)


def check_tool_choice(
    choice: Any, tools: list[dict[str, Any]] | None, name: str = "tool_choice"
) -> None:
    """ "none" | "auto" | "required" | {type: function, function: {name}} naming a given tool;
    `name` is the argument's name in the messages."""
    if choice is None or choice in ("none", "auto"):
        return
    if choice == "required":
        if not tools:
            raise ValueError(f"{name} 'required' needs tools")
        return
    if isinstance(choice, Mapping):
        fn = (
            (choice.get("function") or {}).get("name") if choice.get("type") == "function" else None
        )
        names = [t["function"]["name"] for t in tools or []]
        if not isinstance(fn, str):
            raise ValueError(
                f"{name} must name a function: {{'type': 'function', 'function': {{'name': ...}}}}"
            )
        if fn not in names:
            raise ValueError(f"{name} names {fn!r}, which is not among the tools {names}")
        return
    raise ValueError(
        f"{name} must be 'none', 'auto', 'required' or a named function, got {choice!r}"
    )
