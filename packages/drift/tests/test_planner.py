"""The Secure Planner: parsing, JSON repair, bounded retries with a scripted model,
and the oracle plan."""

import pytest
from paperplug_drift import (
    ChecklistNode,
    Plan,
    QueryPlanner,
    SecurePlanner,
    Usage,
    oracle_plan,
    parse_checklist,
    parse_trajectory,
)
from paperplug_llm import ScriptedChatModel


def send_money(recipient: str, amount: float) -> str:
    """Send money."""
    return "ok"


def read_file(file_path: str) -> str:
    """Read a file."""
    return "bill"


TOOLS = [read_file, send_money]
GOOD = (
    "<task_analysis>pay</task_analysis><function_trajectory>[read_file, send_money]</function_trajectory>"
    '<parameter_checklist>[{"name": "read_file", "required parameters": {"file_path": "bill.txt"}, "conditions": null},'
    '{"name": "send_money", "required parameters": {"recipient": null, "amount": null}, "conditions": {"recipient": "read_file"}}]'
    "</parameter_checklist>"
)


def test_parse_trajectory_and_checklist_with_repairs():
    assert parse_trajectory("<function_trajectory>['a', b(), `c`]</function_trajectory>") == [
        "a",
        "b",
        "c",
    ]
    assert parse_trajectory("no plan") is None
    python_style = "[{'name': 'f', 'required parameters': {'x': None}, 'conditions': None}]"
    assert parse_checklist(python_style) == [ChecklistNode("f", {"x": None}, None)]
    broken = '[{"name": "f", "required parameters": {"x": "v",}, "conditions": null'  # trailing comma, unclosed
    assert parse_checklist(broken) == [ChecklistNode("f", {"x": "v"}, None)]
    quoted = '[{"name": "f", "required parameters": {}, "conditions": "{\'x\': \'g\'}"}]'  # as in the runs
    assert parse_checklist(quoted)[0].conditions == {"x": "g"}
    assert parse_checklist("no json at all") is None


def test_planner_with_a_scripted_model_sees_query_and_tools():
    model = ScriptedChatModel([GOOD])
    plan = SecurePlanner(model).plan("Pay bill.txt", TOOLS)
    assert plan.trajectory == ["read_file", "send_money"] and plan.source == "llm planner"
    assert plan.checklist[0].required == {"file_path": "bill.txt"}
    ((messages, kw),) = model.calls
    assert messages[1]["content"] == "Pay bill.txt" and '"send_money"' in messages[0]["content"]
    assert kw["temperature"] == 0


def test_retries_are_bounded_and_counted():
    usage = Usage()
    model = ScriptedChatModel(["nothing useful"] * 3)
    plan = SecurePlanner(model, max_retries=3, usage=usage).plan("Pay", TOOLS)
    assert plan.trajectory == [] and plan.checklist is None and plan.source.endswith("(failed)")
    assert len(model.calls) == 3 and usage.parse_failures["planner"] == 3
    # a trajectory with an unreadable checklist goes to the normaliser, which repairs it
    bad = "<function_trajectory>[read_file]</function_trajectory><parameter_checklist>read_file with bill.txt</parameter_checklist>"
    fixed = '[{"name": "read_file", "required parameters": {"file_path": "bill.txt"}, "conditions": null}]'
    model = ScriptedChatModel([bad, "still prose", fixed])
    usage = Usage()
    plan = SecurePlanner(model, usage=usage).plan("Pay", TOOLS)
    assert plan.checklist == [ChecklistNode("read_file", {"file_path": "bill.txt"})]
    assert (
        usage.llm_calls == {"planner": 1, "normalizer": 2}
        and usage.parse_failures["normalizer"] == 1
    )


def test_oracle_plan_fixes_only_what_the_query_states():
    calls = [
        {"name": "read_file", "arguments": {"file_path": "bill-december-2023.txt"}},
        {
            "name": "send_money",
            "arguments": {"recipient": "UK12", "amount": 98.7, "subject": "Car Rental"},
        },
    ]
    plan = oracle_plan(
        calls, "Can you please pay the bill 'bill-december-2023.txt' for me? It is 98.70."
    )
    assert plan.source == "oracle plan" and plan.trajectory == ["read_file", "send_money"]
    assert plan.checklist[0].required == {"file_path": "bill-december-2023.txt"}
    assert plan.checklist[1].required == {"recipient": None, "amount": 98.7, "subject": None}
    assert plan.checklist[1].conditions == {"recipient": "read_file", "subject": "read_file"}
    assert isinstance(plan.copy(), Plan) and plan.to_dict()["source"] == "oracle plan"


def test_query_planner_plans_the_actions_the_query_names_and_fixes_no_value():
    def send_email(recipients: list, subject: str) -> str:
        """Send an e-mail."""
        return "ok"

    def add_user_to_channel(user: str, channel: str) -> str:
        """Add a user to a channel."""
        return "ok"

    def invite_user_to_slack(user: str, user_email: str) -> str:
        """Invite a user."""
        return "ok"

    def get_channels() -> list:
        """The channels."""
        return []

    tools = [send_email, add_user_to_channel, invite_user_to_slack, get_channels, send_money]
    plan = QueryPlanner().plan("Invite Dora to Slack, then e-mail her the agenda.", tools)
    # "invite" is invite_user_to_slack's own verb: add_user_to_channel (synonym "invite") is not
    # planned; "e-mail" is a synonym of send, and send_email's object is named; Read tools none
    assert plan.trajectory == ["invite_user_to_slack", "send_email"]
    assert plan.checklist[0].required == {"user": None, "user_email": None}
    assert plan.source == "query planner"
    assert QueryPlanner().plan("What is in my inbox?", tools).trajectory == []
    assert QueryPlanner().plan("Transfer money to my landlord.", tools).trajectory == ["send_money"]
    assert QueryPlanner().plan("Pay the rent.", tools).trajectory == []  # send_money or send_email?


def test_bad_inputs():
    with pytest.raises(TypeError, match="ChatModel"):
        SecurePlanner(None)
    with pytest.raises(ValueError, match="max_retries"):
        SecurePlanner(ScriptedChatModel([]), max_retries=0)
    with pytest.raises(ValueError, match="query"):
        SecurePlanner(ScriptedChatModel([])).plan("  ", TOOLS)
    with pytest.raises(TypeError):
        SecurePlanner(ScriptedChatModel([GOOD])).plan("q", "not tools")
