"""The Solver component: estimate the effects (or take them), then choose k seeds by G-CauIM
or A-CauIM, and report the estimated causal gain with its standard error."""

from __future__ import annotations

from typing import Any

import numpy as np

from paperplug import Solution
from paperplug_cauim.exposure import ExposureGrid
from paperplug_cauim.greedy import g_cauim
from paperplug_cauim.ite import TLearner
from paperplug_cauim.network import DiffusionNetwork, from_networkx
from paperplug_cauim.objective import CausalObjective
from paperplug_cauim.proxy import a_cauim
from paperplug_cauim.worlds import LiveEdgeWorlds

METHODS = ("greedy", "gradient")


class CausalInfluenceMaximization:
    """Choose k seeds that maximise the causal effect of a campaign (CauIM).

    `solve(problem, seed=...)` with problem a dict: "graph" (networkx; edge probabilities from
    `p`) and either "tau" (a vectorised τ(nodes, exposures), known or estimated elsewhere) or
    "covariates" (n, d) plus "records" (dict or DataFrame of past campaigns: covariates,
    exposure, treated, y) from which a T-learner estimates τ. `method`: "greedy" (G-CauIM) or
    "gradient" (A-CauIM). The seed draws the Monte Carlo worlds (and A-CauIM's start)."""

    def __init__(
        self,
        k: int = 5,
        method: str = "greedy",
        p: float | str = 0.1,
        n_worlds: int = 100,
        exclude_seeds: bool = True,
        estimator: Any = None,
        grid_points: int = 11,
    ) -> None:
        self.k, self.method, self.p, self.n_worlds = k, method, p, n_worlds
        self.exclude_seeds, self.estimator, self.grid_points = exclude_seeds, estimator, grid_points

    def effects(self, network: DiffusionNetwork, problem: dict) -> ExposureGrid:
        """τ on the exposure grid: given, or estimated from the records."""
        if problem.get("tau") is not None:
            if not callable(problem["tau"]):
                raise TypeError("problem['tau'] must be callable as tau(node_indices, exposures)")
            return ExposureGrid.from_function(problem["tau"], network.n, self.grid_points)
        if "covariates" not in problem or "records" not in problem:
            raise ValueError("problem needs 'tau', or 'covariates' and 'records' to estimate it")
        records = problem["records"]
        if hasattr(records, "columns"):
            from paperplug_cauim.ite import records_from_frame

            names = [c for c in records.columns if c not in ("exposure", "treated", "y")]
            records = dict(
                zip(
                    ("covariates", "exposure", "treated", "y"),
                    records_from_frame(records, names),
                    strict=True,
                )
            )
        learner = TLearner(self.estimator).fit(
            records["covariates"], records["exposure"], records["treated"], records["y"]
        )
        covariates = np.asarray(problem["covariates"], dtype=float)
        if covariates.ndim != 2 or len(covariates) != network.n:
            raise ValueError(
                f"covariates must have one row per node ({network.n}), got shape {covariates.shape}"
            )
        return learner.grid(covariates, self.grid_points)

    def solve(self, problem: Any, *, seed: int | None = None, **kw: Any) -> Solution:
        if kw:
            raise TypeError(f"unknown arguments {sorted(kw)}")
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {self.method!r}")
        if not isinstance(problem, dict) or "graph" not in problem:
            raise TypeError(
                "problem must be a dict with 'graph' and 'tau' (or 'covariates' and 'records')"
            )
        network = from_networkx(problem["graph"], p=self.p)
        tau = self.effects(network, problem)
        seed = 0 if seed is None else int(seed)
        worlds = LiveEdgeWorlds(network, self.n_worlds, seed=seed)
        objective = CausalObjective(network, tau, worlds, exclude_seeds=self.exclude_seeds)
        if self.method == "greedy":
            selection = g_cauim(objective, self.k)
        else:
            selection = a_cauim(network, tau, self.k, seed=seed)
        value, se = objective.value(np.array(selection.seeds))
        labels = [network.labels[i] for i in selection.seeds]
        return Solution(
            value=labels,
            objective={"causal_gain": value, "standard_error": se},
            certificate={
                "worlds": self.n_worlds,
                "evaluations": selection.evaluations,
                "method": selection.method,
            },
            meta={"seconds": selection.seconds, "seed_indices": selection.seeds},
        )
