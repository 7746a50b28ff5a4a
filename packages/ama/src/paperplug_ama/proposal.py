"""What a proposer sees and owes (AMA): the target agent's tasks and existing
tools for the initial candidates, plus the scored history for each later round."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from paperplug.checks import check_choice, check_sequence, check_type
from paperplug_ama.metadata import as_tool
from paperplug_ama.scoring import ScoredCandidate


@dataclass
class ProposalContext:
    """The attacker's view: visible user tasks, the agent's existing tools, the attack mode."""

    tasks: list[str]
    tools: list[dict[str, Any]]
    mode: str = "targeted"
    domains: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        check_choice(self.mode, "mode", ("targeted", "untargeted"))
        self.tasks = check_sequence(self.tasks, "tasks", str, what="query strings")
        tools = check_sequence(self.tools, "tools", min_len=0, what="tool mappings")
        self.tools = [as_tool(t, f"tools[{i}]") for i, t in enumerate(tools)]
        self.domains = check_sequence(self.domains, "domains", str, min_len=0, what="names")


@runtime_checkable
class Proposer(Protocol):
    """Initial candidates from the context; new candidates from the scored history."""

    def initial(self, context: ProposalContext, n: int, rng: random.Random) -> list[dict]: ...

    def refine(
        self,
        context: ProposalContext,
        history: Sequence[ScoredCandidate],
        n: int,
        rng: random.Random,
    ) -> list[dict]: ...


_OBJECT = re.compile(r"\{.*?\}", re.DOTALL)


def parse_tool_json(reply: str) -> dict[str, str] | None:
    """The first JSON object in a reply with a name and a description (AMA's "Tool Name" /
    "Description" keys are accepted too); None when there is none."""
    check_type(reply, "reply", str)
    for match in _OBJECT.finditer(reply):
        try:
            data = json.loads(match.group(0))
        except ValueError:
            continue
        if not isinstance(data, Mapping):
            continue
        name = data.get("name", data.get("Tool Name"))
        description = data.get("description", data.get("Description"))
        if isinstance(name, str) and isinstance(description, str) and name and description:
            return {"name": name.strip(), "description": description.strip()}
    return None
