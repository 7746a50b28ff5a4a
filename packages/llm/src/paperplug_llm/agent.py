"""A small tool-using agent loop: the model proposes a call, the arguments are validated, the
tool runs, its result is appended, until the model answers without a call.

With a `paperplug.Guard`, every proposed call and every result passes through
`guard.check(..., stage="tool")` with the context GuardedChatModel gives: phase "call" /
"result", the tool's name, the conversation so far (`messages`) and the user's `prompt`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from paperplug.checks import check_scalar, check_sequence, check_type
from paperplug_llm.messages import (
    Completion,
    ToolCall,
    check_messages,
    check_tool_choice,
    check_tools,
)
from paperplug_llm.tool_calls import parse_tool_calls, render_for_template
from paperplug_llm.tools import Tool, ToolArgumentError, as_tools


@dataclass
class ToolRun:
    """One proposed call and what came of it: a result, or an error / a guard's block."""

    name: str
    arguments: Any
    result: Any = None
    error: str | None = None
    blocked: bool = False

    @property
    def content(self) -> str:
        """The tool message's content the model reads next."""
        if self.error is not None:
            return f"error: {self.error}"
        return self.result if isinstance(self.result, str) else json.dumps(self.result, default=str)


@dataclass
class AgentResult:
    """The final answer, the whole conversation, every tool run, and why the loop ended."""

    text: str
    messages: list[dict[str, Any]]
    tool_runs: list[ToolRun] = field(default_factory=list)
    steps: int = 0
    finish_reason: str = "stop"  # "stop" (answered) or "max_steps"


def propose(
    model: Any, messages: list[dict[str, Any]], specs: list[dict[str, Any]], **kw: Any
) -> Completion:
    """Ask the model for its next turn: `complete(tools=...)` when it has it, else plain `chat`
    on a conversation rendered with the tool prompt, parsing `<tool_call>` blocks from the text."""
    if not callable(getattr(model, "complete", None)) and not callable(
        getattr(model, "chat", None)
    ):
        raise TypeError(f"model must have chat or complete, got {type(model).__name__}")
    if specs is None:
        raise TypeError("specs must be a list of OpenAI tools entries, got None")
    specs = check_tools(specs, "specs")
    if callable(getattr(model, "complete", None)):
        reply = model.complete(messages, tools=specs, **kw)
        return Completion(text=reply) if isinstance(reply, str) else reply  # a guard's refusal
    kw.pop("tool_choice", None)  # a plain ChatModel cannot be forced; it is asked in the prompt
    text, calls = parse_tool_calls(model.chat(render_for_template(messages, specs), **kw))
    return Completion(text=text, tool_calls=calls, finish_reason="tool_calls" if calls else "stop")


def _user_prompt(messages: Sequence[Mapping[str, Any]]) -> str:
    users = [m.get("content") or "" for m in messages if m.get("role") == "user"]
    return users[-1] if users else ""


def _check_guard(guard: Any) -> None:
    if guard is not None and not callable(getattr(guard, "check", None)):
        raise TypeError(f"guard must have check(payload, stage=...), got {type(guard).__name__}")


def execute_call(
    call: ToolCall,
    tools: Mapping[str, Tool],
    guard: Any = None,
    messages: Sequence[Mapping[str, Any]] = (),
) -> ToolRun:
    """Guard the call, validate its arguments against the tool's schema, run it, guard the
    result; `messages` (the conversation so far) goes into every guard check's context."""
    check_type(call, "call", ToolCall)
    check_type(tools, "tools", Mapping, what="a {name: Tool} mapping (see as_tools)")
    _check_guard(guard)
    messages = check_sequence(messages, "messages", Mapping, min_len=0, what="message dicts")
    run = ToolRun(call.name, call.arguments)
    context = {"tool": call.name, "messages": list(messages), "prompt": _user_prompt(messages)}
    if call.name not in tools:
        run.error = f"unknown tool {call.name!r}; available: {sorted(tools)}"
        return run
    arguments = call.arguments
    if guard is not None:
        verdict = guard.check(
            {"name": call.name, "arguments": arguments},
            stage="tool",
            context={**context, "phase": "call"},
        )
        if not verdict.valid:
            run.blocked, run.error = True, f"blocked call to {call.name}: {verdict.reason}"
            return run
        arguments = verdict.payload["arguments"]
    try:
        arguments = tools[call.name].validate(arguments)
    except ToolArgumentError as exc:
        run.error = f"invalid arguments: {exc}"
        return run
    try:
        result = tools[call.name].fn(**arguments)
    except Exception as exc:  # a failing tool is reported to the model, not raised
        run.error = f"{call.name} raised {type(exc).__name__}: {exc}"
        return run
    if guard is not None:
        verdict = guard.check(result, stage="tool", context={**context, "phase": "result"})
        if not verdict.valid:
            run.blocked, run.error = True, f"blocked result of {call.name}: {verdict.reason}"
            return run
        result = verdict.payload
    run.result = result
    return run


def run_agent(
    model: Any,
    messages: Sequence[Mapping[str, Any]],
    tools: Any,
    *,
    guard: Any = None,
    max_steps: int = 5,
    first_tool_choice: Any = None,
    **kw: Any,
) -> AgentResult:
    """Loop propose → validate → run → append for at most `max_steps` model turns.

    `tools`: callables or Tools (a list, or {name: callable}); `kw` goes to the model
    (max_tokens, temperature, seed, ...). `first_tool_choice` ("required" or a named
    function, OpenAI's tool_choice) forces a call on the first turn only, which small models
    need. The caller's messages are not modified.
    """
    max_steps = check_scalar(max_steps, "max_steps", "int", low=1)
    _check_guard(guard)
    table = as_tools(tools)
    if not table:
        raise ValueError("tools is empty: give at least one callable")
    specs = [t.spec() for t in table.values()]
    check_tool_choice(first_tool_choice, specs, "first_tool_choice")
    convo = check_messages(messages)
    runs: list[ToolRun] = []
    completion = Completion(text="")
    for step in range(1, max_steps + 1):
        choice = {"tool_choice": first_tool_choice} if step == 1 and first_tool_choice else {}
        completion = propose(model, convo, specs, **kw, **choice)
        convo.append(completion.message())
        if not completion.tool_calls:
            return AgentResult(completion.text, convo, runs, step, "stop")
        for i, call in enumerate(completion.tool_calls):
            run = execute_call(call, table, guard, convo)
            runs.append(run)
            convo.append(
                {
                    "role": "tool",
                    "tool_call_id": call.id or f"call_{i}",
                    "name": call.name,
                    "content": run.content,
                }
            )
    return AgentResult(completion.text, convo, runs, max_steps, "max_steps")
