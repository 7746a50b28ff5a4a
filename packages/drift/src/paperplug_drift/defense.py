"""DRIFT as a tool-stage Defense (the registered component "drift"): composes in a
`paperplug.Guard` around any agent loop that asks the guard about every proposed call
(context phase "call") and every tool result (phase "result"), as paperplug-llm's
`run_agent(..., guard=guard)` and `guard.wrap(chat_model, tools)` do.

A call is validated (duplicate, trajectory, checklist); a refused call is an invalid verdict
whose reason is DRIFT's refusal message, which the agent reads. A result is isolated: the
verdict's payload is the masked result in the tool's own format and type (a dict stays a
dict, JSON text stays JSON text), or invalid when its check failed closed. Built without
tools, a session takes the tool schemas of its request from `context["tools"]` (OpenAI's
format, as on the wire).

The session's state (the plans, privileges, achieved trajectory and the calls that ran) lives
in a `paperplug.state` store, never in the defense. On the wire it is the view in
`context["state"]` that paperplug-gateway hands each check (in process or in Redis, kept only
when the check answered in time), keyed by the conversation's history: a request continues
from the state its own history left, so two runs of one task at once never reset each other.
Without one (an agent loop in process), the defense's own store keys it by
`context["conversation_id"]` and the task, and a conversation holding fewer tool results than
the session has seen starts a new one. A new user task (`context["prompt"]`) starts a new
session either way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from paperplug import Verdict
from paperplug.checks import check_choice, check_context, check_type
from paperplug.state import ConversationState, MemoryStore, StateStore, history_keys
from paperplug_drift.calls import as_call
from paperplug_drift.drift import Drift, DriftConfig, DriftSession
from paperplug_drift.planner import Plan, QueryPlanner
from paperplug_drift.privileges import Privilege
from paperplug_drift.toolsets import tool_specs

PHASES = ("call", "result")


def _is_call(payload: Any) -> bool:
    """A proposed call: {"name", "arguments"} (or AgentDojo's {"function", "args"}, OpenAI's
    {"type": "function", "function": {...}}), not a tool result that happens to hold a name."""
    if not isinstance(payload, Mapping):
        return False
    return ("name" in payload and ("arguments" in payload or "args" in payload)) or isinstance(
        payload.get("function"), (str, Mapping)
    )


def _tool_messages(context: Mapping[str, Any]) -> int:
    messages = context.get("messages") or ()
    return sum(1 for m in messages if isinstance(m, Mapping) and m.get("role") == "tool")


class DriftDefense:
    """`DriftDefense(model, tools)`: every stage on `model`; `DriftDefense(tools=..., plan=...)`
    or `planner=` (a planner, or "query" for the LLM-free `QueryPlanner`): the LLM-free core.
    `drift=` takes a configured `Drift` instead. `detector` picks the isolator's detector
    ("cues", "learned", "both", or a detector object; default: the model's LLM detector, or
    the cues without a model). `store` keeps the sessions when a check's context brings no
    state view (default: an in-process `MemoryStore`, bounded, with a TTL)."""

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
        detector: Any = None,
        store: StateStore | None = None,
    ) -> None:
        if plan is not None:
            check_type(plan, "plan", Plan)
        if planner == "query":
            planner = QueryPlanner()
        if drift is not None:
            self.drift = check_type(drift, "drift", Drift)
        else:
            self.drift = Drift(model, planner=planner, detector=detector, config=config)
        if plan is None and self.drift.planner is None:
            raise ValueError("DriftDefense needs a model, a planner or a plan")
        self.specs = tool_specs(tools) if tools is not None else []
        self.plan = plan
        if store is not None:
            check_type(store, "store", StateStore, what="a state store (get_many, set)")
        self.store = store if store is not None else MemoryStore()

    def _state(self, context: Mapping[str, Any]) -> tuple[ConversationState, bool]:
        """(the check's state view, whether this defense made it and so commits it). Its own
        view keys the session by the conversation and the task, as one agent loop in process
        needs."""
        state = context.get("state")
        if state is not None:
            return check_type(state, "context['state']", ConversationState), False
        task = history_keys([{"role": "user", "content": context["prompt"]}])
        return ConversationState(self.store, f"drift:{context.get('conversation_id')}", task), True

    def _session(self, context: Mapping[str, Any], state: ConversationState) -> DriftSession:
        """The conversation's session where its history left it (a new one for a new task,
        with the request's tools if none were given)."""
        prompt = context["prompt"]
        saved = state.get("session")
        specs = self.specs or tool_specs(context.get("tools") or [])
        if saved is None or saved["query"] != prompt or saved["results"] > _tool_messages(context):
            # (a history holding fewer tool results than the state saw: another run of the task)
            return self.drift.session(prompt, specs, plan=self.plan)
        privileges = {k: Privilege(v) for k, v in saved["privileges"].items()}
        session = self.drift.session(
            prompt, specs, plan=Plan.from_dict(saved["validator"]["plan"]), privileges=privileges
        )
        session.validator.restore(saved["validator"])
        session.results = saved["results"]
        return session

    @staticmethod
    def _save(session: DriftSession, state: ConversationState, commit: bool) -> None:
        state.set(
            "session",
            {
                "query": session.query,
                "privileges": {k: v.value for k, v in session.privileges.items()},
                "validator": session.validator.state(),
                "results": session.results,
            },
        )
        if commit:
            state.commit()

    def check(self, payload: Any, context: Mapping[str, Any] | None = None) -> Verdict:
        """Validate a proposed call (phase "call") or isolate a tool result (phase "result");
        the phase comes from `context["phase"]`, else from the payload's shape."""
        context = check_context(context)
        prompt = context.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            raise ValueError("DriftDefense needs the user's task in context['prompt']")
        phase = context.get("phase", "call" if _is_call(payload) else "result")
        check_choice(phase, "context['phase']", PHASES)
        if phase == "call":
            try:
                call = as_call(payload)
            except TypeError as exc:
                raise TypeError(f"payload must be a function call in phase 'call': {exc}") from None
        state, own = self._state(context)
        session = self._session(context, state)
        if phase == "call":
            decision = session.validate([call])
            self._save(session, state, own)
            details = decision.to_dict()
            if decision.refused:
                return Verdict(payload, False, 1.0, reason=decision.message, details=details)
            if decision.dropped:
                reason = f"DRIFT drops a repeated call to {call.name} with the same arguments"
                return Verdict(payload, False, 0.5, reason=reason, details=details)
            return Verdict(payload, True, 0.0, details=details)
        try:
            isolation = session.isolate(payload)
        except TypeError as exc:
            raise TypeError(f"payload (a tool result) cannot be read: {exc}") from None
        self._save(session, state, own)
        details = isolation.to_dict()
        if isolation.withheld:
            return Verdict(isolation.result, False, 1.0, reason=isolation.result, details=details)
        if not isolation.found:
            return Verdict(payload, True, 0.0, reason="nothing found", details=details)
        reason = f"removed {len(isolation.removed)} injected instruction(s)"
        return Verdict(isolation.result, True, 1.0, reason=reason, details=details)
