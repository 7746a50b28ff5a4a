"""The Solver component: the fair point, a lottery reaching it and an integral allocation,
with a certificate a user can check (the tight set bounds λ* from above, the lottery's
marginals reach it from below)."""

from __future__ import annotations

from typing import Any

import numpy as np

from paperplug import Solution
from paperplug.checks import check_choice, check_scalar
from paperplug_matroid.characterisation import as_groups, fair_point
from paperplug_matroid.integral import integral_allocation
from paperplug_matroid.lottery import fair_lottery
from paperplug_matroid.matroids import as_matroid

MODES = ("lottery", "integral")


def _problem_parts(problem: Any) -> tuple[Any, Any]:
    if isinstance(problem, dict):
        if "groups" not in problem or not {"matroid", "graph"} & problem.keys():
            raise ValueError("problem needs 'groups' and one of 'matroid' / 'graph'")
        return problem.get("matroid", problem.get("graph")), problem["groups"]
    if isinstance(problem, tuple) and len(problem) == 2:
        return problem
    raise TypeError(
        "problem must be (matroid or bipartite graph or biadjacency, groups) or a dict with "
        f"'matroid'/'graph' and 'groups', got {type(problem).__name__}"
    )


class OpportunityFairAllocation:
    """Allocate under a matroid constraint with opportunity fairness across groups.

    `mode="lottery"`: the value is a Lottery over allocations whose expected group counts are
    the fair quotas (the paper's fractional notion); `mode="integral"`: the value is the
    largest allocation with at most ⌊y*_c⌋ agents per group. The objective holds the price
    of fairness, λ*, r(N) and the fair size; `seed` draws one allocation from the lottery."""

    def __init__(self, mode: str = "lottery") -> None:
        self.mode = mode

    def solve(self, problem: Any, *, seed: int | None = None, **kw: Any) -> Solution:
        check_choice(self.mode, "mode", MODES)
        check_scalar(seed, "seed", "int", low=0, allow_none=True)
        if kw:
            raise TypeError(f"unknown arguments {sorted(kw)}")
        source, labels = _problem_parts(problem)
        try:
            matroid = as_matroid(source)
            groups = as_groups(labels, matroid)
        except (TypeError, ValueError) as exc:  # named as the caller wrote it: the problem
            raise type(exc)(f"problem: {exc}") from exc
        point = fair_point(matroid, groups)
        integral = integral_allocation(matroid, groups, point)
        meta: dict[str, Any] = {"fair_point": point.to_dict(), "integral": integral.to_dict()}
        if self.mode == "lottery":
            value: Any = fair_lottery(matroid, groups, point)
            meta["drawn"] = value.sample(np.random.default_rng(seed))
        else:
            value = integral
        tight = tuple(point.tight_set)
        certificate = {
            "tight_set": list(tight),
            "rank_of_tight_union": point.union_ranks.get(tight, point.max_size),
            "sum_of_tight_group_ranks": sum(point.group_ranks[c] for c in tight),
            "group_ranks": point.group_ranks,
        }
        objective = {
            "pof": point.pof,
            "lambda_star": point.lambda_star,
            "max_size": float(point.max_size),
            "fair_size": point.fair_size,
        }
        return Solution(value=value, objective=objective, certificate=certificate, meta=meta)
