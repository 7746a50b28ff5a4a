"""A lottery over allocations that reaches the fair point exactly (paper §3: fairness over
fractional allocations, i.e. distributions over independent sets).

Every point of the group polymatroid is a convex combination of its vertices, and every
vertex is the group-count vector of a greedy independent set: visit the groups in some order
π, keep the first k of them, and serve greedily group after group. We find weights on these
vertices with group counts exactly y* (an LP over the C!·C vertices at most, HiGHS; a basic
solution uses at most C + 1 of them), and turn each chosen vertex into a concrete allocation.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

import numpy as np

from paperplug_matroid.characterisation import FairPoint, Groups, as_groups, fair_point
from paperplug_matroid.matroids import Matroid, as_matroid


@dataclass
class Lottery:
    """Allocations (lists of elements) and their probabilities; `marginals[c]` is the expected
    number of agents of group c served, equal to the fair quota."""

    allocations: list[list[int]]
    probabilities: list[float]
    marginals: dict[Hashable, float]
    agent_probabilities: list[float]  # P(agent i is served)

    def to_dict(self) -> dict[str, Any]:
        return {
            "allocations": self.allocations,
            "probabilities": self.probabilities,
            "marginals": {str(k): v for k, v in self.marginals.items()},
        }

    def sample(self, rng: np.random.Generator) -> list[int]:
        """One allocation drawn from the lottery."""
        return self.allocations[int(rng.choice(len(self.allocations), p=self.probabilities))]


def _greedy_vertex(matroid: Matroid, groups: Groups, order: tuple[int, ...]) -> list[int]:
    """The greedy independent set serving the groups of `order`, one group after another."""
    return matroid.greedy([e for c in order for e in groups.members[c]])


def fair_lottery(
    matroid: Any, groups: Any, point: FairPoint | None = None, *, max_groups: int = 7
) -> Lottery:
    """A lottery over independent sets whose expected group counts are the fair quotas."""
    from scipy.optimize import linprog

    matroid = as_matroid(matroid)
    groups = groups if isinstance(groups, Groups) else as_groups(groups, matroid)
    if max_groups < groups.C:
        raise ValueError(
            f"{groups.C} groups: the vertex LP has up to C!·C columns (max_groups={max_groups})"
        )
    point = point or fair_point(matroid, groups)
    target = np.array([point.quotas[lab] for lab in groups.labels])
    # The vertices of the polymatroid: greedy sets of ordered prefixes (the empty set too).
    candidates: dict[tuple[int, ...], list[int]] = {(): []}
    for size in range(1, groups.C + 1):
        for order in itertools.permutations(range(groups.C), size):
            chosen = _greedy_vertex(matroid, groups, order)
            key = (
                tuple(np.bincount(groups.of[chosen], minlength=groups.C).tolist())
                if chosen
                else (0,) * groups.C
            )
            candidates.setdefault(key, chosen)
    counts = np.array([k if k else (0,) * groups.C for k in candidates], dtype=float).T  # (C, V)
    sets = list(candidates.values())
    A_eq = np.vstack([counts, np.ones(counts.shape[1])])
    b_eq = np.concatenate([target, [1.0]])
    result = linprog(
        np.zeros(counts.shape[1]), A_eq=A_eq, b_eq=b_eq, bounds=(0, None), method="highs"
    )
    if result.status != 0:
        raise RuntimeError(
            f"the fair point is not in the hull of the greedy vertices: {result.message}"
        )
    weights = np.clip(result.x, 0, None)
    keep = np.flatnonzero(weights > 1e-12)
    weights = weights[keep] / weights[keep].sum()
    allocations = [sorted(sets[v]) for v in keep]
    per_agent = np.zeros(matroid.n)
    for w, alloc in zip(weights, allocations, strict=True):
        per_agent[alloc] += w
    marginals = {
        lab: float(per_agent[groups.members[c]].sum()) for c, lab in enumerate(groups.labels)
    }
    return Lottery(allocations, weights.tolist(), marginals, per_agent.tolist())
