"""Replaying recorded official DRIFT runs (SaFoLab-WISC/DRIFT `runs/*.json`) through our
Dynamic Validator: each recorded agent turn's proposed calls go through `DynamicValidator`
with the recorded plan, checklist and privileges; the judge's answers come from the record
(No exactly where the official run refused a deviation). Our decision per turn is compared
with the official one: calls run, refused by the trajectory check, refused by the checklist
check, or dropped as duplicates. After each turn the validator takes the official state (the
calls that ran), so that one disagreement does not cascade into the next turns.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from paperplug.checks import check_type
from paperplug_drift.calls import Call, CallSyntaxError, as_call, extract_tag, parse_function_calls
from paperplug_drift.planner import Plan, parse_checklist
from paperplug_drift.validator import DynamicValidator

TRAJECTORY_REFUSAL = re.compile(
    r"The function calling of (\w+) has been refused due to it does not align"
)
CHECKLIST_REFUSAL = "are not aligned with checklist"


class RecordedJudge:
    """Answers No for the functions the record shows refused at this turn, Yes otherwise."""

    def __init__(self) -> None:
        self.refuse: set[str] = set()

    def judge(self, planned: Sequence[str], extended: Sequence[str], query: str) -> bool:
        added = [f for f in extended if list(extended).count(f) > list(planned).count(f)]
        return not (set(added) & self.refuse)


@dataclass
class Turn:
    index: int
    proposed: list[Call]
    official: str  # "run", "trajectory", "checklist", "dropped"
    ours: str
    multi: bool

    @property
    def agrees(self) -> bool:
        return self.official == self.ours


@dataclass
class ReplayReport:
    """Per-turn decisions, official against ours; `skipped` counts turns not replayable (calls
    that do not parse, turns past the message limit, turns without a call)."""

    turns: list[Turn] = field(default_factory=list)
    skipped: int = 0

    @property
    def agreement(self) -> float:
        return sum(t.agrees for t in self.turns) / len(self.turns) if self.turns else 1.0

    def disagreements(self) -> list[Turn]:
        return [t for t in self.turns if not t.agrees]


def _official(conversation: Sequence[Mapping[str, Any]], i: int) -> str:
    message = conversation[i]
    follow = conversation[i + 1] if i + 1 < len(conversation) else None
    if message.get("tool_calls"):
        return "run"
    if follow is not None and follow.get("role") == "user":
        content = str(follow.get("content", ""))
        if TRAJECTORY_REFUSAL.search(content):
            return "trajectory"
        if CHECKLIST_REFUSAL in content:
            return "checklist"
    return "dropped"


def replay_run(record: Mapping[str, Any], *, align: str = "official") -> ReplayReport:
    """Replay one recorded run (a parsed `runs/.../injection_task_N.json`)."""
    check_type(record, "record", Mapping, what="a mapping (a parsed run record)")
    checklist = parse_checklist(str(record.get("initial_checklist") or ""))
    plan = Plan(list(record["initial_trajectory"]), checklist, "recorded")
    judge = RecordedJudge()
    validator = DynamicValidator(
        plan, record["tool_permission"], judge, fail_closed=False, align=align, repeat_reads=False
    )
    conversation = record["conversations"]
    query = str(conversation[0]["content"])
    report = ReplayReport()
    for i, message in enumerate(conversation):
        if message.get("role") != "assistant":
            continue
        if i + 1 > 20:  # the official agent stops proposing past 20 messages
            report.skipped += 1
            continue
        try:
            proposed = parse_function_calls(
                extract_tag(str(message.get("content")), "function_call") or ""
            )
        except CallSyntaxError:
            report.skipped += 1
            continue
        if not proposed:
            report.skipped += 1
            continue
        official = _official(conversation, i)
        follow = str(conversation[i + 1].get("content", "")) if i + 1 < len(conversation) else ""
        judge.refuse = set(TRAJECTORY_REFUSAL.findall(follow))
        state = (validator.plan.copy(), list(validator.achieved), list(validator.history))
        decision = validator.validate(proposed, query)
        ours = decision.stage if decision.refused else ("run" if decision.allowed else "dropped")
        report.turns.append(Turn(i, proposed, official, ours, len(proposed) > 1))
        # carry on from the official state, so that one disagreement does not cascade
        validator.plan, validator.achieved, validator.history = state
        if official == "run":
            validator.approve([as_call(c) for c in message["tool_calls"]])
    return report
