"""A ChatModel that replies from a script: for tests of code that drives a chat model."""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping, Sequence
from typing import Any

from paperplug.checks import check_type
from paperplug_llm.messages import Completion, ReplyStream, check_messages
from paperplug_llm.tool_calls import parse_tool_calls


class ScriptedChatModel:
    """Replies in turn from a list (strings or Completions), or from `fn(messages, **kw)`.

    A reply holding `<tool_call>{...}</tool_call>` comes back as a tool call when the request
    carries `tools`, as a local model's would. Every request is kept in `calls`.
    """

    def __init__(
        self, replies: Sequence[str | Completion] | Callable[..., str | Completion]
    ) -> None:
        if not callable(replies) and (
            isinstance(replies, str) or not isinstance(replies, Sequence)
        ):
            raise TypeError("replies must be a list of strings/Completions or a callable")
        if not callable(replies):
            for i, r in enumerate(replies):
                check_type(r, f"replies[{i}]", (str, Completion))
        self.replies = replies if callable(replies) else list(replies)
        self.calls: list[tuple[list[dict[str, Any]], dict[str, Any]]] = []

    def complete(self, messages: Sequence[Mapping[str, Any]], **kw: Any) -> Completion:
        """The next scripted reply."""
        messages = check_messages(messages)
        self.calls.append((messages, dict(kw)))
        if callable(self.replies):
            reply = self.replies(messages, **kw)
        else:
            index = len(self.calls) - 1
            if index >= len(self.replies):
                raise IndexError(
                    f"the script has {len(self.replies)} replies; request #{index + 1} has none"
                )
            reply = self.replies[index]
        if isinstance(reply, Completion):
            return reply
        if not isinstance(reply, str):
            raise TypeError(
                f"a scripted reply must be str or Completion, got {type(reply).__name__}"
            )
        if kw.get("tools"):
            text, calls = parse_tool_calls(reply)
            if calls:
                return Completion(text=text, tool_calls=calls, finish_reason="tool_calls")
        return Completion(text=reply)

    def chat(self, messages: Sequence[Mapping[str, Any]], **kw: Any) -> str:
        """The next scripted reply's text."""
        return self.complete(messages, **kw).text

    def stream(self, messages: Sequence[Mapping[str, Any]], **kw: Any) -> ReplyStream:
        """The next scripted reply, word by word (spaces kept, so the pieces join back exactly);
        `.completion` holds the whole reply afterwards."""
        return ReplyStream(self._words(self.complete(messages, **kw)))

    @staticmethod
    def _words(done: Completion) -> Generator[str, None, Completion]:
        text, start = done.text, 0
        for i, ch in enumerate(text):
            if ch == " " and i > start:
                yield text[start:i]
                start = i
        if start < len(text):
            yield text[start:]
        return done
