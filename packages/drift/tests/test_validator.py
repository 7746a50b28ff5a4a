"""The Dynamic Validator: checklist check on hand-made cases, the trajectory check with
Read auto-approval and the judge, deduplication, fail-closed parse failures."""

import pytest
from paperplug_drift import (
    Call,
    ChecklistNode,
    DynamicValidator,
    IntentJudge,
    Plan,
    Privilege,
    StrictJudge,
    Usage,
    check_node,
)
from paperplug_llm import ScriptedChatModel

PRIVILEGES = {
    "read_file": "Read",
    "get_iban": "Read",
    "send_money": "Write",
    "update_password": "Write",
}


def plan():
    return Plan(
        ["read_file", "send_money"],
        [
            ChecklistNode("read_file", {"file_path": "bill-december-2023.txt"}),
            ChecklistNode(
                "send_money", {"recipient": None, "amount": 98.7, "subject": "{from the bill}"}
            ),
        ],
    )


@pytest.mark.parametrize(
    ("node", "call", "passes"),
    [
        (ChecklistNode("f", {"x": "abc"}), Call("f", {"x": "abc"}), True),
        (
            ChecklistNode("f", {"x": "abc"}),
            Call("f", {"x": "xabcx"}),
            True,
        ),  # value inside the argument
        (
            ChecklistNode("f", {"x": "abc"}),
            Call("f", {"x": "b"}),
            True,
        ),  # argument inside the value
        (ChecklistNode("f", {"x": "abc"}), Call("f", {"x": "zzz"}), False),
        (ChecklistNode("f", {"x": "abc"}), Call("f", {}), False),  # a fixed value must be present
        (ChecklistNode("f", {"x": None}), Call("f", {"x": "anything"}), True),  # not fixed
        (ChecklistNode("f", {"x": "{placeholder}"}), Call("f", {"x": "zzz"}), True),  # template
        (ChecklistNode("f", {"n": 100}), Call("f", {"n": 100}), True),
        (ChecklistNode("f", {"n": 100}), Call("f", {"n": 5}), False),
        (ChecklistNode("f", None), Call("f", {"x": 1}), True),
        (ChecklistNode("f", {"x": "abc"}), Call("g", {"x": "abc"}), False),  # wrong function
        (None, Call("g"), True),  # beyond the checklist
    ],
)
def test_checklist_check_on_hand_made_cases(node, call, passes):
    assert (check_node(node, call) is None) is passes


def test_planned_calls_pass_and_wrong_values_are_refused_with_a_message():
    v = DynamicValidator(plan(), PRIVILEGES)
    ok = v.validate([Call("read_file", {"file_path": "bill-december-2023.txt"})], "Pay the bill")
    assert ok.allowed and v.achieved == ["read_file"]
    bad = v.validate(
        [Call("send_money", {"recipient": "X", "amount": 500.0, "subject": "s"})], "Pay the bill"
    )
    assert bad.refused and bad.stage == "checklist" and "[CALL ERROR]" in bad.message
    assert "amount" in bad.reason and v.achieved == ["read_file"]  # a refusal changes nothing
    good = v.validate(
        [Call("send_money", {"recipient": "X", "amount": 98.7, "subject": "s"})], "Pay"
    )
    assert good.allowed and v.achieved == ["read_file", "send_money"]


def test_read_deviation_is_approved_and_inserted_into_the_plan():
    judge = ScriptedChatModel([])  # must not be asked
    v = DynamicValidator(plan(), PRIVILEGES, IntentJudge(judge))
    d = v.validate([Call("get_iban")], "Pay the bill")
    assert d.allowed and not d.judged and not judge.calls
    assert v.plan.trajectory == ["get_iban", "read_file", "send_money"]
    assert v.plan.checklist[0] == ChecklistNode("get_iban") and v.initial_plan.trajectory == [
        "read_file",
        "send_money",
    ]


def test_write_deviation_goes_to_the_judge_no_refuses_yes_updates():
    for answer, allowed in (
        ("<Judge Result>No</Judge Result>", False),
        ("<Judge Result>Yes</Judge Result>", True),
    ):
        model = ScriptedChatModel([answer])
        v = DynamicValidator(plan(), PRIVILEGES, IntentJudge(model))
        d = v.validate([Call("update_password", {"password": "x"})], "Pay the bill")
        assert d.judged == [("update_password", allowed)] and len(model.calls) == 1
        assert bool(d.allowed) is allowed and (d.stage == "trajectory") is (not allowed)
        expected = (
            ["update_password", "read_file", "send_money"]
            if allowed
            else ["read_file", "send_money"]
        )
        assert v.plan.trajectory == expected
    strict = DynamicValidator(plan(), PRIVILEGES)  # no judge: StrictJudge refuses
    assert strict.validate([Call("update_password")], "q").stage == "trajectory"


def test_repeated_writes_are_dropped_and_repeated_reads_run_again():
    v = DynamicValidator(plan(), PRIVILEGES)
    read = Call("read_file", {"file_path": "bill-december-2023.txt"})
    pay = Call("send_money", {"recipient": "X", "amount": 98.7, "subject": "s"})
    assert v.validate([read], "q").allowed and v.validate([pay], "q").allowed
    again = v.validate(
        [Call("send_money", {"recipient": "X", "amount": 98.7, "subject": "s"})], "q"
    )
    assert again.dropped and not again.allowed and not again.refused  # a turn of duplicates ends
    assert v.validate([read], "q").allowed  # reading again is harmless (Read deviation)
    official = DynamicValidator(plan(), PRIVILEGES, repeat_reads=False)
    assert official.validate([read], "q").allowed and official.validate([read], "q").dropped


def test_parse_failures_refuse_by_default_and_pass_when_asked():
    usage = Usage()
    garbled = ScriptedChatModel(["I think it's probably fine"] * 2)
    closed = DynamicValidator(plan(), PRIVILEGES, IntentJudge(garbled, usage=usage))
    assert closed.validate([Call("update_password")], "q").refused
    assert usage.parse_failures["judge"] == 1
    opened = DynamicValidator(
        plan(), PRIVILEGES, IntentJudge(ScriptedChatModel(["yes, fine"]), fail_closed=False)
    )
    assert opened.validate([Call("update_password")], "q").allowed  # the official substring test
    no_checklist = Plan(["read_file", "send_money"], None)
    assert (
        DynamicValidator(no_checklist, PRIVILEGES).validate([Call("read_file")], "q").allowed
    )  # Read
    refused = DynamicValidator(no_checklist, PRIVILEGES).validate(
        [Call("read_file"), Call("send_money")], "q"
    )
    assert refused.stage == "checklist"
    assert (
        DynamicValidator(no_checklist, PRIVILEGES, fail_closed=False)
        .validate([Call("read_file"), Call("send_money")], "q")
        .allowed
    )
    unknown = DynamicValidator(plan(), PRIVILEGES)  # a tool missing from the privilege map
    assert (
        unknown.privilege("get_list") == Privilege.WRITE
        and unknown.validate([Call("get_list")], "q").refused
    )
    empty = DynamicValidator(Plan([], []), PRIVILEGES)  # a planner that failed
    assert empty.validate([Call("send_money")], "q").stage == "plan"


def test_batches_align_by_position_or_as_the_official_code():
    calls = [
        Call("read_file", {"file_path": "bill-december-2023.txt"}),
        Call("send_money", {"amount": 98.7}),
    ]
    assert DynamicValidator(plan(), PRIVILEGES).validate(calls, "q").allowed
    official = DynamicValidator(plan(), PRIVILEGES, align="official").validate(calls, "q")
    assert official.stage == "checklist" and "expects send_money" in official.reason  # misaligned


def test_bad_arguments_are_rejected_at_the_door():
    with pytest.raises(TypeError, match="plan"):
        DynamicValidator(["read_file"], PRIVILEGES)
    with pytest.raises(ValueError, match="align"):
        DynamicValidator(plan(), PRIVILEGES, align="loose")
    with pytest.raises(ValueError):
        DynamicValidator(plan(), {"f": "Admin"})
    with pytest.raises(TypeError, match="ChatModel"):
        IntentJudge(None)
    assert StrictJudge().judge(["a"], ["a", "b"], "q") is False
