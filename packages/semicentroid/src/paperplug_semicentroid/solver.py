"""The Solver: Algorithm 3 on a SemiCentroidInstance (`solve`), or a scikit-learn clusterer on
points (`fit`, `fit_predict`, `predict`), with the exact core/FJR audit as its certificate."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from paperplug import Solution
from paperplug.checks import check_choice, check_scalar, check_type
from paperplug_semicentroid.algorithm import MCC_FACTOR, semi_centroid_core
from paperplug_semicentroid.audit import audit_core, audit_fjr
from paperplug_semicentroid.instance import (
    Metric,
    SemiCentroidInstance,
    as_matrix,
    check_k,
    check_lam,
    distances,
)
from paperplug_semicentroid.loss import losses


class SemiCentroidFair(ClusterMixin, BaseEstimator):
    """Proportionally fair semi-centroid clustering (Algorithm 3 of the paper), a scikit-learn
    clusterer: `get_params`/`set_params`, `clone`, pipelines, numpy or pandas input.

    `mcc`: "semiball" (polynomial) or "exact"; `switching=False` stops after Phase 1 (FJR).
    `audit`: "exact", "lower" or None. `audit_time_limit` (seconds) bounds both audits together:
    the core audit gets at most half, the FJR audit the rest; a cut-short audit is a flagged
    lower bound (`Audit.timed_out`). Algorithm 3 itself is not limited."""

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
        check_choice(self.mcc, "mcc", sorted(MCC_FACTOR))
        check_choice(self.audit, "audit", ("exact", "lower", None))
        check_scalar(self.audit_time_limit, "audit_time_limit", low=0, allow_none=True)
        if check_scalar(self.n_clusters, "n_clusters", "int") < 1:  # fit knows n_samples too
            raise ValueError(f"n_clusters must lie in [1, n_samples], got {self.n_clusters}")
        if self.lam is not None:
            check_lam(self.lam)
        for name in ("metric", "metric_m"):
            value = getattr(self, name)
            if not (
                (value is None and name == "metric_m") or isinstance(value, str) or callable(value)
            ):
                raise TypeError(f"{name} must be a scipy metric name or a callable, got {value!r}")
        if self.centers is not None:
            as_matrix("centers", self.centers, nonnegative=False)
        check_type(self.switching, "switching", (bool, np.bool_), what="True or False")

    def solve(self, problem: SemiCentroidInstance, *, seed: int | None = None) -> Solution:
        """Cluster the instance; objective holds the core/FJR ratios, certificate the audits.

        The algorithm is deterministic: `seed` is accepted for the Solver protocol only."""
        self._check_params()
        check_type(
            problem,
            "problem",
            SemiCentroidInstance,
            what="a SemiCentroidInstance (SemiCentroidInstance.from_points/from_distances)",
        )
        check_scalar(seed, "seed", "int", allow_none=True)
        clustering = semi_centroid_core(problem, self.mcc, self.switching)
        L = losses(problem, clustering)
        objective = {"max_loss": float(L.max()), "mean_loss": float(L.mean())}
        certificate = None
        if self.audit is not None:
            limit, start = self.audit_time_limit, time.perf_counter()
            core = audit_core(problem, L, self.audit, None if limit is None else limit / 2)
            rest = None if limit is None else max(0.0, limit - (time.perf_counter() - start))
            fjr = audit_fjr(problem, L, self.audit, rest)
            certificate = {"core": core, "fjr": fjr}
            objective.update(core=core.ratio, fjr=fjr.ratio)
        meta = {**clustering.meta, "n": problem.n, "k": problem.k, "m": problem.m}
        return Solution(clustering, objective, certificate, meta)

    def fit(self, X: Any, y: object = None) -> SemiCentroidFair:
        """Cluster points X (n, features), a numpy array or pandas DataFrame; sets labels_,
        center_indices_, centers_, losses_, certificate_ (y is ignored)."""
        self._check_params()
        X = self._validated(X, reset=True)
        k = self.n_clusters
        if isinstance(k, int | np.integer) and not isinstance(k, bool) and k > len(X):
            raise ValueError(f"n_samples={len(X)} should be >= n_clusters={k}")
        k = check_k(k, len(X), "n_clusters")
        centers = (
            None if self.centers is None else as_matrix("centers", self.centers, nonnegative=False)
        )
        inst = SemiCentroidInstance.from_points(
            X, k, lam=self.lam, metric=self.metric, metric_m=self.metric_m, centers=centers
        )
        sol = self.solve(inst)
        candidates = X if centers is None else centers
        self.instance_ = inst
        self.labels_ = sol.value.labels.astype(np.int64)
        self.center_indices_ = sol.value.centers
        self.centers_ = candidates[sol.value.centers].copy()
        self.losses_ = losses(inst, sol.value)
        self.certificate_ = sol.certificate
        self._X_fit = X
        return self

    def _validated(self, X: Any, *, reset: bool) -> np.ndarray:
        """scikit-learn's validation (DataFrames, feature names, n_features_in_), its errors
        prefixed with the argument's name where they do not say it."""
        if isinstance(X, str | bytes):
            raise TypeError(f"X must be an array of shape (n_samples, n_features), got {X!r:.40}")
        try:
            return validate_data(self, X, dtype=np.float64, reset=reset)
        except (TypeError, ValueError) as exc:
            if "X" in str(exc):
                raise
            raise type(exc)(f"X: {exc}") from None

    def predict(self, X: Any) -> np.ndarray:
        """For each new point, the cluster t whose semi-centroid loss it would bear on joining,
        max_{j∈C_t} d^m(x, j) + d^c(x, x_t), is smallest (a newcomer's own best choice; the
        paper defines no out-of-sample rule). On the training points this can differ from
        labels_, which are the fair assignment."""
        check_is_fitted(self, "labels_")
        X = self._validated(X, reset=False)
        Dc = distances(X, self.centers_, self.metric, "metric")
        if self.metric_m is None:  # the λ form
            Dm = self.lam * distances(X, self._X_fit, self.metric, "metric")
            Dc = (1.0 - self.lam) * Dc
        else:
            Dm = distances(X, self._X_fit, self.metric_m, "metric_m")
        loss = np.stack(
            [
                Dm[:, self.labels_ == t].max(axis=1) + Dc[:, t]
                for t in range(len(self.center_indices_))
            ],
            axis=1,
        )  # (new points, clusters)
        return np.argmin(loss, axis=1).astype(np.int64)
