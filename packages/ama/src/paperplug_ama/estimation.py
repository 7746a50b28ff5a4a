"""Selection-rate estimation (AMA): repeated trials, each sampling a task and distinct
benign competitor tools, inserting the candidate, shuffling, and asking the victim."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from paperplug.checks import check_choice, check_scalar, check_sequence, check_type
from paperplug_ama.arguments import (
    check_catalog,
    check_pool,
    check_rng,
    check_task,
    check_tool,
    check_victim,
)
from paperplug_ama.scenarios import Scenario, Task

TaskPool = Sequence[tuple[Task, Sequence[Mapping[str, Any]]]]  # (task, its benign catalog)


def task_pool(scenarios: Scenario | Sequence[Scenario], split: str) -> list[tuple[Task, list]]:
    """(task, benign tools of its scenario) for every task of `split` in the scenarios."""
    if isinstance(scenarios, Scenario):
        scenarios = [scenarios]
    scenarios = check_sequence(scenarios, "scenarios", Scenario, what="Scenarios")
    check_choice(split, "split", ("optimise", "held_out"))
    return [(t, s.tools) for s in scenarios for t in s.tasks(split)]


def sample_slate(
    task: Task, catalog: Sequence[Mapping[str, Any]], n_competitors: int, rng: random.Random
) -> list[Mapping[str, Any]]:
    """The gold tool plus distinct others from the catalog, `n_competitors` in all (or the
    whole catalog when it is smaller), so the candidate must beat the right tool."""
    check_task(task)
    catalog = check_catalog(catalog)
    check_scalar(n_competitors, "n_competitors", "int", low=1)
    check_rng(rng)
    gold = [t for t in catalog if t["name"] == task.gold]
    others = [t for t in catalog if t["name"] != task.gold]
    picked = rng.sample(others, min(len(others), max(n_competitors - len(gold), 0)))
    return gold + picked


@dataclass
class SelectionEstimate:
    """SR = successes / trials, with each trial's query, slate and the victim's choice."""

    rate: float
    successes: int
    trials: int
    records: list[dict[str, Any]] = field(default_factory=list)


def insert_and_shuffle(
    candidate: Mapping[str, Any], slate: Sequence[Mapping[str, Any]], rng: random.Random
) -> tuple[list[Mapping[str, Any]], int]:
    """The slate with the candidate inserted, shuffled; and the candidate's position."""
    check_tool(candidate, "candidate")
    slate = check_catalog(slate, "slate")
    check_rng(rng)
    tools = [*slate, candidate]
    order = list(range(len(tools)))
    rng.shuffle(order)
    return [tools[i] for i in order], order.index(len(slate))


def estimate_selection_rate(
    candidate: Mapping[str, Any],
    pool: TaskPool,
    victim: Any,
    *,
    trials: int = 20,
    n_competitors: int = 5,
    seed: int | random.Random = 0,
    stratified: bool = True,
) -> SelectionEstimate:
    """The fraction of `trials` in which the victim selects the candidate (AMA's SR).

    `stratified` draws the tasks as shuffled passes over the pool (each task as often as the
    others) rather than independently, which removes the task-mix part of the estimate's noise.
    An integer seed fixes every trial, so candidates scored with one seed share them."""
    check_tool(candidate, "candidate")
    pool = check_pool(pool)
    check_victim(victim)
    check_scalar(trials, "trials", "int", low=1)
    check_scalar(n_competitors, "n_competitors", "int", low=1)
    check_type(stratified, "stratified", bool)
    if isinstance(seed, random.Random):
        rng = seed
    else:
        rng = random.Random(check_scalar(seed, "seed", "int", low=0))
    wins, records = 0, []
    for t in range(trials):
        if stratified:
            if t % len(pool) == 0:
                order = rng.sample(range(len(pool)), len(pool))
            task, catalog = pool[order[t % len(pool)]]
        else:
            task, catalog = pool[rng.randrange(len(pool))]
        slate, at = insert_and_shuffle(
            candidate, sample_slate(task, catalog, n_competitors, rng), rng
        )
        chosen = victim.select(task.query, slate)
        hit = at in chosen
        wins += hit
        records.append(
            {"query": task.query, "slate": [t["name"] for t in slate], "chosen": chosen, "hit": hit}
        )
    return SelectionEstimate(wins / trials, wins, trials, records)
