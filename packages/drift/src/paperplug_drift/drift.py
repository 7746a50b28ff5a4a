"""DRIFT's stages wired together: `Drift` holds the configured components, `session(query,
tools)` starts one task's state (plan, validator, isolator), shared by the agent loop, the
Guard defense and the AgentDojo pipeline element.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from paperplug import ChatModel
from paperplug.checks import check_choice, check_scalar, check_type
from paperplug_drift.calls import as_calls
from paperplug_drift.isolator import InjectionIsolator, Isolation, LLMDetector
from paperplug_drift.planner import Plan, SecurePlanner
from paperplug_drift.privileges import Privilege, PrivilegeAssigner
from paperplug_drift.toolsets import tool_specs
from paperplug_drift.usage import Usage
from paperplug_drift.validator import Decision, DynamicValidator, IntentJudge, StrictJudge


@dataclass
class DriftConfig:
    """The paper's limits and switches (official defaults). `fail_closed`: every parse failure
    refuses (the official code lets it pass). `align`: see DynamicValidator."""

    max_iters: int = 15  # agent turns after the first (DRIFTToolsExecutionLoop)
    max_messages: int = 20  # the agent stops once the conversation is longer
    mask_limitation: int = 1  # extra detection rounds when nothing could be removed
    planner_retries: int = 3  # planner and checklist-normalisation tries
    fail_closed: bool = True
    align: str = "position"
    repeat_reads: bool = True  # a repeated Read call runs again (officially: dropped)
    isolate: bool = True  # the Injection Isolator on every tool result
    validate: bool = True  # the Dynamic Validator on every batch of calls
    max_new_tokens: int = 768  # the planner's, normaliser's and detector's reply budget

    def __post_init__(self) -> None:
        for name in ("max_iters", "max_messages", "planner_retries", "max_new_tokens"):
            check_scalar(getattr(self, name), name, "int", low=1)
        check_scalar(self.mask_limitation, "mask_limitation", "int", low=0)
        check_choice(self.align, "align", ("position", "official"))
        for name in ("fail_closed", "repeat_reads", "isolate", "validate"):
            check_type(getattr(self, name), name, bool)


class DriftSession:
    """One task under DRIFT: its plan, privileges, validator and isolator, and its counters."""

    def __init__(
        self,
        query: str,
        plan: Plan,
        privileges: dict[str, Privilege],
        validator: DynamicValidator,
        isolator: InjectionIsolator,
        config: DriftConfig,
        usage: Usage,
    ) -> None:
        self.query, self.plan, self.privileges = query, plan, privileges
        self.validator, self.isolator, self.config, self.usage = validator, isolator, config, usage
        self.decisions: list[Decision] = []
        self.isolations: list[Isolation] = []
        self.results = 0  # tool results isolated in this task, this request's and earlier ones

    def validate(self, calls: list[Any]) -> Decision:
        """The Dynamic Validator on one batch (everything allowed when validation is off)."""
        if not self.config.validate:
            return Decision(allowed=as_calls(calls))
        decision = self.validator.validate(calls, self.query)
        self.decisions.append(decision)
        return decision

    def isolate(self, result: Any) -> Isolation:
        """The Injection Isolator on one tool result (text, JSON, YAML, a table, HTML, a dict or
        a list; kept in its own format and type), unchanged when isolation is off."""
        self.results += 1
        if not self.config.isolate:
            return Isolation(result)
        isolation = self.isolator.isolate(self.query, result)
        self.isolations.append(isolation)
        return isolation


class Drift:
    """DRIFT configured once: with `model` (any ChatModel) every stage uses it as the paper
    does; without one, the LLM-free core: name-heuristic privileges, `StrictJudge`, the
    `HeuristicDetector` isolator, and a plan you pass (`oracle_plan`, your own) or a
    `planner` object with `plan(query, tools, **context)`. Any stage can be overridden;
    `detector` may be a list (`[HeuristicDetector(), LLMDetector(model)]`: both) or a name:
    "cues", "learned", "both" or "probe" (the MiniLM detectors; `[learned]` extra)."""

    def __init__(
        self,
        model: Any = None,
        *,
        planner: Any = None,
        privileges: PrivilegeAssigner | None = None,
        judge: Any = None,
        detector: Any = None,
        config: DriftConfig | None = None,
        usage: Usage | None = None,
    ) -> None:
        if model is not None:
            check_type(model, "model", ChatModel, what="a ChatModel with chat(messages)")
        self.config = DriftConfig() if config is None else check_type(config, "config", DriftConfig)
        if usage is not None:
            check_type(usage, "usage", Usage)
        self.usage = usage if usage is not None else Usage()
        if planner is None and model is not None:
            planner = SecurePlanner(
                model, max_retries=self.config.planner_retries, usage=self.usage
            )
        if planner is not None and not callable(getattr(planner, "plan", None)):
            raise TypeError(
                f"planner must have plan(query, tools, **context), got {type(planner).__name__}"
            )
        self.planner = planner
        if privileges is not None:
            check_type(privileges, "privileges", PrivilegeAssigner)
        self.privileges = privileges or PrivilegeAssigner(model, usage=self.usage)
        if judge is None:
            judge = (
                IntentJudge(model, fail_closed=self.config.fail_closed, usage=self.usage)
                if model is not None
                else StrictJudge()
            )
        if not callable(getattr(judge, "judge", None)):
            raise TypeError(
                f"judge must have judge(planned, extended, query), got {type(judge).__name__}"
            )
        self.judge = judge
        if detector is None and model is not None:
            detector = LLMDetector(model, max_tokens=self.config.max_new_tokens, usage=self.usage)
        self.detector = detector  # None: the heuristic detector
        self.isolator = InjectionIsolator(
            detector,
            mask_limitation=self.config.mask_limitation,
            fail_closed=self.config.fail_closed,
            usage=self.usage,
        )

    def session(
        self,
        query: str,
        tools: Any,
        *,
        plan: Plan | None = None,
        privileges: dict[str, Privilege] | None = None,
        **context: Any,
    ) -> DriftSession:
        """Start a task: assign privileges (cached per toolset; or the given ones, e.g. an
        earlier request's), plan (unless `plan` is given), and build the validator and
        isolator. `context` goes to the planner (AgentDojo's oracle reads `env` there)."""
        if not check_type(query, "query", str).strip():
            raise ValueError("query must be a non-empty string")
        check_type(plan, "plan", (Plan, type(None)), what="a Plan or None")
        specs = tool_specs(tools)
        if privileges is None:
            privileges = self.privileges.assign(specs)
        if plan is None:
            if self.planner is None:
                raise ValueError(
                    "no plan: give Drift a model or a planner, or pass plan= (e.g. oracle_plan)"
                )
            plan = self.planner.plan(query, specs, **context)
        if not isinstance(plan, Plan):
            raise TypeError(f"the planner returned {type(plan).__name__}, not a Plan")
        validator = DynamicValidator(
            plan,
            privileges,
            self.judge,
            fail_closed=self.config.fail_closed,
            align=self.config.align,
            repeat_reads=self.config.repeat_reads,
            usage=self.usage,
        )
        return DriftSession(
            query, plan, privileges, validator, self.isolator, self.config, self.usage
        )
