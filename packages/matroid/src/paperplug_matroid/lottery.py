"""A lottery over allocations that reaches the fair point exactly (paper §3: fairness over
fractional allocations, i.e. distributions over independent sets).

Every point of the group polymatroid is a convex combination of its vertices, and every
vertex is the group-count vector of a greedy independent set: visit the groups in some order
π, keep the first k of them, and serve greedily group after group. We find weights on these
vertices with group counts exactly y* by column generation: an LP over the vertices found so
far (HiGHS) whose duals u price a new vertex, the greedy one for the groups with u_c > 0 in
decreasing order of u_c (the polymatroid's linear optimum), until none improves. A basic
solution of the final LP mixes at most C + 1 allocations.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from paperplug.checks import check_scalar
from paperplug_matroid.characterisation import (
    FairPoint,
    Groups,
    fair_point,
    point_argument,
    problem_arguments,
)
from paperplug_matroid.matroids import Matroid


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


def _greedy_vertex(matroid: Matroid, groups: Groups, order: Sequence[int]) -> list[int]:
    """The greedy independent set serving the groups of `order`, one group after another."""
    return matroid.greedy([e for c in order for e in groups.members[c]])


def _solve(counts: np.ndarray, target: np.ndarray, *, slack: bool) -> Any:
    """min Σ slack s.t. counts·w + s⁺ − s⁻ = target, Σ w = 1, w, s ≥ 0 (slack=False: no s)."""
    from scipy.optimize import linprog

    C, V = counts.shape
    A_eq = np.vstack([counts, np.ones(V)])
    cost = np.zeros(V)
    if slack:
        signs = np.vstack([np.eye(C), np.zeros(C)])
        A_eq = np.hstack([A_eq, signs, -signs])
        cost = np.concatenate([cost, np.ones(2 * C)])
    return linprog(
        cost, A_eq=A_eq, b_eq=np.append(target, 1.0), bounds=(0, None), method="highs-ds"
    )


def fair_lottery(
    matroid: Any,
    groups: Any,
    point: FairPoint | None = None,
    *,
    max_groups: int = 20,
    max_rounds: int = 10_000,
) -> Lottery:
    """A lottery over independent sets whose expected group counts are the fair quotas."""
    check_scalar(max_rounds, "max_rounds", "int", low=1)
    matroid, groups = problem_arguments(matroid, groups, max_groups)
    point = point_argument(point, groups) or fair_point(matroid, groups)
    target = np.array([point.quotas[lab] for lab in groups.labels])
    # Start from the empty set and each group alone; price further vertices by the duals.
    candidates: dict[tuple[int, ...], list[int]] = {}
    for order in [(), *((c,) for c in range(groups.C))]:
        _add_vertex(candidates, matroid, groups, order)
    for _ in range(max_rounds):
        counts = np.array(list(candidates), dtype=float).T  # (C, V)
        result = _solve(counts, target, slack=True)
        if result.status != 0:
            raise RuntimeError(f"the lottery LP failed: {result.message}")
        if result.fun <= 1e-9:
            break
        duals = result.eqlin.marginals  # u_c per group, then u_0 for Σ w = 1
        order = sorted((c for c in range(groups.C) if duals[c] > 1e-12), key=lambda c: -duals[c])
        key = _add_vertex(candidates, matroid, groups, order)
        if duals[:-1] @ np.array(key) + duals[-1] <= 1e-9:
            raise RuntimeError(
                "the fair point is not in the hull of the greedy vertices "
                f"(LP gap {result.fun:.3g} with no improving vertex)"
            )
    else:
        raise RuntimeError(f"column generation did not finish in {max_rounds} rounds")
    counts = np.array(list(candidates), dtype=float).T
    result = _solve(counts, target, slack=False)  # a basic solution: at most C + 1 vertices
    if result.status != 0:
        raise RuntimeError(f"the lottery LP failed: {result.message}")
    sets = list(candidates.values())
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


def _add_vertex(
    candidates: dict[tuple[int, ...], list[int]],
    matroid: Matroid,
    groups: Groups,
    order: Sequence[int],
) -> tuple[int, ...]:
    """Add the greedy vertex of `order` (keyed by its group counts); return its counts."""
    chosen = _greedy_vertex(matroid, groups, order)
    key = (
        tuple(np.bincount(groups.of[chosen], minlength=groups.C).tolist())
        if chosen
        else ((0,) * groups.C)
    )
    candidates.setdefault(key, chosen)
    return key
