"""The Attack contract from paperplug.testing, on the BM25 victim (fast, deterministic)."""

import pytest
from paperplug_ama import BM25ToolRetriever, load_scenarios

from paperplug.testing import AttackContract


class TestContract(AttackContract):
    component = "ama"
    params = {"trials": 5, "per_round": 2, "rounds": 2, "seed": 0}
    bad_params = {
        "budget": [0, -3, 2.5],
        "mode": ["both"],
        "rounds": [0],
        "lam": [-0.1, 1.5],
        "target_rate": [1.5],
        "seed": [0.5],
        "proposer": ["nope", 3],
        "per_round": [0],
        "history_size": [0],
        "trials": [0, 1.5],
        "n_competitors": [-1],
        "hidden_fields": ["description", [3]],
        "race_top": [0],
        "progress": [True],
    }

    @pytest.fixture
    def attack_case(self):
        return BM25ToolRetriever(), load_scenarios(["travel", "cooking"]), 60


def test_adversarial_items_are_tool_metadata_for_a_tool_stage_guard():
    from paperplug_ama import AMAttack

    from paperplug import Verdict, compose, evaluate

    class BlockCues:  # a user's own tool-stage guard: blocks metadata that oversell
        stage = "tool"

        def check(self, payload, context=None):
            bad = any(w in payload["description"].lower() for w in ("always", "first", "before"))
            return Verdict(payload, valid=not bad, risk=float(bad))

    attack = AMAttack(trials=5, per_round=3, rounds=2, seed=1)
    assert attack.stage == "tool"
    ev = evaluate(
        attack, BM25ToolRetriever(), load_scenarios(["travel"]), guard=compose(BlockCues())
    )
    items = ev.result.adversarial
    assert len(items) == len(ev.result.success) == 30  # one per held-out query
    assert {"name", "description", "parameters", "query"} <= set(items[0])
    blocked = BlockCues().check(items[0]).valid is False
    assert ev.blocked == (30 if blocked else 0)
    assert ev.guarded_success_rate == (0.0 if blocked else ev.success_rate)
