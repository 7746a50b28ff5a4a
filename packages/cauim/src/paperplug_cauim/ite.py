"""Individual treatment effects from observational cascades (paper §3.2): each record is a node
in a past campaign with its covariates x, its exposure e, whether it was activated (treated)
and its outcome y. Only one potential outcome is seen per record, so τ(x, e) = μ1(x, e) −
μ0(x, e) is estimated by a T-learner (one regressor per arm; any scikit-learn-style estimator)."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import clone

from paperplug.checks import (
    check_array,
    check_consistent_length,
    check_is_fitted,
    check_scalar,
    check_sequence,
    check_type,
)
from paperplug_cauim.exposure import ExposureGrid


def _features(covariates: Any, exposure: Any) -> np.ndarray:
    """[covariates | exposure] after checking both."""
    X = check_array(covariates, "covariates", ndim=2)
    e = check_array(exposure, "exposure", ndim=1)
    if (e < 0).any() or (e > 1).any():
        raise ValueError("exposure must lie in [0, 1] (the share of in-neighbours activated)")
    check_consistent_length(covariates=X, exposure=e)
    return np.hstack([X, e[:, None]])


def check_regressor(value: Any, name: str) -> Any:
    """`value` if it is None or a scikit-learn-style regressor (`fit`, `predict`, and
    `get_params` for cloning), else a TypeError naming `name`."""
    if value is not None and not all(
        callable(getattr(value, m, None)) for m in ("fit", "predict", "get_params")
    ):
        raise TypeError(
            f"{name} must be None or a scikit-learn-style regressor (fit, predict, "
            f"get_params), got {type(value).__name__}"
        )
    return value


class TLearner:
    """τ̂(x, e) = μ̂1(x, e) − μ̂0(x, e); `base` defaults to gradient boosting (seeded)."""

    def __init__(self, base: Any = None, random_state: int = 0) -> None:
        self.base = check_regressor(base, "base")
        self.random_state = check_scalar(random_state, "random_state", "int", low=0)

    def fit(self, covariates: Any, exposure: Any, treated: Any, outcome: Any) -> TLearner:
        Z = _features(covariates, exposure)
        t = check_array(treated, "treated", dtype="bool", ndim=1)
        y = check_array(outcome, "outcome", ndim=1)
        check_consistent_length(covariates=Z, treated=t, outcome=y)
        if t.all() or not t.any():
            raise ValueError(
                "treated: records need both activated and non-activated nodes to estimate an effect"
            )
        if self.base is None:
            from sklearn.ensemble import GradientBoostingRegressor

            base = GradientBoostingRegressor(random_state=self.random_state)
        else:
            base = self.base
        self.n_covariates_ = Z.shape[1] - 1
        self.mu1_ = clone(base).fit(Z[t], y[t])
        self.mu0_ = clone(base).fit(Z[~t], y[~t])
        return self

    def predict(self, covariates: Any, exposure: Any) -> np.ndarray:
        check_is_fitted(self, ["mu1_", "mu0_"])
        Z = _features(covariates, exposure)
        if Z.shape[1] - 1 != self.n_covariates_:
            raise ValueError(
                f"covariates has {Z.shape[1] - 1} columns, the learner was fit on "
                f"{self.n_covariates_}"
            )
        return self.mu1_.predict(Z) - self.mu0_.predict(Z)

    def grid(self, covariates: Any, points: int = 11) -> ExposureGrid:
        """τ̂ for every node (one row of covariates each) cached on an exposure grid."""
        X = check_array(covariates, "covariates", ndim=2)
        check_scalar(points, "points", "int", low=2)
        e = np.tile(np.linspace(0, 1, points), len(X))
        return ExposureGrid(self.predict(np.repeat(X, points, axis=0), e).reshape(len(X), points))


def records_from_frame(frame: Any, covariates: list[str], *, exposure: str = "exposure",
                       treated: str = "treated", outcome: str = "y") -> tuple[np.ndarray, ...]:  # fmt: skip
    """(covariates, exposure, treated, outcome) arrays from a pandas DataFrame of records."""
    if not hasattr(frame, "columns") or not hasattr(frame, "to_numpy"):
        raise TypeError(f"frame must be a pandas DataFrame, got {type(frame).__name__}")
    columns = {
        "covariates": check_sequence(covariates, "covariates", str, what="column names"),
        "exposure": [check_type(exposure, "exposure", str, what="a column name")],
        "treated": [check_type(treated, "treated", str, what="a column name")],
        "outcome": [check_type(outcome, "outcome", str, what="a column name")],
    }
    for name, wanted in columns.items():
        missing = [c for c in wanted if c not in frame.columns]
        if missing:
            raise ValueError(f"{name}: the records lack columns {missing}")
    return (frame[covariates].to_numpy(float), frame[exposure].to_numpy(float),
            frame[treated].to_numpy(bool), frame[outcome].to_numpy(float))  # fmt: skip
