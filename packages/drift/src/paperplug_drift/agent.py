"""The DRIFT agent loop over any ChatModel and plain Python tools (with the official
limits: at most `max_iters` turns after the first, and the run stops once the conversation
holds more than `max_messages` messages).

Each turn: the system prompt carries the tools and the execution guidelines (plan, checklist,
achieved trajectory, query); the model replies in the text protocol; the Dynamic Validator
checks the proposed calls; allowed calls run; every result passes the Injection Isolator
before it enters the conversation.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from paperplug import ChatModel
from paperplug.checks import check_scalar, check_type
from paperplug_drift.calls import Call, CallSyntaxError, extract_tag, parse_function_calls
from paperplug_drift.drift import Drift, DriftSession
from paperplug_drift.planner import Plan
from paperplug_drift.prompts import agent_system_prompt
from paperplug_drift.toolsets import tool_specs
from paperplug_drift.usage import converse


@dataclass
class ToolRun:
    """One call that ran: its result as the agent saw it (after isolation), and what the
    isolator removed."""

    call: Call
    result: str
    removed: list[str] = field(default_factory=list)


@dataclass
class DriftResult:
    """The final answer, the conversation, every call that ran, every refusal, and why the
    loop ended ("answer", "max_iters", "max_messages")."""

    text: str
    messages: list[dict[str, Any]]
    plan: Plan
    runs: list[ToolRun] = field(default_factory=list)
    refusals: list[Any] = field(default_factory=list)
    stop: str = "answer"

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "plan": self.plan.to_dict(),
            "runs": [
                {"call": r.call.to_dict(), "result": r.result, "removed": r.removed}
                for r in self.runs
            ],
            "refusals": [d.to_dict() for d in self.refusals],
            "stop": self.stop,
        }


def _run_tool(tool: Any, call: Call) -> Any:
    """The tool's result as it returned it (isolated in its own format), or an error text."""
    try:
        result = tool(**call.arguments)  # a paperplug-llm Tool validates against its schema
    except Exception as exc:  # reported to the agent, as AgentDojo's runtime does
        return f"error: {call.name} raised {type(exc).__name__}: {exc}"
    if result is None or isinstance(result, (str, int, float, bool, dict, list, tuple)):
        return result
    return json.dumps(result, default=str)  # an object the isolator cannot read field by field


class DriftAgent:
    """`DriftAgent(model, tools, drift=None).run(query)`: the agent is `model` (any ChatModel);
    DRIFT's stages come from `drift` (default `Drift(model)`, every stage on the same model)."""

    def __init__(
        self, model: Any, tools: Any, drift: Drift | None = None, *, max_tokens: int = 512
    ) -> None:
        check_type(model, "model", ChatModel, what="a ChatModel with chat(messages)")
        from paperplug_llm import as_tools

        self.model = model
        try:
            self.tools = as_tools(tools)
        except TypeError as exc:
            raise TypeError(f"tools must be callables or a mapping of them: {exc}") from None
        if not self.tools:
            raise ValueError("tools is empty: give at least one callable")
        self.specs = tool_specs(list(self.tools.values()))
        self.drift = drift if drift is not None else Drift(model)
        self.max_tokens = check_scalar(max_tokens, "max_tokens", "int", low=1)
        if drift is not None:
            check_type(drift, "drift", Drift)

    def run(self, query: str, *, plan: Plan | None = None) -> DriftResult:
        """Plan, then loop: propose, validate, run, isolate, until an answer or a limit."""
        session: DriftSession = self.drift.session(query, self.specs, plan=plan)
        config = session.config
        convo: list[dict[str, Any]] = [
            {"role": "system", "content": ""},
            {"role": "user", "content": query},
        ]
        result = DriftResult("", convo, session.plan)
        for _turn in range(config.max_iters + 1):
            if len(convo) > config.max_messages:
                result.stop = "max_messages"
                break
            convo[0]["content"] = agent_system_prompt(
                self.specs, session.validator.plan, session.validator.achieved, query
            )
            reply = converse(
                self.model, convo, stage="agent", usage=session.usage, max_tokens=self.max_tokens
            )
            convo.append({"role": "assistant", "content": reply})
            try:
                calls = parse_function_calls(extract_tag(reply, "function_call") or "")
            except CallSyntaxError as exc:
                session.usage.parse_failures["agent"] += 1
                convo.append({"role": "user", "content": f"Invalid <function_call>: {exc}"})
                continue
            if not calls:
                result.text, result.stop = extract_tag(reply, "final_answer") or "", "answer"
                break
            decision = session.validate(calls)
            if decision.refused:
                result.refusals.append(decision)
                convo.append({"role": "user", "content": decision.message})
                continue
            if not decision.allowed:  # only duplicates: the official loop ends here
                result.text, result.stop = extract_tag(reply, "final_answer") or "", "answer"
                break
            for call in decision.allowed:
                raw = (
                    _run_tool(self.tools[call.name], call)
                    if call.name in self.tools
                    else (f"error: unknown function {call.name}")
                )
                isolation = session.isolate(raw)
                result.runs.append(ToolRun(call, isolation.text, isolation.removed))
                convo.append(
                    {
                        "role": "user",
                        "content": f'<function_result name="{call.name}">\n{isolation.text}\n</function_result>',
                    }
                )
        else:
            result.stop = "max_iters"
        return result
