"""The Solver component: estimate the effects (or take them), then choose k seeds by G-CauIM
or A-CauIM, and report the seeds' causal gain on held-out samples with its standard error."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from paperplug import Solution
from paperplug.checks import (
    check_array,
    check_callable,
    check_choice,
    check_consistent_length,
    check_scalar,
    check_type,
)
from paperplug_cauim.exposure import ExposureGrid
from paperplug_cauim.holdout import checked_greedy
from paperplug_cauim.network import DiffusionNetwork, check_network, to_network
from paperplug_cauim.proxy import a_cauim
from paperplug_cauim.reverse import ReverseObjective, ReverseSamples

METHODS = ("greedy", "gradient")
RECORD_FIELDS = ("covariates", "exposure", "treated", "y")


class CausalInfluenceMaximization:
    """Choose k seeds that maximise the causal effect of a campaign (CauIM).

    `solve(problem, seed=...)` with problem a dict: "graph" (networkx, or a scipy sparse
    adjacency; arc probabilities from `p`) and either "tau" (a vectorised τ(nodes, exposures),
    known or estimated elsewhere) or "covariates" (n, d) plus "records" (dict or DataFrame of
    past campaigns: covariates, exposure, treated, y) from which a T-learner estimates τ.
    `method`: "greedy" (G-CauIM) or "gradient" (A-CauIM). `samples`: reverse samples for
    G-CauIM; None doubles them from 4096 until a held-out check passes (at most
    `max_samples`). The seed draws the samples (and A-CauIM's start)."""

    def __init__(
        self,
        k: int = 5,
        method: str = "greedy",
        p: float | str = 0.1,
        samples: int | None = None,
        max_samples: int = 65536,
        tolerance: float = 0.05,
        exclude_seeds: bool = True,
        estimator: Any = None,
        grid_points: int = 11,
    ) -> None:
        self.k = check_scalar(k, "k", "int", low=1)
        self.method = check_choice(method, "method", METHODS)
        self.p = check_type(p, "p", (int, float, str), what="a probability or a name")
        if not isinstance(p, str):
            check_scalar(p, "p", "real", low=0.0, high=1.0)
        self.samples = check_scalar(samples, "samples", "int", low=2, allow_none=True)
        self.max_samples = check_scalar(max_samples, "max_samples", "int", low=2)
        self.tolerance = check_scalar(tolerance, "tolerance", "real", low=0.0)
        self.exclude_seeds = check_type(exclude_seeds, "exclude_seeds", bool)
        if estimator is not None:  # scikit-learn is imported only where an estimator is given
            from paperplug_cauim.ite import check_regressor

            check_regressor(estimator, "estimator")
        self.estimator = estimator
        self.grid_points = check_scalar(grid_points, "grid_points", "int", low=2)

    def effects(self, network: DiffusionNetwork, problem: dict) -> ExposureGrid:
        """τ on the exposure grid: given, or estimated from the records."""
        check_network(network)
        check_type(problem, "problem", dict)
        if problem.get("tau") is not None:
            tau = check_callable(
                problem["tau"], "problem['tau']", what="function tau(node_indices, exposures)"
            )
            return ExposureGrid.from_function(tau, network.n, self.grid_points, "problem['tau']")
        if "covariates" not in problem or "records" not in problem:
            raise ValueError("problem needs 'tau', or 'covariates' and 'records' to estimate it")
        from paperplug_cauim.ite import TLearner, records_from_frame  # scikit-learn: only here

        records = problem["records"]
        if hasattr(records, "columns"):  # a DataFrame
            names = [c for c in records.columns if c not in RECORD_FIELDS[1:]]
            records = dict(zip(RECORD_FIELDS, records_from_frame(records, names), strict=True))
        check_type(records, "problem['records']", dict, what="a dict or a pandas DataFrame")
        missing = [f for f in RECORD_FIELDS if f not in records]
        if missing:
            raise ValueError(f"problem['records'] lacks {missing}")
        name = "problem['records']"
        X = check_array(records["covariates"], f"{name}['covariates']", ndim=2)
        e = check_array(records["exposure"], f"{name}['exposure']", ndim=1)
        t = check_array(records["treated"], f"{name}['treated']", dtype="bool", ndim=1)
        y = check_array(records["y"], f"{name}['y']", ndim=1)
        check_consistent_length(
            **{f"{name}[{f!r}]": v for f, v in zip(RECORD_FIELDS, (X, e, t, y), strict=True)}
        )
        covariates = check_array(
            problem["covariates"], "problem['covariates']", shape=(network.n, X.shape[1])
        )
        learner = TLearner(self.estimator).fit(X, e, t, y)
        return learner.grid(covariates, self.grid_points)

    def solve(self, problem: Any, *, seed: int | None = None, **kw: Any) -> Solution:
        if kw:
            raise TypeError(f"unknown arguments {sorted(kw)}")
        seed = check_scalar(seed, "seed", "int", low=0, allow_none=True) or 0
        check_type(
            problem,
            "problem",
            dict,
            what="a dict with 'graph' and 'tau' (or 'covariates' and 'records')",
        )
        if "graph" not in problem:
            raise ValueError("problem must hold 'graph'")
        network = to_network(problem["graph"], p=self.p, name="problem['graph']")
        if self.k > network.n:
            raise ValueError(f"k must be at most the number of nodes ({network.n}), got {self.k}")
        tau = self.effects(network, problem)
        start = time.perf_counter()
        if self.method == "greedy":
            first = self.samples or 4096  # a fixed `samples`: checked once, not doubled
            most = self.samples or self.max_samples
            selection, checked, _ = checked_greedy(
                network, tau, self.k, seed=seed, start=first, max_samples=most,
                tolerance=self.tolerance, exclude_seeds=self.exclude_seeds,
            )  # fmt: skip
            value, se, size = checked.held_out, checked.standard_error, checked.samples
            extra = {"in_sample": checked.in_sample, "converged": checked.converged}
        else:
            selection = a_cauim(network, tau, self.k, seed=seed)
            size = self.samples or 4096
            check_seed = np.random.SeedSequence(seed).spawn(2)[1]
            held = ReverseObjective(
                network, tau, ReverseSamples(network, size, check_seed),
                exclude_seeds=self.exclude_seeds,
            )  # fmt: skip
            value, se = held.value(np.array(selection.seeds))
            extra = {}
        labels = [network.labels[i] for i in selection.seeds]
        return Solution(
            value=labels,
            objective={"causal_gain": value, "standard_error": se},
            certificate={
                "held_out_samples": size,
                "evaluations": selection.evaluations,
                "method": selection.method,
                **extra,
            },
            meta={"seconds": time.perf_counter() - start, "seed_indices": selection.seeds},
        )
