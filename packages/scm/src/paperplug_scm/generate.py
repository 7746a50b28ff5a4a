"""`monitored_generate` (paper §4.3 in deployment): stream from any ChatModel through the
monitor and cut the stream as soon as the monitor says stop."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

from paperplug import stream_chat
from paperplug.checks import check_type
from paperplug_scm.streaming import Decision, StreamingMonitor, prompt_of


@dataclass
class MonitoredGeneration:
    """What the user saw (`text`: the reply up to the last point judged and passed; a word is
    shown once the monitor has judged it), whether it was stopped, the monitor's last
    decision, and the raw `chunks` the model streamed."""

    text: str
    stopped: bool
    decision: Decision
    chunks: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "stopped": self.stopped,
            "decision": self.decision.to_dict(),
            "chunks": list(self.chunks),
        }


def monitored_generate(
    chat_model: Any,
    monitor: StreamingMonitor,
    prompt: str | Sequence[dict[str, Any]],
    *,
    conversation_id: Hashable = None,
    **kw: Any,
) -> MonitoredGeneration:
    """Stream a reply to `prompt` (a user message or a message list) under `monitor`, in the
    monitor's session `conversation_id`.

    Keywords go to the chat model (max_tokens, temperature, ...). The generator is closed
    when the monitor stops, so the model produces no further tokens.
    """
    check_type(monitor, "monitor", StreamingMonitor)
    if isinstance(prompt, str):
        messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
    elif isinstance(prompt, Sequence) and all(isinstance(m, dict) for m in prompt):
        messages = [dict(m) for m in prompt]
    else:
        raise TypeError("prompt must be a str or a list of chat messages (dicts)")
    if not callable(getattr(chat_model, "chat", None)):
        raise TypeError(f"chat_model must have chat(messages) (ChatModel), got {type(chat_model)}")
    session = monitor.session(conversation_id).start(prompt_of({"messages": messages}))
    stream = stream_chat(chat_model, messages, **kw)
    chunks: list[str] = []
    shown = 0  # characters judged and passed: what a user is shown
    try:
        for chunk in stream:
            chunks.append(chunk)
            decision = session.push(chunk)
            if decision.stop:
                break
            shown = decision.judged
        else:
            decision = session.finish()
            shown = shown if decision.stop else len(session.text)
    finally:
        close = getattr(stream, "close", None)
        if callable(close):
            close()
    return MonitoredGeneration(session.text[:shown], decision.stop, decision, chunks)
