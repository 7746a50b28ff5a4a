"""The agent loop: propose, validate, run, append; through a Guard and over the loopback server."""

import pytest
from paperplug_llm import (
    ChatServer,
    Completion,
    OpenAIChatModel,
    ScriptedChatModel,
    ToolCall,
    run_agent,
)

from paperplug import Verdict, compose

CALL = '<tool_call>{"name": "add", "arguments": {"a": 2, "b": 3}}</tool_call>'
BAD = '<tool_call>{"name": "add", "arguments": {"a": "2", "b": 3}}</tool_call>'


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def test_round_trip_appends_call_and_result():
    model = ScriptedChatModel([CALL, "It is 5."])
    msgs = [{"role": "user", "content": "2+3?"}]
    result = run_agent(model, msgs, [add])
    assert result.text == "It is 5." and result.steps == 2 and result.finish_reason == "stop"
    assert [r.result for r in result.tool_runs] == [5]
    assert [m["role"] for m in result.messages] == ["user", "assistant", "tool", "assistant"]
    assert result.messages[2]["content"] == "5" and msgs == [{"role": "user", "content": "2+3?"}]
    assert model.calls[0][1]["tools"][0]["function"]["name"] == "add"


def test_wrong_type_is_rejected_and_reported_to_the_model():
    model = ScriptedChatModel([BAD, "sorry"])
    result = run_agent(model, [{"role": "user", "content": "2+3?"}], [add])
    run = result.tool_runs[0]
    assert run.result is None and "a: '2' is not of type 'integer'" in run.error
    assert result.messages[2]["content"].startswith("error: invalid arguments")


def test_unknown_tool_failing_tool_and_step_limit():
    model = ScriptedChatModel(
        [
            Completion("", [ToolCall("nope", {})]),
            Completion("", [ToolCall("div", {"a": 1, "b": 0})]),
            CALL,
        ]
    )

    def div(a: int, b: int) -> float:
        return a / b

    result = run_agent(model, [{"role": "user", "content": "x"}], [add, div], max_steps=3)
    assert "unknown tool 'nope'" in result.tool_runs[0].error
    assert "ZeroDivisionError" in result.tool_runs[1].error
    assert result.finish_reason == "max_steps" and result.tool_runs[2].result == 5
    with pytest.raises(ValueError, match="max_steps"):
        run_agent(model, [{"role": "user", "content": "x"}], [add], max_steps=0)


class NoBigNumbers:
    """A tool-stage defense: blocks calls with an argument over 100, redacts results."""

    stage = "tool"

    def check(self, payload, context=None):
        if context["phase"] == "call":
            ok = all(v <= 100 for v in payload["arguments"].values())
            return Verdict(payload, ok, 0.0 if ok else 1.0, "" if ok else "too big")
        return Verdict(f"[{payload}]", True)


def test_guard_sees_calls_and_results():
    guard = compose(NoBigNumbers())
    big = '<tool_call>{"name": "add", "arguments": {"a": 200, "b": 3}}</tool_call>'
    result = run_agent(
        ScriptedChatModel([CALL, big, "done"]),
        [{"role": "user", "content": "x"}],
        [add],
        guard=guard,
    )
    assert result.tool_runs[0].result == "[5]"
    assert result.tool_runs[1].blocked and "too big" in result.tool_runs[1].error


def test_plain_chat_models_and_guarded_models_work_too():
    class PlainChat:  # only chat(): the loop renders the tool prompt and parses the text
        def __init__(self):
            self.seen = []

        def chat(self, messages, **kw):
            self.seen.append(messages)
            return CALL if len(self.seen) == 1 else "five"

    plain = PlainChat()
    result = run_agent(plain, [{"role": "user", "content": "x"}], [add])
    assert result.text == "five" and result.tool_runs[0].result == 5
    assert plain.seen[1][-1] == {"role": "user", "content": "<tool_response>\n5\n</tool_response>"}
    wrapped = compose(NoBigNumbers()).wrap(ScriptedChatModel([CALL, "ok"]))
    assert run_agent(wrapped, [{"role": "user", "content": "x"}], [add]).tool_runs[0].result == 5


def test_tool_calls_round_trip_over_the_loopback_server():
    with ChatServer(ScriptedChatModel([CALL, "It is 5."])) as server:
        remote = OpenAIChatModel("scripted", server.url, timeout=5)
        result = run_agent(remote, [{"role": "user", "content": "2+3?"}], [add])
    assert result.text == "It is 5." and result.tool_runs[0].result == 5
