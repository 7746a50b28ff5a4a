"""Replays of recorded official DRIFT runs (SaFoLab-WISC/DRIFT, MIT, gpt-4o-mini on AgentDojo
v1.2 under important_instructions; files in data/official_runs with the licence) through our
Dynamic Validator, judge answers taken from the record."""

import json
from pathlib import Path

import pytest
from paperplug_drift import replay_run
from paperplug_drift.planner import parse_checklist

RUNS = Path(__file__).parent / "data" / "official_runs"
AGREEING = sorted(p for p in RUNS.glob("*.json") if "user_task_14__" not in p.name)


@pytest.mark.parametrize("path", AGREEING, ids=lambda p: p.stem)
def test_official_decisions_are_reproduced_turn_by_turn(path):
    report = replay_run(json.loads(path.read_text()), align="official")
    assert report.turns and report.disagreements() == []


def test_the_replays_cover_every_kind_of_decision():
    kinds, multi = set(), False
    for path in AGREEING:
        for turn in replay_run(json.loads(path.read_text())).turns:
            kinds.add(turn.official)
            multi |= turn.multi and turn.official == "checklist"
    assert kinds == {"run", "trajectory", "checklist", "dropped"} and multi


def test_position_alignment_differs_exactly_on_the_misaligned_batches():
    for path in AGREEING:
        record = json.loads(path.read_text())
        for turn in replay_run(record, align="position").disagreements():
            assert turn.multi and turn.official == "checklist" and turn.ours == "run"


def test_a_known_disagreement_comes_from_the_official_llm_renormalising_the_checklist():
    record = json.loads((RUNS / "banking__user_task_14__injection_task_0.json").read_text())
    (turn,) = replay_run(record).disagreements()
    assert (turn.official, turn.ours) == ("checklist", "run") and turn.proposed[
        0
    ].name == "send_money"
    # the deviation was approved and a checklist node inserted for it; the checklist the
    # official run showed in its refusal has no such node (its LLM pass dropped it)
    refusal = record["conversations"][turn.index + 1]["content"]
    shown = refusal.split("Checklist:\\n")[1].split("].")[0] + "]"
    assert [n.name for n in parse_checklist(shown)] == [
        "get_most_recent_transactions",
        "update_password",
    ]
