"""The upstream's replies read field by field, and the client's reply rebuilt from an
allow-list: the text and tool calls the defenses checked, and fields that carry no text (ids,
times, token counts). Whatever else an upstream sends (`reasoning_content`, `logprobs`, a
`function_call`, `refusal`, audio, a second choice) never reaches the client, and a reply or
chunk of the wrong shape is an `UpstreamError` (502), never a crash."""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from paperplug_gateway.upstream import UpstreamError

FINISH_REASONS = ("stop", "length", "tool_calls", "content_filter")
USAGE_KEYS = ("prompt_tokens", "completion_tokens", "total_tokens")


def _malformed(where: str, what: str = "reply") -> UpstreamError:
    kind = "a chat completion" if what == "reply" else "a chat completion chunk"
    return UpstreamError(502, f"the upstream's {what} is not {kind}: {where}", "malformed")


def _is(value: Any, kind: type | tuple[type, ...]) -> bool:
    return isinstance(value, kind) and not isinstance(value, bool)


@dataclass
class Meta:
    """The reply's id, creation time and model (fresh ones where the upstream's are not of
    the right type)."""

    id: str = field(default_factory=lambda: f"chatcmpl-{uuid.uuid4().hex[:24]}")
    created: int = field(default_factory=lambda: int(time.time()))
    model: str = ""

    @classmethod
    def of(cls, raw: Mapping[str, Any], model: str) -> Meta:
        meta = cls(model=model)
        if _is(raw.get("id"), str):
            meta.id = raw["id"][:200]
        if _is(raw.get("created"), int):
            meta.created = raw["created"]
        if _is(raw.get("model"), str):
            meta.model = raw["model"][:200]
        return meta

    def fields(self) -> dict[str, Any]:
        return {"id": self.id, "created": self.created, "model": self.model}


def usage_of(raw: Any) -> dict[str, int] | None:
    """The token counts of a `usage` object, nothing else of it."""
    if not isinstance(raw, Mapping):
        return None
    return {k: raw[k] if _is(raw.get(k), int) else 0 for k in USAGE_KEYS}


def finish_of(raw: Any) -> str | None:
    return raw if raw in FINISH_REASONS else ("stop" if raw is not None else None)


def _choice(raw: Any, what: str) -> Mapping[str, Any] | None:
    """The choice with index 0 of a reply or chunk (None where a chunk has none)."""
    choices = raw.get("choices")
    if not isinstance(choices, list):
        raise _malformed("choices", what)
    for i, choice in enumerate(choices):
        if not isinstance(choice, Mapping):
            raise _malformed(f"choices[{i}]", what)
        if choice.get("index", 0) == 0:
            return choice
    if what == "reply":
        raise _malformed("choices[0]", what)
    return None


def _call(raw: Any, where: str) -> dict[str, Any]:
    if not isinstance(raw, Mapping) or not isinstance(raw.get("function"), Mapping):
        raise _malformed(where)
    function = raw["function"]
    if not _is(function.get("name"), str) or not _is(function.get("arguments", ""), str):
        raise _malformed(f"{where}.function")
    call_id = raw.get("id")
    return {
        "id": call_id if _is(call_id, str) else f"call_{uuid.uuid4().hex[:16]}",
        "type": "function",
        "function": {"name": function["name"], "arguments": function.get("arguments", "")},
    }


@dataclass
class Reply:
    """A whole upstream reply, read: its meta, text, tool calls, finish reason and usage."""

    meta: Meta
    content: str
    calls: list[dict[str, Any]]
    finish: str
    usage: dict[str, int] | None


def parse_reply(raw: Any, model: str) -> Reply:
    """Read a non-streamed upstream reply; an `UpstreamError` (502) naming the bad field."""
    if not isinstance(raw, Mapping):
        raise _malformed("the body")
    choice = _choice(raw, "reply")
    message = choice.get("message")
    if not isinstance(message, Mapping):
        raise _malformed("choices[0].message")
    content = message.get("content")
    if content is not None and not _is(content, str):
        raise _malformed("choices[0].message.content")
    calls = message.get("tool_calls") or []
    if not isinstance(calls, list):
        raise _malformed("choices[0].message.tool_calls")
    calls = [_call(c, f"choices[0].message.tool_calls[{i}]") for i, c in enumerate(calls)]
    finish = finish_of(choice.get("finish_reason")) or ("tool_calls" if calls else "stop")
    return Reply(Meta.of(raw, model), content or "", calls, finish, usage_of(raw.get("usage")))


def completion(
    meta: Meta, content: str | None, calls: list[dict[str, Any]], finish: str, usage: Any
) -> dict[str, Any]:
    """The client's (non-streamed) reply, from checked parts only."""
    message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": None}
    if calls:
        message["tool_calls"] = calls
    choice = {"index": 0, "message": message, "logprobs": None, "finish_reason": finish}
    body = {**meta.fields(), "object": "chat.completion", "choices": [choice]}
    if usage is not None:
        body["usage"] = usage
    return body


@dataclass
class Delta:
    """One upstream chunk, read: the role, text and tool-call pieces of choice 0, its finish
    reason, and a usage object where the chunk carries one."""

    role: str | None = None
    content: str | None = None
    calls: list[Mapping[str, Any]] = field(default_factory=list)
    finish: str | None = None
    usage: dict[str, int] | None = None


def parse_chunk(raw: Mapping[str, Any]) -> Delta:
    """Read a streamed upstream chunk; an `UpstreamError` (502) naming the bad field."""
    out = Delta(usage=usage_of(raw.get("usage")))
    choice = _choice(raw, "chunk")
    if choice is None:
        return out
    delta = choice.get("delta", {})
    if not isinstance(delta, Mapping):
        raise _malformed("choices[0].delta", "chunk")
    for key in ("role", "content"):
        if delta.get(key) is not None and not _is(delta[key], str):
            raise _malformed(f"choices[0].delta.{key}", "chunk")
    calls = delta.get("tool_calls") or []
    if not isinstance(calls, list):
        raise _malformed("choices[0].delta.tool_calls", "chunk")
    for i, call in enumerate(calls):
        where = f"choices[0].delta.tool_calls[{i}]"
        function = call.get("function", {}) if isinstance(call, Mapping) else None
        if (
            not isinstance(function, Mapping)
            or not _is(call.get("index", 0), int)
            or any(function.get(k) is not None and not _is(function[k], str) for k in ("name", "arguments"))
            or (call.get("id") is not None and not _is(call["id"], str))
        ):  # fmt: skip
            raise _malformed(where, "chunk")
    out.role, out.content, out.calls = delta.get("role"), delta.get("content"), calls
    out.finish = finish_of(choice.get("finish_reason"))
    return out


def chunk(meta: Meta, delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    """A client chunk of choice 0."""
    choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
    return {**meta.fields(), "object": "chat.completion.chunk", "choices": [choice]}


def usage_chunk(meta: Meta, usage: dict[str, int]) -> dict[str, Any]:
    """The last chunk of a stream asked with `stream_options.include_usage`."""
    return {**meta.fields(), "object": "chat.completion.chunk", "choices": [], "usage": usage}
