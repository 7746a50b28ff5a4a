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

from paperplug import ChatModel
from paperplug.checks import check_scalar, check_sequence, check_type
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

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Plan:
        """The plan `to_dict` wrote (a session's state kept in a store)."""
        nodes = data.get("checklist")
        checklist = (
            None
            if nodes is None
            else [
                ChecklistNode(n["name"], n.get("required parameters"), n.get("conditions"))
                for n in nodes
            ]
        )
        return cls(list(data["trajectory"]), checklist, data.get("source", "given"))


def parse_trajectory(text: str) -> list[str] | None:
    """Function names from `<function_trajectory>[a, b]</function_trajectory>`; None if absent."""
    check_type(text, "text", str)
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
    check_type(text, "text", str)
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
        check_type(
            model, "model", ChatModel, what="a ChatModel with chat(messages)"
        )  # oracle_plan needs none
        check_type(usage, "usage", (Usage, type(None)), what="a Usage or None")
        self.model, self.usage = model, usage
        self.max_retries = check_scalar(max_retries, "max_retries", "int", low=1)
        self.max_tokens = check_scalar(max_tokens, "max_tokens", "int", low=1)

    def plan(self, query: str, tools: Any, **context: Any) -> Plan:
        if not check_type(query, "query", str).strip():
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
    calls = check_sequence(calls, "calls", min_len=0, what="calls")
    check_type(query, "query", str)
    parsed: list[Call] = [as_call(c) for c in calls]
    nodes = []
    for i, call in enumerate(parsed):
        required = {k: (v if stated_in(v, query) else None) for k, v in call.arguments.items()}
        conditions = {k: parsed[i - 1].name for k, v in required.items() if v is None and i > 0}
        nodes.append(ChecklistNode(call.name, required or None, conditions or None))
    return Plan([c.name for c in parsed], nodes, "oracle plan")


# An LLM-free planner that sees the user's query and the tool schemas only [R]: a Write or
# Execute tool is planned when the query asks for its action (the verb of its name, or a
# synonym) and names its object when several tools share that action. Read tools need no
# plan (a Read deviation is approved). Its checklist fixes nothing: which values the query
# means for which parameter is what a language model is for.
ACTION_WORDS = {
    "send": ("send", "pay", "transfer", "wire", "e-mail", "email", "mail", "message", "dm", "write", "tell", "forward", "reply", "remit", "refund"),
    "schedule": ("schedule", "recurring", "standing order", "set up"),
    "update": ("update", "change", "modify", "edit", "correct", "fix", "adjust", "set", "reset"),
    "add": ("add", "include", "invite", "put"),
    "invite": ("invite", "add"),
    "remove": ("remove", "delete", "kick", "drop"),
    "delete": ("delete", "remove", "erase", "trash", "discard"),
    "post": ("post", "publish", "upload"),
    "create": ("create", "add", "make", "new", "schedule", "set up", "write", "organize", "organise", "put"),
    "cancel": ("cancel", "call off", "delete", "remove"),
    "reserve": ("reserve", "book", "reservation"),
    "reschedule": ("reschedule", "move", "postpone", "change", "push"),
    "append": ("append", "add"),
    "share": ("share", "grant", "give access"),
}  # fmt: skip
STOP_TOKENS = {"to", "from", "by", "for", "in", "of", "the", "a", "user", "users", "new", "all"}


def _stem(word: str) -> str:
    return re.sub(r"(?:ies|es|s|ing|ed)$", "", word.lower().replace("-", ""))[:6]


class QueryPlanner:
    """`plan(query, tools) -> Plan` without a model and without ground truth: the Write and
    Execute tools whose action the query asks for (the verb of the tool's name, else a
    synonym from ACTION_WORDS that no tool's own verb claims), in the order the query mentions
    them; the checklist leaves every parameter open. Labelled "query planner"."""

    source = "query planner"

    def plan(self, query: str, tools: Any, **context: Any) -> Plan:
        from paperplug_drift.privileges import Privilege, heuristic_privilege

        if not check_type(query, "query", str).strip():
            raise ValueError("query must be a non-empty string")
        words = re.findall(r"[a-z][a-z-]*", query.lower())
        text, stems = " ".join(words), {_stem(w) for w in words}
        chosen: list[tuple[int, str, dict[str, Any]]] = []
        by_action: dict[str, list[tuple[str, list[str], dict[str, Any]]]] = {}
        chosen_verbs: set[tuple[str, bool]] = set()
        for spec in tool_specs(tools):
            if heuristic_privilege(spec["name"]) == Privilege.READ:
                continue
            verb, *objects = spec["name"].lower().split("_")
            objects = [o for o in objects if o not in STOP_TOKENS]
            by_action.setdefault(verb, []).append((spec["name"], objects, spec))
        taken = set()  # a word of the query names one action: a tool's own verb before a synonym
        for exact in (True, False):
            for verb, candidates in by_action.items():
                words_for = (verb,) if exact else ACTION_WORDS.get(verb, ())
                said = [
                    m.start()
                    for w in words_for
                    for m in re.finditer(rf"\b{re.escape(w)}\b", text)
                    if exact or m.start() not in taken
                ]
                if not said or verb in {v for v, _ in chosen_verbs}:
                    continue
                named = [c for c in candidates if any(_stem(o) in stems for o in c[1])]
                picked = named or (candidates if len(candidates) == 1 else [])
                for name, _, spec in picked:
                    chosen.append((min(said), name, spec))
                if picked:
                    chosen_verbs.add((verb, exact))
                    taken.update(said)
        chosen.sort(key=lambda item: item[0])
        nodes = [
            ChecklistNode(name, {p: None for p in spec["parameters"].get("properties", {})} or None)
            for _, name, spec in chosen
        ]
        return Plan([n.name for n in nodes], nodes, self.source)
