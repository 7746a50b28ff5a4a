"""Stage 0 of DRIFT: a privilege per tool (Read / Write / Execute), assigned once per toolset.

The paper asks an LLM to classify each tool from its name, description and schema (A = Read,
B = Write, C = Execute). Only Read matters downstream: the Dynamic Validator approves a Read
deviation from the plan without asking the judge. Without a model, or when its answer cannot
be parsed, a name heuristic decides (counted as a parse failure).
"""

from __future__ import annotations

import json
import re
from enum import StrEnum
from typing import Any

from paperplug import ChatModel
from paperplug.checks import check_type
from paperplug_drift.toolsets import tool_specs, toolset_key
from paperplug_drift.usage import Usage, ask


class Privilege(StrEnum):
    """What a tool may do (the paper's three levels): a Read tool only observes, a Write tool
    changes state, an Execute tool runs code; a deviation to Write or Execute is checked."""

    READ = "Read"
    WRITE = "Write"
    EXECUTE = "Execute"


# Verbs of tool names, by the privilege they imply. The first verb token of a name decides
# (`git_get_linked_ssh_keys` -> get -> Read; `cart_add_product` -> add -> Write).
READ_VERBS = frozenset(
    {
        "get",
        "read",
        "search",
        "list",
        "view",
        "check",
        "find",
        "lookup",
        "query",
        "fetch",
        "show",
        "describe",
        "count",
        "retrieve",
        "look",
        "browse",
        "inspect",
        "peek",
    }
)
EXECUTE_VERBS = frozenset(
    {
        "send",
        "post",
        "share",
        "invite",
        "call",
        "verify",
        "login",
        "logout",
        "input",
        "execute",
        "run",
        "submit",
        "email",
        "message",
        "notify",
        "publish",
        "transfer",
        "pay",
    }
)
WRITE_VERBS = frozenset(
    {
        "add",
        "append",
        "create",
        "delete",
        "remove",
        "update",
        "set",
        "reschedule",
        "schedule",
        "cancel",
        "reserve",
        "book",
        "move",
        "copy",
        "rename",
        "write",
        "edit",
        "modify",
        "insert",
        "clear",
        "checkout",
        "refund",
        "push",
        "pull",
        "clone",
        "star",
        "unstar",
        "download",
        "upload",
        "install",
        "uninstall",
        "change",
        "reset",
        "grant",
        "revoke",
    }
)

PRIVILEGE_PROMPT = """You classify one tool of an AI agent by what it does when called.
Answer with a single letter:
A. Read: it only looks up or returns data; nothing changes.
B. Write: it changes stored data (creates, updates, deletes, moves, books, pays).
C. Execute: it acts towards third parties (sends, posts, shares, invites, runs).
Answer A, B or C and nothing else."""


def heuristic_privilege(name: str) -> Privilege:
    """Privilege from the tool's name: the first verb token decides; no known verb -> Write
    (the cautious side: a Write deviation goes to the judge, a Read one does not)."""
    if not isinstance(name, str) or not name.strip():
        raise TypeError(f"name must be a tool's name (a non-empty string), got {name!r}"[:200])
    for token in re.split(r"[_\W]+|(?<=[a-z])(?=[A-Z])", name):
        token = token.lower()
        if token in READ_VERBS:
            return Privilege.READ
        if token in EXECUTE_VERBS:
            return Privilege.EXECUTE
        if token in WRITE_VERBS:
            return Privilege.WRITE
    return Privilege.WRITE


def parse_privilege(answer: str) -> Privilege | None:
    """A, B or C (or the words Read, Write, Execute) as the answer's first token; else None."""
    match = re.match(r"\W*(A|B|C|Read|Write|Execute)\b", (answer or "").strip(), re.I)
    if not match:
        return None
    token = match.group(1).lower()
    return {
        "a": Privilege.READ,
        "read": Privilege.READ,
        "b": Privilege.WRITE,
        "write": Privilege.WRITE,
        "c": Privilege.EXECUTE,
        "execute": Privilege.EXECUTE,
    }[token]


class PrivilegeAssigner:
    """Assigns and caches privileges per toolset: `assign(tools) -> {name: Privilege}`.

    `model=None` uses the name heuristic for every tool (no LLM call). With `cross_check`
    (default), a tool is Read only when the model and the name heuristic both say so: a weak
    model that calls everything Read (SmolLM2-135M does) would otherwise let every deviation
    through unjudged. `cross_check=False` trusts the model alone, as the paper does."""

    def __init__(
        self, model: Any = None, *, cross_check: bool = True, usage: Usage | None = None
    ) -> None:
        check_type(model, "model", (ChatModel, type(None)), what="a ChatModel or None")
        check_type(cross_check, "cross_check", bool)
        check_type(usage, "usage", (Usage, type(None)), what="a Usage or None")
        self.model, self.cross_check, self.usage = model, cross_check, usage
        self.cache_: dict[str, dict[str, Privilege]] = {}

    def assign(self, tools: Any) -> dict[str, Privilege]:
        specs = tool_specs(tools)
        key = toolset_key(specs)
        if key not in self.cache_:
            self.cache_[key] = {s["name"]: self._one(s) for s in specs}
        return dict(self.cache_[key])

    def _one(self, spec: dict[str, Any]) -> Privilege:
        if self.model is None:
            return heuristic_privilege(spec["name"])
        answer = ask(
            self.model,
            PRIVILEGE_PROMPT,
            f"<tool>\n{json.dumps(spec, default=str)}\n</tool>",
            stage="privileges",
            usage=self.usage,
            max_tokens=8,
        )
        parsed, named = parse_privilege(answer), heuristic_privilege(spec["name"])
        if parsed is None:
            if self.usage is not None:
                self.usage.parse_failures["privileges"] += 1
            return named
        if self.cross_check and parsed == Privilege.READ and named != Privilege.READ:
            if self.usage is not None:
                self.usage.refusals["privilege overruled"] += 1
            return named
        return parsed
