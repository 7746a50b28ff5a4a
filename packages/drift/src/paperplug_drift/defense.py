"""DRIFT as a tool-stage Defense (the registered component "drift"): composes in a
`paperplug.Guard` around any agent loop that asks the guard about every proposed call
(context phase "call") and every tool result (phase "result"), as paperplug-llm's
`run_agent(..., guard=guard)` and `guard.wrap(chat_model, tools)` do.

A call is validated (duplicate, trajectory, checklist); a refused call is an invalid verdict
whose reason is DRIFT's refusal message, which the agent reads. A result is isolated: the
verdict's payload is the masked result (valid), or invalid when its check failed closed.
One session per conversation: the user's task (`context["prompt"]`) keys it, and a
conversation holding fewer tool results than the session has seen starts a new one.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from paperplug import Verdict
from paperplug_drift.drift import Drift, DriftConfig, DriftSession
from paperplug_drift.planner import Plan
from paperplug_drift.toolsets import tool_specs


class DriftDefense:
    """`DriftDefense(model, tools)`: every stage on `model`; `DriftDefense(tools=..., plan=...)`
    or `planner=`: the LLM-free core. `drift=` takes a configured `Drift` instead."""

    stage = "tool"
    name = "drift"

    def __init__(
        self,
        model: Any = None,
        tools: Any = None,
        *,
        plan: Plan | None = None,
        planner: Any = None,
        drift: Drift | None = None,
        config: DriftConfig | None = None,
    ) -> None:
        if plan is not None and not isinstance(plan, Plan):
            raise TypeError(f"plan must be a Plan, got {type(plan).__name__}")
        self.drift = drift if drift is not None else Drift(model, planner=planner, config=config)
        if plan is None and self.drift.planner is None:
            raise ValueError("DriftDefense needs a model, a planner or a plan")
        self.specs = tool_specs(tools) if tools is not None else []
        self.plan = plan
        self.sessions: dict[str, DriftSession] = {}
        self._results: dict[str, int] = {}

    def _session(self, prompt: str, messages: Any) -> DriftSession:
        tool_messages = sum(
            1 for m in messages or () if isinstance(m, Mapping) and m.get("role") == "tool"
        )
        if prompt not in self.sessions or tool_messages < self._results.get(prompt, 0):
            self.sessions[prompt] = self.drift.session(prompt, self.specs, plan=self.plan)
            self._results[prompt] = 0
        return self.sessions[prompt]

    def check(self, payload: Any, context: Mapping[str, Any] | None = None) -> Verdict:
        context = context or {}
        prompt = context.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            raise ValueError("DriftDefense needs the user's task in context['prompt']")
        is_call = isinstance(payload, Mapping) and "name" in payload
        phase = context.get("phase", "call" if is_call else "result")
        session = self._session(prompt, context.get("messages"))
        if phase == "call":
            decision = session.validate([payload])
            details = decision.to_dict()
            if decision.refused:
                return Verdict(payload, False, 1.0, reason=decision.message, details=details)
            if decision.dropped:
                reason = f"DRIFT drops a repeated call to {payload['name']} with the same arguments"
                return Verdict(payload, False, 0.5, reason=reason, details=details)
            return Verdict(payload, True, 0.0, details=details)
        self._results[prompt] = self._results.get(prompt, 0) + 1
        text = payload if isinstance(payload, str) else json.dumps(payload, default=str)
        isolation = session.isolate(text)
        details = isolation.to_dict()
        if isolation.withheld:
            return Verdict(isolation.text, False, 1.0, reason=isolation.text, details=details)
        if not isolation.found:
            return Verdict(payload, True, 0.0, reason="nothing found", details=details)
        reason = f"removed {len(isolation.removed)} injected instruction(s)"
        return Verdict(isolation.text, True, 1.0, reason=reason, details=details)
