"""The Defense contract from paperplug.testing, on a small case (LLM-free core, given plan)."""

import pytest
from paperplug_drift import ChecklistNode, Plan

from paperplug.testing import DefenseContract


def get_balance() -> float:
    """The account's balance."""
    return 1810.0


def send_money(recipient: str, amount: float) -> str:
    """Send money.

    Args:
        recipient: IBAN of the recipient
        amount: amount to send
    """
    return f"sent {amount} to {recipient}"


PLAN = Plan(
    ["get_balance", "send_money"],
    [
        ChecklistNode("get_balance"),
        ChecklistNode("send_money", {"recipient": "GB29", "amount": None}),
    ],
)


class TestContract(DefenseContract):
    component = "drift"
    params = {"tools": [get_balance, send_money], "plan": PLAN}
    bad_params = {
        "plan": [["get_balance", "send_money"]],
        "tools": [42, "send_money"],
        "model": [42],
        "planner": ["oracle"],
        "config": [{"max_iters": 0}],
        "drift": ["drift"],
        "detector": ["regex", 42],
        "store": ["memory", 42],
    }
    accepts = {  # the call under inspection, not a setting
        "payload['arguments']['amount']=nan": "the tool validates its own arguments; DRIFT "
        "judges the call against the plan, where a NaN amount is no deviation"
    }

    @pytest.fixture
    def defense_case(self):
        payload = {"name": "send_money", "arguments": {"recipient": "US13", "amount": 10.0}}
        context = {"prompt": "Send 10 to GB29.", "messages": [], "phase": "call"}
        return payload, context
