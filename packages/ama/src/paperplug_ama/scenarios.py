"""Tool-use scenarios: a domain's benign tools and its user queries with their gold tools.

The embedded default holds ten domains written for this package (data/scenarios.json): 10
queries per domain that the attacker optimises on and 30 held out; and twelve other domains
(data/retriever_training.json) whose query -> tool pairs train the fine-tuned tool retriever,
never shown to the attack.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from paperplug.checks import check_scalar, check_sequence, check_type
from paperplug_ama.metadata import as_tool, make_tool


@dataclass(frozen=True)
class Task:
    """One user query and the name of the benign tool that should serve it."""

    query: str
    gold: str

    def __post_init__(self) -> None:
        for name in ("query", "gold"):
            if not check_type(getattr(self, name), name, str).strip():
                raise ValueError(f"{name} must be a non-empty string, got {getattr(self, name)!r}")


@dataclass
class Scenario:
    """A target agent: its benign tools, optimisation queries and held-out queries."""

    domain: str
    tools: list[dict[str, Any]]
    optimise: list[Task]
    held_out: list[Task]
    agent: str = ""
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_type(self.domain, "domain", str)
        if not self.domain.strip():
            raise ValueError("domain must be a non-empty name")
        check_type(self.agent, "agent", str)
        check_type(self.meta, "meta", dict)
        tools = check_sequence(self.tools, "tools", min_len=0, what="tool mappings")
        self.tools = [as_tool(t, f"tools[{i}]") for i, t in enumerate(tools)]
        for split in ("optimise", "held_out"):
            tasks = check_sequence(getattr(self, split), split, min_len=0, what="tasks")
            setattr(self, split, [_task(t, f"{split}[{i}]") for i, t in enumerate(tasks)])
        names = [t["name"] for t in self.tools]
        if len(set(names)) != len(names):
            raise ValueError(f"scenario {self.domain!r} has duplicate tool names: {names}")
        if not self.tools:
            raise ValueError(f"scenario {self.domain!r} has no benign tools")
        if not self.optimise or not self.held_out:
            raise ValueError(
                f"scenario {self.domain!r} needs optimisation and held-out queries, got "
                f"{len(self.optimise)} and {len(self.held_out)}"
            )
        for task in (*self.optimise, *self.held_out):
            if task.gold not in names:
                raise ValueError(
                    f"scenario {self.domain!r}: gold tool {task.gold!r} of {task.query!r} "
                    f"is not among its tools {names}"
                )

    @property
    def tool_names(self) -> list[str]:
        return [t["name"] for t in self.tools]

    def tasks(self, split: str) -> list[Task]:
        """The tasks of a split: "optimise" (attacker-visible) or "held_out"."""
        if split not in ("optimise", "held_out"):
            raise ValueError(f"split must be 'optimise' or 'held_out', got {split!r}")
        return list(getattr(self, split))


def _task(task: Any, name: str = "task") -> Task:
    if isinstance(task, Task):
        return task
    if isinstance(task, Mapping) and {"query", "gold"} <= set(task):
        return Task(str(task["query"]), str(task["gold"]))
    if isinstance(task, Sequence) and not isinstance(task, str) and len(task) == 2:
        return Task(str(task[0]), str(task[1]))
    raise TypeError(
        f"{name}: a task is a Task, a {{query, gold}} dict or a (query, gold) pair, got {task!r}"
    )


def scenario_from_dict(data: Mapping[str, Any], *, n_optimise: int | None = None) -> Scenario:
    """A Scenario from a dict: tools and either `optimise`/`held_out` or `queries` to split.

    With `queries`, the first `n_optimise` (default: half) are the optimisation split."""
    check_type(data, "data", Mapping, what="a mapping (domain, tools, queries)")
    missing = {"domain", "tools"} - set(data)
    if missing or ("queries" not in data and not {"optimise", "held_out"} <= set(data)):
        raise ValueError(
            "data needs 'domain', 'tools' and 'queries' (or 'optimise' and 'held_out'), got "
            f"keys {sorted(data)}"
        )
    check_scalar(n_optimise, "n_optimise", "int", low=1, allow_none=True)
    if "queries" in data:
        queries = [_task(q, f"data['queries'][{i}]") for i, q in enumerate(data["queries"])]
        cut = len(queries) // 2 if n_optimise is None else n_optimise
        if n_optimise is not None and n_optimise >= len(queries):
            raise ValueError(
                f"n_optimise must leave held-out queries: {n_optimise} of {len(queries)}"
            )
        optimise, held_out = queries[:cut], queries[cut:]
    else:
        optimise, held_out = list(data["optimise"]), list(data["held_out"])
    tools = []
    for t in data["tools"]:
        if isinstance(t, Mapping):
            tools.append(as_tool(t))
        else:  # compact form: [name, description, {param: description}]
            name, description, params = t
            tools.append(make_tool(name, description, _schema(params)))
    return Scenario(
        domain=str(data["domain"]),
        tools=tools,
        optimise=optimise,
        held_out=held_out,
        agent=str(data.get("agent", "")),
    )


def _schema(params: Mapping[str, str]) -> dict[str, Any]:
    props = {k: {"type": "string", "description": v} for k, v in params.items()}
    return {"type": "object", "properties": props, "required": list(params)}


def _load(filename: str, domains: Sequence[str] | None) -> list[Scenario]:
    text = resources.files("paperplug_ama").joinpath(f"data/{filename}").read_text("utf-8")
    found = [scenario_from_dict(d) for d in json.loads(text)["domains"]]
    if domains is None:
        return found
    domains = check_sequence(domains, "domains", str, what="domain names")
    by_name = {s.domain: s for s in found}
    unknown = [d for d in domains if d not in by_name]
    if unknown:
        raise ValueError(f"domains: unknown {unknown}; embedded: {sorted(by_name)}")
    return [by_name[d] for d in domains]


def load_scenarios(domains: Sequence[str] | None = None) -> list[Scenario]:
    """The ten embedded attack scenarios (or the named subset): 10 optimisation and 30
    held-out queries each."""
    return _load("scenarios.json", domains)


def load_retriever_domains(domains: Sequence[str] | None = None) -> list[Scenario]:
    """The twelve domains the fine-tuned retriever learns from (16 queries each, all used for
    training; their tools and queries share nothing with the attack scenarios)."""
    return _load("retriever_training.json", domains)
