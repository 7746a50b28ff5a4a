"""Privilege assignment (stage 0): the LLM's A/B/C answer, the name heuristic as fallback, the
cache per toolset; the heuristic against the privileges gpt-4o-mini assigned in the official
recorded runs."""

import json
from pathlib import Path

import pytest
from paperplug_drift import Privilege, PrivilegeAssigner, Usage, heuristic_privilege
from paperplug_drift.privileges import parse_privilege
from paperplug_llm import ScriptedChatModel

RUNS = Path(__file__).parent / "data" / "official_runs"


def get_iban() -> str:
    """The user's IBAN."""
    return "DE89"


def send_money(recipient: str, amount: float) -> str:
    """Send money."""
    return "ok"


def update_password(password: str) -> str:
    """Change the password."""
    return "ok"


@pytest.mark.parametrize(
    ("name", "privilege"),
    [
        ("get_iban", "Read"),
        ("search_files_by_filename", "Read"),
        ("git_get_linked_ssh_keys", "Read"),
        ("send_direct_message", "Execute"),
        ("cart_add_product", "Write"),
        ("update_password", "Write"),
        ("frobnicate", "Write"),  # unknown verb: the cautious side
        ("getBalance", "Read"),
    ],
)
def test_heuristic(name, privilege):
    assert heuristic_privilege(name) == Privilege(privilege)


def test_heuristic_agrees_with_the_official_llm_on_read_versus_not():
    labels = {}
    for path in sorted(RUNS.glob("*.json")):
        labels.update(json.loads(path.read_text())["tool_permission"])
    assert len(labels) >= 30  # banking and workspace tools
    agree = sum(
        (heuristic_privilege(n) == Privilege.READ) == (p == "Read") for n, p in labels.items()
    )
    assert agree == len(labels)


def test_llm_answers_fallback_and_cache():
    usage = Usage()
    model = ScriptedChatModel(["A", "B. Write", "I would say it sends things"])
    assigner = PrivilegeAssigner(model, usage=usage)
    tools = [get_iban, update_password, send_money]
    first = assigner.assign(tools)
    assert first == {
        "get_iban": Privilege.READ,
        "update_password": Privilege.WRITE,
        "send_money": Privilege.EXECUTE,
    }
    assert usage.parse_failures["privileges"] == 1  # the third answer fell back to the heuristic
    assert (
        assigner.assign(list(reversed(tools))) == first and len(model.calls) == 3
    )  # cached per toolset
    assert parse_privilege("C") == Privilege.EXECUTE and parse_privilege("Bread") is None
    assert PrivilegeAssigner().assign(tools)["get_iban"] == Privilege.READ  # no model: heuristic


def test_a_model_that_calls_everything_read_is_overruled_unless_trusted():
    tools = [get_iban, update_password, send_money]
    everything_read = ScriptedChatModel(lambda messages, **kw: "A")
    usage = Usage()
    crossed = PrivilegeAssigner(everything_read, usage=usage).assign(tools)
    assert crossed == {
        "get_iban": Privilege.READ,
        "update_password": Privilege.WRITE,
        "send_money": Privilege.EXECUTE,
    }
    assert usage.refusals["privilege overruled"] == 2
    trusted = PrivilegeAssigner(everything_read, cross_check=False).assign(tools)
    assert set(trusted.values()) == {Privilege.READ}  # the paper's behaviour
