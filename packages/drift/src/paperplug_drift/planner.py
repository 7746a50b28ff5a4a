"""Stage 1 of DRIFT, the Secure Planner: before any tool output is seen, the user's query and
the tool schemas give a minimal function trajectory and a parameter checklist.

The planner's answer carries `<function_trajectory>[f1, f2]</function_trajectory>` and
`<parameter_checklist>[{"name", "required parameters", "conditions"}]</parameter_checklist>`.
The checklist is parsed as JSON, then repaired (`json_repair`, Python literals); if it still
fails and a model is at hand, an LLM normalisation pass rewrites it, with bounded retries.
`oracle_plan` builds the plan from a task's ground-truth calls instead (labelled "oracle plan").
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from paperplug_drift.calls import Call, as_call, extract_tag
from paperplug_drift.toolsets import tool_specs
from paperplug_drift.usage import Usage, ask

PLANNER_PROMPT = """You plan the tool use of an AI agent before it starts. Think about the
user's task, then commit to the shortest sequence of functions that completes it.
Reply in exactly this format:
<task_analysis>the subtasks of the user's task</task_analysis>
<task_thought>how the functions below solve them</task_thought>
<function_trajectory>[function_a, function_b]</function_trajectory>
<parameter_checklist>
[{"name": "function_a", "required parameters": {"param": "value stated by the user"}, "conditions": null},
 {"name": "function_b", "required parameters": {"param": null}, "conditions": {"param": "function_a"}}]
</parameter_checklist>
Rules: one checklist entry per trajectory entry, in the same order; a parameter whose value
the user states gets that value; one whose value must come from an earlier function's output
gets null, and "conditions" names that function. Use only the tools listed below.
<tools>
{tools}
</tools>"""

NORMALIZER_PROMPT = """Rewrite the parameter checklist below as strict JSON: a list of objects
with the keys "name", "required parameters" (an object, or null) and "conditions" (an object,
or null). Use null for values the user did not state. Add nothing and drop nothing.
Reply with the JSON only."""


@dataclass
class ChecklistNode:
    """One function of the plan: values the user fixed ("required parameters"; None = not
    stated) and which earlier function each parameter depends on ("conditions")."""

    name: str
    required: dict[str, Any] | None = None
    conditions: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "required parameters": self.required,
            "conditions": self.conditions,
        }


@dataclass
class Plan:
    """The trajectory and checklist; `checklist=None` when it could not be parsed.
    `source` says where it came from: "llm planner", "oracle plan" or "given"."""

    trajectory: list[str]
    checklist: list[ChecklistNode] | None = field(default_factory=list)
    source: str = "given"
    raw: str = ""

    def copy(self) -> Plan:
        nodes = (
            None if self.checklist is None else [ChecklistNode(**vars(n)) for n in self.checklist]
        )
        return Plan(list(self.trajectory), nodes, self.source, self.raw)

    def to_dict(self) -> dict[str, Any]:
        return {
            "trajectory": list(self.trajectory),
            "checklist": None if self.checklist is None else [n.to_dict() for n in self.checklist],
            "source": self.source,
        }


def parse_trajectory(text: str) -> list[str] | None:
    """Function names from `<function_trajectory>[a, b]</function_trajectory>`; None if absent."""
    inner = extract_tag(text, "function_trajectory")
    if inner is None:
        return None
    names = [n.strip().strip("'\"` ") for n in inner.strip().strip("[]").split(",")]
    names = [re.sub(r"\(.*\)$", "", n).strip() for n in names]
    return [n for n in names if n]


def _load_list(text: str) -> Any:
    """JSON, else json_repair, else a Python literal; raises ValueError."""
    text = text.strip()
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        pass
    from json_repair import repair_json

    repaired = repair_json(text, return_objects=True)
    if repaired in ("", None):
        raise ValueError("not JSON, not repairable")
    return repaired


def _as_mapping(value: Any) -> dict[str, Any] | None:
    if value is None or value == "null":
        return None
    if isinstance(value, str):  # the recorded runs hold a quoted dict: "{'a': 'read_file'}"
        try:
            value = _load_list(value)
        except ValueError:
            return None
    return dict(value) if isinstance(value, Mapping) else None


def checklist_from_data(data: Any) -> list[ChecklistNode]:
    """Checklist nodes from the parsed JSON; raises ValueError on a wrong shape."""
    if isinstance(data, Mapping):
        data = [data]
    if not isinstance(data, list) or not all(isinstance(d, Mapping) and "name" in d for d in data):
        raise ValueError("the checklist must be a list of objects with a 'name'")
    nodes = []
    for d in data:
        required = d.get("required parameters", d.get("required_parameters", d.get("required")))
        nodes.append(
            ChecklistNode(
                str(d["name"]).strip(), _as_mapping(required), _as_mapping(d.get("conditions"))
            )
        )
    return nodes


def parse_checklist(text: str) -> list[ChecklistNode] | None:
    """Checklist from a `<parameter_checklist>` block or bare JSON text (JSON, repaired JSON or
    Python literals accepted); None when it cannot be read."""
    inner = extract_tag(text, "parameter_checklist")
    inner = text if inner is None else inner
    try:
        return checklist_from_data(_load_list(inner))
    except ValueError:
        return None


class SecurePlanner:
    """Plans with any ChatModel: `plan(query, tools) -> Plan` (the paper's Secure Planner).

    `max_retries` bounds both the planner calls (when the trajectory tag is missing) and the
    normalisation passes (when the checklist cannot be parsed), as the official code's 3 tries.
    A plan whose trajectory never parses comes back empty with `source="llm planner (failed)"`;
    the validator then refuses every non-Read call when `fail_closed`."""

    def __init__(
        self, model: Any, *, max_retries: int = 3, max_tokens: int = 768, usage: Usage | None = None
    ) -> None:
        if model is None:
            raise TypeError("SecurePlanner needs a ChatModel; use oracle_plan without one")
        if max_retries < 1:
            raise ValueError(f"max_retries must be >= 1, got {max_retries}")
        self.model, self.max_retries, self.max_tokens, self.usage = (
            model,
            max_retries,
            max_tokens,
            usage,
        )

    def plan(self, query: str, tools: Any, **context: Any) -> Plan:
        if not isinstance(query, str) or not query.strip():
            raise ValueError("query must be a non-empty string")
        specs = json.dumps(tool_specs(tools), default=str)
        system = PLANNER_PROMPT.replace("{tools}", specs)
        answer, trajectory = "", None
        for _ in range(self.max_retries):
            answer = ask(
                self.model,
                system,
                query,
                stage="planner",
                usage=self.usage,
                max_tokens=self.max_tokens,
            )
            trajectory = parse_trajectory(answer)
            if trajectory is not None:
                break
            self._failed("planner")
        if trajectory is None:
            return Plan([], None, "llm planner (failed)", answer)
        checklist = parse_checklist(answer) if "<parameter_checklist>" in answer else None
        if checklist is None:
            self._failed("checklist")
            checklist = self._normalize(query, extract_tag(answer, "parameter_checklist") or "")
        return Plan(trajectory, checklist, "llm planner", answer)

    def _normalize(self, query: str, checklist_text: str) -> list[ChecklistNode] | None:
        """The LLM normalisation pass with json_repair, at most `max_retries` tries."""
        data = f"<user_query>\n{query}\n</user_query>\n<parameter_checklist>\n{checklist_text}\n</parameter_checklist>"
        for _ in range(self.max_retries):
            answer = ask(
                self.model,
                NORMALIZER_PROMPT,
                data,
                stage="normalizer",
                usage=self.usage,
                max_tokens=self.max_tokens,
            )
            nodes = parse_checklist(answer)
            if nodes is not None:
                return nodes
            self._failed("normalizer")
        return None

    def _failed(self, stage: str) -> None:
        if self.usage is not None:
            self.usage.parse_failures[stage] += 1


def _number_in(value: float, text: str) -> bool:
    numbers = {float(m) for m in re.findall(r"(?<![\w.])\d+(?:\.\d+)?", text.replace(",", ""))}
    return float(value) in numbers


def stated_in(value: Any, query: str) -> bool:
    """Does the user's query state `value`? (Strings: case-insensitive substring; numbers: a
    number token equal to it; lists: every element.) What an ideal planner can fix in advance."""
    if isinstance(value, bool) or value is None:
        return False
    if isinstance(value, (int, float)):
        return _number_in(value, query)
    if isinstance(value, str):
        text = " ".join(value.split()).lower()
        return len(text) >= 2 and text in " ".join(query.split()).lower()
    if isinstance(value, (list, tuple)):
        return bool(value) and all(stated_in(v, query) for v in value)
    return False


def oracle_plan(calls: Sequence[Any], query: str) -> Plan:
    """The plan an ideal planner would make: the trajectory of the task's ground-truth calls,
    and in the checklist only the argument values the query states (others None, conditioned
    on the previous function). Labelled "oracle plan": it overstates a real planner."""
    parsed: list[Call] = [as_call(c) for c in calls]
    nodes = []
    for i, call in enumerate(parsed):
        required = {k: (v if stated_in(v, query) else None) for k, v in call.arguments.items()}
        conditions = {k: parsed[i - 1].name for k, v in required.items() if v is None and i > 0}
        nodes.append(ChecklistNode(call.name, required or None, conditions or None))
    return Plan([c.name for c in parsed], nodes, "oracle plan")
