"""The Solver: Algorithm 3 on a SemiCentroidInstance (`solve`) or on points (`fit`, sklearn
style), returning the clustering with the exact core/FJR audit as its certificate."""

from __future__ import annotations

import numpy as np

from paperplug.roles import Solution

from .algorithm import MCC_FACTOR, semi_centroid_core
from .audit import audit_core, audit_fjr
from .instance import Metric, SemiCentroidInstance
from .loss import losses


class SemiCentroidFair:
    """Proportionally fair semi-centroid clustering (Algorithm 3 of the paper).

    `mcc`: "semiball" (polynomial) or "exact"; `switching=False` stops after Phase 1 (FJR).
    `audit`: "exact", "lower" or None; past `audit_time_limit` s the exact audit is a bound."""

    def __init__(
        self,
        n_clusters: int = 3,
        *,
        lam: float | None = 0.5,
        metric: Metric = "euclidean",
        metric_m: Metric | None = None,
        centers: np.ndarray | None = None,
        mcc: str = "semiball",
        switching: bool = True,
        audit: str | None = "exact",
        audit_time_limit: float | None = 60.0,
    ) -> None:
        self.n_clusters = n_clusters
        self.lam = lam
        self.metric = metric
        self.metric_m = metric_m
        self.centers = centers
        self.mcc = mcc
        self.switching = switching
        self.audit = audit
        self.audit_time_limit = audit_time_limit

    def _check_params(self) -> None:
        if self.mcc not in MCC_FACTOR:
            raise ValueError(f"mcc must be one of {sorted(MCC_FACTOR)}, got {self.mcc!r}")
        if self.audit not in ("exact", "lower", None):
            raise ValueError(f"audit must be 'exact', 'lower' or None, got {self.audit!r}")

    def solve(self, problem: SemiCentroidInstance, *, seed: int | None = None) -> Solution:
        """Cluster the instance; objective holds the core/FJR ratios, certificate the audits.

        The algorithm is deterministic: `seed` is accepted for the Solver protocol only."""
        self._check_params()
        if not isinstance(problem, SemiCentroidInstance):
            raise TypeError(
                "solve expects a SemiCentroidInstance (build one with "
                f"SemiCentroidInstance.from_points/from_distances), got {type(problem).__name__}"
            )
        clustering = semi_centroid_core(problem, self.mcc, self.switching)
        L = losses(problem, clustering)
        objective = {"max_loss": float(L.max()), "mean_loss": float(L.mean())}
        certificate = None
        if self.audit is not None:
            core = audit_core(problem, L, self.audit, self.audit_time_limit)
            fjr = audit_fjr(problem, L, self.audit, self.audit_time_limit)
            certificate = {"core": core, "fjr": fjr}
            objective.update(core=core.ratio, fjr=fjr.ratio)
        meta = {**clustering.meta, "n": problem.n, "k": problem.k, "m": problem.m}
        return Solution(clustering, objective, certificate, meta)

    def fit(self, X: np.ndarray, y: object = None) -> SemiCentroidFair:
        """Cluster points X (n, features); sets labels_, center_indices_, centers_, losses_."""
        inst = SemiCentroidInstance.from_points(
            X,
            self.n_clusters,
            lam=self.lam,
            metric=self.metric,
            metric_m=self.metric_m,
            centers=self.centers,
        )
        sol = self.solve(inst)
        candidates = np.asarray(X if self.centers is None else self.centers, dtype=float)
        self.instance_ = inst
        self.labels_ = sol.value.labels
        self.center_indices_ = sol.value.centers
        self.centers_ = candidates[sol.value.centers].copy()
        self.losses_ = losses(inst, sol.value)
        self.certificate_ = sol.certificate
        self.n_features_in_ = candidates.shape[1]
        return self

    def fit_predict(self, X: np.ndarray, y: object = None) -> np.ndarray:
        return self.fit(X).labels_
