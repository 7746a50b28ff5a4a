"""Held-out measurement: per held-out query, the full benign catalog plus the attack tool,
shuffled, and the victim's choice; benign accuracy and utility on the same queries."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from paperplug.checks import check_scalar, check_sequence, check_type
from paperplug_ama.arguments import check_catalog, check_pool, check_task, check_tool, check_victim
from paperplug_ama.estimation import TaskPool, insert_and_shuffle
from paperplug_ama.scenarios import Task


def _checked(tool: Any, pool: Any, victim: Any, seed: Any) -> list:
    """The pool, after the tool (unless None), pool, victim and seed are checked."""
    if tool is not None:
        check_tool(tool)
    pool = check_pool(pool)
    check_victim(victim)
    check_scalar(seed, "seed", "int", low=0)
    return pool


def _slate(catalog: Any, seed: int, index: int) -> tuple[list, random.Random]:
    rng = random.Random(seed * 1_000_003 + index)
    slate = list(catalog)
    rng.shuffle(slate)
    return slate, rng


def held_out_choices(
    tool: Mapping[str, Any], pool: TaskPool, victim: Any, *, seed: int = 0
) -> list[tuple[bool, bool]]:
    """Per task, from one victim call on its whole catalog plus the attack tool: (was the
    attack tool selected, was the gold tool selected); the order is fixed by `seed` and the
    task's index, so every measure below sees the same slates."""
    pool = _checked(tool, pool, victim, seed)
    out = []
    for i, (task, catalog) in enumerate(pool):
        slate, rng = _slate(catalog, seed, i)
        tools, at = insert_and_shuffle(tool, slate, rng)
        chosen = victim.select(task.query, tools)
        out.append((at in chosen, any(tools[j]["name"] == task.gold for j in chosen)))
    return out


def selects_attack(
    tool: Mapping[str, Any], task: Task, catalog: Any, victim: Any, *, seed: int = 0, index: int = 0
) -> bool:
    """Does the victim select the attack tool for `task` from its whole catalog plus the tool
    (the order is fixed by `seed` and the task's `index`)."""
    check_tool(tool)
    check_task(task)
    catalog = check_catalog(catalog)
    check_victim(victim)
    check_scalar(seed, "seed", "int", low=0)
    check_scalar(index, "index", "int", low=0)
    slate, rng = _slate(catalog, seed, index)
    tools, at = insert_and_shuffle(tool, slate, rng)
    return at in victim.select(task.query, tools)


def attack_success(
    tool: Mapping[str, Any], pool: TaskPool, victim: Any, *, seed: int = 0
) -> list[bool]:
    """Per task: did the victim select the attack tool among the whole catalog (AMA's ASR)."""
    return [hit for hit, _ in held_out_choices(tool, pool, victim, seed=seed)]


def benign_choices(pool: TaskPool, victim: Any, *, seed: int = 0) -> list[list[str]]:
    """Per task, the names the victim selects from the benign catalog alone."""
    pool = _checked(None, pool, victim, seed)
    out = []
    for i, (task, catalog) in enumerate(pool):
        slate, _ = _slate(catalog, seed, i)
        out.append([slate[j]["name"] for j in victim.select(task.query, slate)])
    return out


def benign_accuracy(pool: TaskPool, victim: Any, *, seed: int = 0) -> float:
    """Fraction of tasks whose gold tool the victim selects without the attack (top-1 accuracy)."""
    chosen = benign_choices(pool, victim, seed=seed)
    pool = check_pool(pool)
    return sum(t.gold in c for (t, _), c in zip(pool, chosen, strict=True)) / len(pool)


def utility_under_attack(
    tool: Mapping[str, Any], pool: TaskPool, victim: Any, *, seed: int = 0
) -> float:
    """Fraction of tasks whose gold tool is still selected with the attack tool present
    (for a top-k slate: still in the slate the agent receives)."""
    kept = [gold for _, gold in held_out_choices(tool, pool, victim, seed=seed)]
    return sum(kept) / len(kept)


def held_out_curve(
    entries: Sequence[Any], pool: TaskPool, victim: Any, *, seed: int = 0
) -> list[tuple[int, float]]:
    """(victim queries, held-out ASR of the best-so-far candidate) at each scored candidate:
    the ASR-versus-evaluations curve, measured on queries the attack never saw. `entries`:
    ScoredCandidates or their `to_dict()` records (`result.meta["groups"][i]["history"]`)."""
    _checked(None, pool, victim, seed)
    records = []
    for i, e in enumerate(check_sequence(entries, "entries", min_len=0)):
        e = e.to_dict() if callable(getattr(e, "to_dict", None)) else e
        check_type(e, f"entries[{i}]", Mapping, what="a ScoredCandidate or its record")
        missing = {"name", "description", "sr", "queries"} - set(e)
        if missing:
            raise ValueError(f"entries[{i}] lacks {sorted(missing)}")
        check_scalar(e["sr"], f"entries[{i}]['sr']", low=0, high=1)
        check_scalar(e["queries"], f"entries[{i}]['queries']", "int", low=0)
        records.append(e)
    curve, best_sr, rate = [], -1.0, 0.0
    for e in records:
        if e["sr"] > best_sr:
            best_sr = e["sr"]
            tool = {"name": e["name"], "description": e["description"]}
            flags = attack_success(tool, pool, victim, seed=seed)
            rate = sum(flags) / len(flags)
        curve.append((e["queries"], rate))
    return curve
