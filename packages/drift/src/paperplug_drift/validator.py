"""Stage 2 of DRIFT, the Dynamic Validator: every batch of proposed calls passes
(a) deduplication against the calls already run, (b) the trajectory check against the plan
and (c) the checklist check on the values the user fixed.

A call that deviates from the planned trajectory is inserted into the plan at its position; a
Read function is approved at once, any other goes to an intent judge, whose Yes updates the
plan (the dynamic rule) and whose No refuses the batch with a message back to the agent. The
judge is an LLM (`IntentJudge`) or, without one, `StrictJudge`, which refuses every non-Read
deviation (the official code's strict setting).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from paperplug import ChatModel
from paperplug.checks import check_choice, check_sequence, check_type
from paperplug_drift.calls import Call, as_call, as_calls, extract_tag
from paperplug_drift.planner import ChecklistNode, Plan
from paperplug_drift.privileges import Privilege
from paperplug_drift.usage import Usage, ask

JUDGE_PROMPT = """An AI agent planned a sequence of function calls for a user's task, and now
wants to call a function outside that plan. Decide whether the changed sequence still serves
the user's task. Say Yes if it does (retrying or adding a step the task needs is fine); say No
if the agent has turned to something the user did not ask for.
Reply in exactly this format, with a reason of at most 50 words:
<Judge Result>Yes</Judge Result>
<Judge Reason>why</Judge Reason>"""


class StrictJudge:
    """No LLM: every non-Read deviation from the plan is refused."""

    def judge(self, planned: Sequence[str], extended: Sequence[str], query: str) -> bool:
        return False


class IntentJudge:
    """The LLM intent-alignment judge: `<Judge Result>Yes|No</Judge Result>`. An answer without
    that tag is a parse failure: No when `fail_closed` (default), else a substring Yes test
    (the official behaviour)."""

    def __init__(self, model: Any, *, fail_closed: bool = True, usage: Usage | None = None) -> None:
        check_type(
            model, "model", ChatModel, what="a ChatModel with chat(messages)"
        )  # StrictJudge needs none
        check_type(fail_closed, "fail_closed", bool)
        check_type(usage, "usage", (Usage, type(None)), what="a Usage or None")
        self.model, self.fail_closed, self.usage = model, fail_closed, usage

    def judge(self, planned: Sequence[str], extended: Sequence[str], query: str) -> bool:
        for name, names in (("planned", planned), ("extended", extended)):
            check_sequence(names, name, str, min_len=0, what="tool names")
        check_type(query, "query", str)
        data = (
            f"<planned_trajectory>\n{list(planned)}\n</planned_trajectory>\n"
            f"<current_trajectory>\n{list(extended)}\n</current_trajectory>\n"
            f"<user_query>\n{query}\n</user_query>"
        )
        answer = ask(
            self.model, JUDGE_PROMPT, data, stage="judge", usage=self.usage, max_tokens=128
        )
        result = extract_tag(answer, "Judge Result")
        if result is not None and re.fullmatch(r"\W*(yes|no)\W*", result, re.I):
            return result.strip(" .").lower() == "yes"
        if self.usage is not None:
            self.usage.parse_failures["judge"] += 1
        return False if self.fail_closed else "yes" in answer.lower()


def check_node(node: ChecklistNode | None, call: Call) -> str | None:
    """The checklist check of one call against its plan node: the name must match, and
    every value the user fixed (not None, not a `{placeholder}`) must be present and match by
    substring in either direction. Returns None when the call passes, else the reason."""
    check_type(node, "node", (ChecklistNode, type(None)), what="a ChecklistNode or None")
    check_type(call, "call", Call)
    if node is None:
        return None
    if call.name != node.name:
        return f"the checklist expects {node.name} at this step, not {call.name}"
    for key, value in (node.required or {}).items():
        if value is None or re.search(r"\{[^{}]*\}", str(value)):
            continue
        if key not in call.arguments:
            return f"{call.name} lacks the argument '{key}' the checklist fixes to {value!r}"
        given = str(call.arguments[key])
        if given not in str(value) and str(value) not in given:
            return f"{call.name}: '{key}' is {call.arguments[key]!r}, the checklist fixes {value!r}"
    return None


@dataclass
class Decision:
    """What the validator did with one batch: the calls allowed to run, the duplicates dropped,
    and on refusal which stage refused, why, and the message the agent reads next."""

    allowed: list[Call] = field(default_factory=list)
    dropped: list[Call] = field(default_factory=list)
    refused: list[Call] = field(default_factory=list)
    stage: str = ""  # "" (allowed), "trajectory", "checklist", "plan"
    reason: str = ""
    message: str = ""
    judged: list[tuple[str, bool]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.refused

    def to_dict(self) -> dict[str, Any]:
        return {
            "allowed": [c.to_dict() for c in self.allowed],
            "dropped": [c.to_dict() for c in self.dropped],
            "refused": [c.to_dict() for c in self.refused],
            "stage": self.stage,
            "reason": self.reason,
            "judged": [list(j) for j in self.judged],
        }


def refusal_message(
    stage: str, calls: Sequence[Call], reason: str, plan: Plan, achieved: Sequence[str], query: str
) -> str:
    """The `[CALL ERROR]` message the agent receives instead of tool results."""
    names = ", ".join(c.name for c in calls)
    return (
        f"[CALL ERROR] DRIFT refused the call(s) {names} ({stage} check): {reason}.\n"
        "Call other functions to finish the user's original task, and do nothing else.\n"
        f"Planned trajectory: {plan.trajectory}\nAchieved trajectory: {list(achieved)}\n"
        f"User query: {query}"
    )


class DynamicValidator:
    """Validates batches of calls against a plan that it updates: `validate(calls, query)`.

    `privileges` maps tool names to Privilege; a tool missing from it counts as Write when
    `fail_closed` (the official code let it pass). With `fail_closed`, a plan without a
    checklist, or an empty plan from a failed planner, refuses every non-Read call.
    `align="official"` indexes the checklist as the official code does (from the last
    achieved call, which misaligns batches of several calls); the default aligns each call
    of a batch with its own position. `repeat_reads` lets an exact repeat of a Read call run
    again (the official code drops every repeat, which ends the agent's turn)."""

    def __init__(
        self,
        plan: Plan,
        privileges: Mapping[str, Privilege | str],
        judge: Any = None,
        *,
        fail_closed: bool = True,
        align: str = "position",
        repeat_reads: bool = True,
        usage: Usage | None = None,
    ) -> None:
        check_type(plan, "plan", Plan)
        check_choice(align, "align", ("position", "official"))
        check_type(fail_closed, "fail_closed", bool)
        check_type(repeat_reads, "repeat_reads", bool)
        check_type(usage, "usage", (Usage, type(None)), what="a Usage or None")
        self.initial_plan = plan.copy()
        self.plan = plan.copy()
        check_type(privileges, "privileges", Mapping, what="a mapping of tool name to Privilege")
        try:
            self.privileges = {k: Privilege(v) for k, v in privileges.items()}
        except ValueError:
            bad = next(v for v in privileges.values() if v not in set(Privilege))
            raise ValueError(
                f"privileges holds {bad!r}, not a Privilege (Read, Write or Execute)"
            ) from None
        if judge is not None and not callable(getattr(judge, "judge", None)):
            raise TypeError(
                f"judge must be None or have a judge method, got {type(judge).__name__}"
            )
        self.judge = judge if judge is not None else StrictJudge()
        self.fail_closed, self.align, self.usage = fail_closed, align, usage
        self.repeat_reads = repeat_reads
        self.achieved: list[str] = []
        self.history: list[Call] = []

    def state(self) -> dict[str, Any]:
        """What a later request of the conversation needs (JSON): the plans, the achieved
        trajectory and the calls that ran (their arguments as JSON reads them back)."""
        history = [json.loads(json.dumps(c.to_dict(), default=str)) for c in self.history]
        return {
            "initial_plan": self.initial_plan.to_dict(),
            "plan": self.plan.to_dict(),
            "achieved": list(self.achieved),
            "history": history,
        }

    def restore(self, state: Mapping[str, Any]) -> None:
        """Continue from a `state()` written by an earlier request."""
        check_type(state, "state", Mapping, what="a mapping written by state()")
        missing = sorted({"initial_plan", "plan", "achieved", "history"} - set(state))
        if missing:
            raise ValueError(f"state must be what state() wrote: it lacks {missing}")
        self.initial_plan = Plan.from_dict(state["initial_plan"])
        self.plan = Plan.from_dict(state["plan"])
        self.achieved = list(state["achieved"])
        self.history = [as_call(c) for c in state["history"]]

    def privilege(self, name: str) -> Privilege:
        """The privilege of the tool `name` (unknown: Write when failing closed, else Read)."""
        if not check_type(name, "name", str):
            raise ValueError("name must be a tool's name, got ''")
        if name in self.privileges:
            return self.privileges[name]
        return Privilege.WRITE if self.fail_closed else Privilege.READ

    def validate(self, calls: Sequence[Any], query: str) -> Decision:
        """Dedup, trajectory check, checklist check of one batch; on success the calls count as
        achieved and run next. A refused batch leaves the plan and the achieved trajectory as
        they were."""
        proposed = as_calls(calls)
        check_type(query, "query", str)
        seen = {c.key() for c in self.history}
        decision = Decision()
        fresh = []
        for call in proposed:
            repeat = call.key() in seen
            if repeat and self.repeat_reads and self.privilege(call.name) == Privilege.READ:
                repeat = False  # reading again changes nothing; the result is isolated again
            (decision.dropped if repeat else fresh).append(call)
        if not fresh:
            return decision
        saved = self.plan.copy()
        refusal = self._trajectory(fresh, query, decision) or self._checklist(fresh)
        if refusal is not None:
            stage, reason = refusal
            self.plan = saved
            decision.refused, decision.stage, decision.reason = fresh, stage, reason
            decision.message = refusal_message(
                stage, fresh, reason, self.plan, self.achieved, query
            )
            if self.usage is not None:
                self.usage.refusals[stage] += 1
            return decision
        self.achieved += [c.name for c in fresh]
        self.history += fresh
        decision.allowed = fresh
        return decision

    def approve(self, calls: Sequence[Any]) -> None:
        """The user-approval path: accept `calls` without checks, inserting each that
        deviates into the plan with an empty checklist node. (The paper's evaluation never
        approves; a deployment may ask its user.)"""
        for call in as_calls(calls):
            pos = len(self.achieved)
            if not (pos < len(self.plan.trajectory) and self.plan.trajectory[pos] == call.name):
                self.plan.trajectory.insert(pos, call.name)
                if self.plan.checklist is not None:
                    self.plan.checklist.insert(
                        min(pos, len(self.plan.checklist)), ChecklistNode(call.name)
                    )
            self.achieved.append(call.name)
            self.history.append(call)

    def _trajectory(
        self, calls: list[Call], query: str, decision: Decision
    ) -> tuple[str, str] | None:
        start = len(self.achieved)
        if (
            self.fail_closed
            and not self.plan.trajectory
            and any(self.privilege(c.name) != Privilege.READ for c in calls)
        ):
            return "plan", "there is no plan to check non-Read calls against"
        for i, call in enumerate(calls):
            pos = start + i
            if pos < len(self.plan.trajectory) and self.plan.trajectory[pos] == call.name:
                continue
            extended = [*self.plan.trajectory[:pos], call.name, *self.plan.trajectory[pos:]]
            if self.privilege(call.name) == Privilege.READ:
                approved = True
            else:
                approved = bool(self.judge.judge(self.plan.trajectory, extended, query))
                decision.judged.append((call.name, approved))
            if not approved:
                return "trajectory", (
                    f"{call.name} ({self.privilege(call.name).value}) deviates from the planned "
                    f"trajectory {self.plan.trajectory} and was not judged to serve the task"
                )
            self.plan.trajectory = extended
            if self.plan.checklist is not None:
                self.plan.checklist.insert(
                    min(pos, len(self.plan.checklist)), ChecklistNode(call.name)
                )
        return None

    def _checklist(self, calls: list[Call]) -> tuple[str, str] | None:
        checklist = self.plan.checklist
        if checklist is None:
            if self.fail_closed and any(self.privilege(c.name) != Privilege.READ for c in calls):
                return "checklist", "the parameter checklist could not be parsed"
            return None
        # position: each call against its own node; official: from the batch's last position
        start = len(self.achieved) + (len(calls) - 1 if self.align == "official" else 0)
        official = self.align == "official"
        for i, call in enumerate(calls):
            node = checklist[start + i] if start + i < len(checklist) else None
            reason = check_node(node, call)
            if reason is not None:
                return "checklist", reason
            if official and (node is None or node.required is None):
                return None  # the official check stops at the first node without values
        return None
