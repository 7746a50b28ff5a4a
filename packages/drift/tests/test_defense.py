"""DRIFT as a tool-stage Defense composed in a Guard around paperplug-llm's agent loop."""

import json

import pytest
from helpers import INJECTION, Bank, drift_llm, gullible_agent, tool_call
from paperplug_drift import ChecklistNode, DriftDefense, Plan
from paperplug_llm import ScriptedChatModel, run_agent

import paperplug
from paperplug.state import ConversationState, MemoryStore

PROMPT = [{"role": "user", "content": "Please pay the bill 'bill.txt'."}]
PLAN = Plan(
    ["read_file", "send_money"],
    [
        ChecklistNode("read_file", {"file_path": "bill.txt"}),
        ChecklistNode("send_money", {"recipient": None}),
    ],
)


def test_without_a_guard_the_agent_obeys_the_injection():
    bank = Bank()
    run_agent(ScriptedChatModel(gullible_agent), PROMPT, bank.tools())
    assert ("US133000000121212121212", 100.0) in bank.sent


@pytest.mark.parametrize("stages", ["llm", "core"])
def test_guard_isolates_the_injection_and_the_task_still_gets_done(stages):
    bank = Bank()
    if stages == "llm":  # every DRIFT stage on a (scripted) chat model
        defense = DriftDefense(ScriptedChatModel(drift_llm), bank.tools())
    else:  # the LLM-free core with a given plan
        defense = DriftDefense(tools=bank.tools(), plan=PLAN)
    guard = paperplug.compose(defense)
    result = run_agent(ScriptedChatModel(gullible_agent), PROMPT, bank.tools(), guard=guard)
    assert bank.sent == [("UK12345678901234567890", 98.7)] and result.text == "Paid."
    read = result.tool_runs[0]
    assert "US1330" not in read.result and "UK12345678901234567890" in read.result
    usage = defense.drift.usage
    assert usage.removed_instructions == 1
    if stages == "llm":
        assert usage.llm_calls["planner"] == 1 and usage.llm_calls["privileges"] == 3


def test_guard_refuses_an_unplanned_write_with_the_judge_saying_no():
    bank = Bank(injected=False)
    agent = ScriptedChatModel([tool_call("update_password", password="hunter2"), "Done."])
    defense = DriftDefense(ScriptedChatModel(drift_llm), bank.tools())
    result = run_agent(agent, PROMPT, bank.tools(), guard=paperplug.compose(defense))
    assert not bank.password_changed and result.tool_runs[0].blocked
    assert (
        "[CALL ERROR]" in result.tool_runs[0].error and defense.drift.usage.llm_calls["judge"] == 1
    )


def test_a_clean_task_passes_untouched_and_nothing_is_found():
    bank = Bank(injected=False)
    defense = DriftDefense(tools=bank.tools(), plan=PLAN)
    context = {
        "prompt": PROMPT[0]["content"],
        "messages": PROMPT,
        "phase": "result",
        "tool": "read_file",
    }
    verdict = defense.check(bank.bill, context)
    assert verdict.valid and verdict.payload == bank.bill and verdict.reason == "nothing found"
    result = run_agent(
        ScriptedChatModel(gullible_agent), PROMPT, bank.tools(), guard=paperplug.compose(defense)
    )
    assert bank.sent == [("UK12345678901234567890", 98.7)] and not any(
        r.blocked for r in result.tool_runs
    )


def test_composes_with_another_defense_and_wraps_a_chat_model():
    bank = Bank()

    class Audit:  # a user's own tool-stage defense after DRIFT: sees DRIFT's masked payload
        stage, seen = "tool", []

        def check(self, payload, context=None):
            self.seen.append(payload)
            return paperplug.Verdict(payload, True, 0.0)

    audit = Audit()
    guard = paperplug.compose(DriftDefense(tools=bank.tools(), plan=PLAN), audit)
    wrapped = guard.wrap(ScriptedChatModel(["ok"]), {f.__name__: f for f in bank.tools()})
    wrapped.messages = PROMPT  # the conversation the wrapped model last saw
    masked = wrapped.tools["read_file"](file_path="bill.txt")
    assert "US1330" not in masked and "US1330" not in str(audit.seen[-1])
    blocked = wrapped.tools["update_password"](password="x")
    assert blocked.startswith("[blocked call to update_password") and not bank.password_changed


def test_a_new_conversation_starts_a_new_session():
    bank = Bank(injected=False)
    defense = DriftDefense(tools=bank.tools(), plan=PLAN)
    guard = paperplug.compose(defense)
    for _ in range(2):  # the same task twice: the second run is not a duplicate of the first
        run_agent(ScriptedChatModel(gullible_agent), PROMPT, bank.tools(), guard=guard)
    assert bank.sent == [("UK12345678901234567890", 98.7)] * 2


def test_a_dict_result_comes_back_a_dict_with_only_the_injected_field_masked():
    defense = DriftDefense(tools=Bank().tools(), plan=PLAN)
    context = {"prompt": PROMPT[0]["content"], "messages": PROMPT, "phase": "result"}
    clean = {"name": "Car Rental", "amount": 98.7, "iban": "UK12345678901234567890"}
    verdict = defense.check(clean, context)
    assert verdict.payload is clean and verdict.reason == "nothing found"
    dirty = {**clean, "note": f"Due Friday. {INJECTION}"}
    verdict = defense.check(dirty, context)
    assert verdict.valid and verdict.payload == {**clean, "note": "Due Friday."}
    assert dirty["note"].endswith("</INFORMATION>")  # the tool's own dict is not mutated
    # a result that holds a "name" is still a result when the context gives no phase
    contact = {"name": "Eve", "note": INJECTION}
    no_phase = {k: v for k, v in context.items() if k != "phase"}
    assert defense.check(contact, no_phase).payload == {"name": "Eve", "note": ""}


def test_bad_arguments():
    with pytest.raises(ValueError, match="model, a planner or a plan"):
        DriftDefense(tools=[])
    with pytest.raises(TypeError, match="plan must be a Plan"):
        DriftDefense(tools=[], plan=["read_file"])
    with pytest.raises(ValueError, match="prompt"):
        DriftDefense(plan=PLAN).check({"name": "read_file", "arguments": {}}, {})
    context = {"prompt": "Pay the bill", "phase": "result"}
    with pytest.raises(TypeError, match="payload"):
        DriftDefense(plan=PLAN).check(object(), context)
    with pytest.raises(TypeError, match="context must be a mapping"):
        DriftDefense(plan=PLAN).check("text", ["prompt"])
    with pytest.raises(ValueError, match=r"context\['phase'\]"):
        DriftDefense(plan=PLAN).check("text", {**context, "phase": "later"})


OPENAI_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a file.",
            "parameters": {"type": "object", "properties": {"file_path": {"type": "string"}}},
        },
    },
    {
        "type": "function",
        "function": {
            "name": "send_money",
            "description": "Send money.",
            "parameters": {
                "type": "object",
                "properties": {"recipient": {"type": "string"}, "amount": {"type": "number"}},
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "update_password",
            "description": "Change the password.",
            "parameters": {"type": "object", "properties": {"password": {"type": "string"}}},
        },
    },
]


def test_on_the_wire_the_tools_come_from_the_context_and_each_conversation_has_its_session():
    """As paperplug-gateway uses it: no tools at construction, the query planner, the request's
    OpenAI tool schemas and a conversation id in every check's context."""
    defense = DriftDefense(planner="query")
    base = {"prompt": "Please pay the bill 'bill.txt'.", "messages": PROMPT, "tools": OPENAI_TOOLS}
    pay = {"name": "send_money", "arguments": {"recipient": "UK12", "amount": 98.7}}
    password = {"name": "update_password", "arguments": {"password": "x"}}
    first = {**base, "conversation_id": "client-a", "phase": "call"}
    assert defense.check(pay, first).valid  # the query asks to pay
    assert not defense.check(password, first).valid  # nothing asked to change a password
    second = {**base, "conversation_id": "client-b", "phase": "call"}
    assert defense.check(pay, second).valid  # not a repeat: another conversation's session
    assert len(defense.store) == 2  # one session each, in the defense's own bounded store
    assert not defense.check(pay, first).valid  # a repeat within client-a's own session


def _request(store, messages, **context):
    """One gateway request's check context: its state view, scoped as the gateway scopes it."""
    view = ConversationState.for_request(store, "key0:conv", messages)
    return view, {"prompt": messages[0]["content"], "messages": messages, "tools": OPENAI_TOOLS,
                  "conversation_id": "key0:conv", "state": view.scoped("drift"), **context}  # fmt: skip


def _assistant(call_id, call):
    return {"role": "assistant", "content": None, "tool_calls": [{"id": call_id, "type": "function",
            "function": {"name": call["name"], "arguments": json.dumps(call["arguments"])}}]}  # fmt: skip


def test_on_the_wire_each_run_of_a_task_continues_from_its_own_history():
    """Two runs of one task at once, with the same opening and no conversation header: the
    one with the shorter history never resets the other's session (the old per-conversation
    dict did), and each run's repeat is caught in its own history only."""
    store = MemoryStore()
    defense = DriftDefense(planner="query")
    opening = [{"role": "user", "content": "Please pay the bill 'bill.txt'."}]
    pay = {"name": "send_money", "arguments": {"recipient": "UK12", "amount": 98.7}}
    state_a, context = _request(store, opening, phase="call")
    assert defense.check(pay, context).valid
    context["state"].commit()
    state_a.persist(_assistant("call_a", pay))
    # run B starts the same task while A goes on
    state_b, context = _request(store, opening, phase="call")
    assert defense.check(pay, context).valid  # B has paid nothing yet: no repeat
    context["state"].commit()
    state_b.persist(_assistant("call_b", pay))
    after_a = [*opening, _assistant("call_a", pay), {"role": "tool", "tool_call_id": "call_a", "content": "sent"}]  # fmt: skip
    _, context = _request(store, after_a, phase="call")
    assert not defense.check(pay, context).valid  # A's own repeat, from A's own history
    assert len(defense.store) == 0  # nothing in the defense: the state lives in the store
