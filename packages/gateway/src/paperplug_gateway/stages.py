"""The guard's stages on the wire, for one request of one conversation.

- input: the request's messages (the input-stage defenses may sanitize them);
- tool, phase "result": each tool result that arrived since the model's last turn (where
  injections arrive); a sanitized result replaces the message's content, a blocked one is
  replaced by a notice;
- tool, phase "call": each tool call the model returns, with the request's tool schemas in the
  context (DRIFT plans from the user's query and those schemas); a blocked call is dropped;
- output: the reply's text, streamed chunk by chunk through `Guard.stream`'s logic
  (`GuardedStream.feed`/`finish`), so nothing reaches the client before it was checked.

Every check's context carries `conversation_id`, `messages`, `prompt` (the last user message),
`tools` and `state`, the request's view of the conversation's state (`paperplug.state`:
scoped by the client and the conversation, keyed by its history, in process or in Redis): a
stateful defense keeps its state there, never shared between clients. A state store that
fails fails the request closed (`StateError`, a 503). The output stage adds `reply_id` (the conversation's id and a fresh suffix): a
monitor that keeps per-stream state keys it by the reply, so two replies streamed at once in
one conversation never share it. These calls are synchronous; the app runs them in worker threads.
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from paperplug import Guard, GuardedStream, GuardVerdict
from paperplug.checks import check_sequence, check_type
from paperplug.state import ConversationState
from paperplug_gateway.audit import AuditLog
from paperplug_gateway.metrics import Metrics


def text_of(content: Any) -> str:
    """A message's text: a string, or the text parts of a content list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, Mapping))
    return "" if content is None else str(content)


@dataclass
class Conversation:
    """One request's conversation: its id (the client's header, or the digest of its first
    system and user messages, scoped by the client's key), messages and tool schemas."""

    id: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] = field(default_factory=list)
    state: ConversationState | None = None

    @property
    def prompt(self) -> str:
        users = [m for m in self.messages if m.get("role") == "user"]
        return text_of(users[-1].get("content")) if users else ""

    def context(self, **extra: Any) -> dict[str, Any]:
        return {
            "conversation_id": self.id,
            "messages": self.messages,
            "prompt": self.prompt,
            "tools": self.tools,
            "state": self.state,
            **extra,
        }


def conversation_id(client: str, header: str | None, messages: Sequence[Mapping[str, Any]]) -> str:
    """The conversation's key: the client's own id (header) or its opening messages, always
    scoped by the client, so two clients never share a defense's state."""
    if not isinstance(client, str) or not client:
        raise TypeError(f"client must be a non-empty string, got {client!r}"[:200])
    check_type(header, "header", (str, type(None)), what="a string or None")
    check_sequence(messages, "messages", Mapping, what="a list of message objects")
    if header:
        return f"{client}:h:{header[:200]}"
    opening = [m for m in messages if m.get("role") in ("system", "developer")][:1]
    opening += [m for m in messages if m.get("role") == "user"][:1]
    digest = hashlib.sha256(json.dumps(opening, sort_keys=True, default=str).encode()).hexdigest()
    return f"{client}:m:{digest[:24]}"


def new_tool_results(messages: Sequence[Mapping[str, Any]]) -> list[int]:
    """Indices of the tool messages after the model's last turn: the results it has not seen."""
    last_assistant = max(
        (i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=-1
    )
    return [i for i, m in enumerate(messages) if i > last_assistant and m.get("role") == "tool"]


def _tool_name(messages: Sequence[Mapping[str, Any]], call_id: str | None) -> str:
    for m in messages:
        for call in m.get("tool_calls") or ():
            if call.get("id") == call_id:
                return call.get("function", {}).get("name", "")
    return ""


class Stages:
    """The guard, the audit log and the metrics, applied to requests and replies."""

    def __init__(self, guard: Guard, audit: AuditLog, metrics: Metrics, refusal: str) -> None:
        self.guard, self.audit, self.metrics, self.refusal = guard, audit, metrics, refusal
        self.stages = set(guard.stages())

    def _check(self, payload: Any, stage: str, conv: Conversation, **extra: Any) -> GuardVerdict:
        start = time.perf_counter()
        verdict = self.guard.check(payload, stage=stage, context=conv.context(**extra))
        self.metrics.defense_time.labels(stage).observe(time.perf_counter() - start)
        self.note(verdict, stage, conv, payload)
        return verdict

    def note(
        self,
        verdict: GuardVerdict,
        stage: str,
        conv: Conversation,
        payload: Any,
        *,
        blocking_only: bool = False,
    ) -> None:
        """Audit a verdict and count its blocks."""
        for defense, v in verdict.verdicts:
            if not v.valid:
                self.metrics.blocked.labels(defense, stage).inc()
        self.audit.record(conv.id, stage, verdict, text=payload, blocking_only=blocking_only)

    def refusal_text(self, verdict: GuardVerdict | None) -> str:
        """The refusal the client reads, naming the defenses that blocked (their reasons go
        to the audit log only)."""
        names = [n for n, v in verdict.verdicts if not v.valid] if verdict is not None else []
        return f"{self.refusal} [blocked by {', '.join(names)}]" if names else self.refusal

    def admit(self, conv: Conversation) -> str | None:
        """Run the input stage and the new tool results through the guard, sanitizing
        `conv.messages` in place of the request's; the refusal when the request is refused."""
        if "input" in self.stages:
            verdict = self._check(conv.messages, "input", conv, phase="request")
            if not verdict.valid:
                return self.refusal_text(verdict)
            if not isinstance(verdict.payload, list) or not all(
                isinstance(m, Mapping) for m in verdict.payload
            ):
                return f"{self.refusal} [an input-stage defense returned something other than messages]"
            conv.messages = [dict(m) for m in verdict.payload]
        if "tool" in self.stages:
            for i in new_tool_results(conv.messages):
                message = conv.messages[i]
                name = _tool_name(conv.messages, message.get("tool_call_id"))
                verdict = self._check(
                    text_of(message.get("content")), "tool", conv, phase="result", tool=name
                )
                if verdict.valid:
                    payload = verdict.payload
                    content = (
                        payload if isinstance(payload, str) else json.dumps(payload, default=str)
                    )
                else:
                    content = f"[blocked result of {name or 'a tool'}: {verdict.reason}]"
                conv.messages[i] = {**message, "content": content}
        return None

    def check_calls(
        self, calls: Sequence[Mapping[str, Any]], conv: Conversation
    ) -> tuple[list[dict[str, Any]], list[str]]:
        """(the tool calls the guard lets through, possibly sanitized; the reasons of the
        blocked ones). Arguments that are not JSON are blocked."""
        if "tool" not in self.stages:
            return [dict(c) for c in calls], []
        kept, reasons = [], []
        for call in calls:
            function = call.get("function", {})
            name = function.get("name", "")
            try:
                arguments = json.loads(function.get("arguments") or "{}")
            except ValueError:
                reasons.append(f"[blocked call to {name}: its arguments are not JSON]")
                continue
            verdict = self._check(
                {"name": name, "arguments": arguments}, "tool", conv, phase="call", tool=name
            )
            if not verdict.valid:
                reasons.append(f"[blocked call to {name}: {verdict.reason}]")
                continue
            sanitized = (
                verdict.payload.get("arguments", arguments)
                if isinstance(verdict.payload, Mapping)
                else arguments
            )
            kept.append({**call, "function": {**function, "arguments": json.dumps(sanitized)}})
        return kept, reasons

    def output_monitor(self, conv: Conversation) -> GuardedStream | None:
        """The output stage over this reply's stream (None when no output defense is set)."""
        if "output" not in self.stages:
            return None
        # the reply's own id: concurrent replies in one conversation (identical requests from
        # one key) never feed one stateful monitor each other's chunks
        reply = f"{conv.id}:reply:{uuid.uuid4().hex[:16]}"
        return self.guard.stream((), context=conv.context(reply_id=reply))

    def check_text(self, text: str, conv: Conversation) -> tuple[str, bool]:
        """A whole (non-streamed) reply through the output stage: (the text to send, stopped)."""
        monitor = self.output_monitor(conv)
        if monitor is None:
            return text, False
        start = time.perf_counter()
        monitor.feed(text)
        monitor.finish()
        self.metrics.defense_time.labels("output").observe(time.perf_counter() - start)
        if monitor.verdict is not None:
            self.note(monitor.verdict, "output", conv, text)
        if monitor.stopped_at is not None:
            return self.refusal_text(monitor.verdict), True
        return monitor.text, False
