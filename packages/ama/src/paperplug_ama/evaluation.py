"""Held-out measurement: per held-out query, the full benign catalog plus the attack tool,
shuffled, and the victim's choice; benign accuracy and utility on the same queries."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from paperplug_ama.estimation import TaskPool, insert_and_shuffle
from paperplug_ama.scenarios import Task


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
    out = []
    for i, (task, catalog) in enumerate(pool):
        slate, _ = _slate(catalog, seed, i)
        out.append([slate[j]["name"] for j in victim.select(task.query, slate)])
    return out


def benign_accuracy(pool: TaskPool, victim: Any, *, seed: int = 0) -> float:
    """Fraction of tasks whose gold tool the victim selects without the attack (top-1 accuracy)."""
    chosen = benign_choices(pool, victim, seed=seed)
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
    curve, best_sr, rate = [], -1.0, 0.0
    for e in entries:
        e = e if isinstance(e, Mapping) else e.to_dict()
        if e["sr"] > best_sr:
            best_sr = e["sr"]
            tool = {"name": e["name"], "description": e["description"]}
            flags = attack_success(tool, pool, victim, seed=seed)
            rate = sum(flags) / len(flags)
        curve.append((e["queries"], rate))
    return curve
