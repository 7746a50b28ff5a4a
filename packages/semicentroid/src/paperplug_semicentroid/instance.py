"""Semi-centroid instances: agents N, candidate centres M, a non-centroid metric d^m on N and a
centroid metric d^c from N to M (paper §2, dual-metric model; the weighted single-metric
λ form is the special case d^m = λ·d, d^c = (1-λ)·d)."""

from __future__ import annotations

import math
import sys
import warnings
from collections.abc import Callable
from dataclasses import InitVar, dataclass

import numpy as np
from scipy.spatial.distance import cdist

from paperplug.checks import check_array, check_scalar, check_type
from paperplug_semicentroid.metric import NonMetricWarning, center_violation, triangle_violation

Metric = str | Callable[[np.ndarray, np.ndarray], float]


def as_matrix(name: str, value: object, nonnegative: bool = True) -> np.ndarray:
    """A finite 2-D float copy of `value` (array, list or DataFrame); errors name `name`."""
    if hasattr(value, "to_numpy") and hasattr(value, "columns"):  # a pandas DataFrame
        value = value.to_numpy()
    if not isinstance(value, np.ndarray | list | tuple):
        raise TypeError(f"{name} must be a numpy array, got {type(value).__name__}")
    try:
        arr = np.array(value, dtype=float, copy=True)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must hold numbers: {exc}") from None
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} is empty (shape {arr.shape})")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite entries")
    if nonnegative and np.any(arr < 0):
        raise ValueError(f"{name} has negative distances")
    return arr


def check_instance(inst: object, name: str = "inst") -> SemiCentroidInstance:
    """`inst` if it is a SemiCentroidInstance, else a TypeError naming `name`."""
    return check_type(
        inst, name, SemiCentroidInstance, what="a SemiCentroidInstance (see from_points)"
    )


def check_k(k: object, n: int, name: str = "k") -> int:
    """The number of clusters as an int in [1, n]; errors name `name`."""
    if isinstance(k, bool) or not isinstance(k, int | np.integer):
        raise TypeError(f"{name} must be an int, got {type(k).__name__}")
    if not 1 <= int(k) <= n:
        raise ValueError(f"{name} must lie in [1, n={n}], got {k}")
    return int(k)


def check_lam(lam: object) -> float:
    """λ of the weighted single-metric form, a float in [0, 1]."""
    if isinstance(lam, bool) or not isinstance(lam, int | float | np.floating):
        raise TypeError(f"lam must be a float in [0, 1], got {type(lam).__name__}")
    if not 0.0 <= float(lam) <= 1.0:
        raise ValueError(f"lam must lie in [0, 1], got {lam}")
    return float(lam)


def _check_square(name: str, D: np.ndarray) -> None:
    """A distance between agents: square, symmetric, zero diagonal (after _matrix)."""
    n = D.shape[0]
    if D.shape != (n, n):
        raise ValueError(f"{name} must be square (n, n), got shape {D.shape}")
    if not np.allclose(D, D.T, rtol=1e-9, atol=1e-12):
        raise ValueError(f"{name} must be symmetric")
    if np.any(np.diag(D) != 0):
        raise ValueError(f"{name} must have a zero diagonal")


def distances(X: np.ndarray, Y: np.ndarray, metric: Metric, name: str) -> np.ndarray:
    """scipy's cdist(X, Y, metric); an unusable metric is a ValueError naming `name`."""
    try:
        return cdist(X, Y, metric=metric)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"{name}={metric!r} is not a distance scipy's cdist can use: {exc}"
        ) from None


def _warn_if_not_metric(Dm: np.ndarray, Dc: np.ndarray, names: tuple[str, str]) -> None:
    """One NonMetricWarning naming the argument(s) behind a distance that breaks the triangle
    inequality, pointed at the caller's line."""
    found = {}
    for role, name, v, at in (
        ("d^m", names[0], triangle_violation(Dm), "agents"),
        ("d^c", names[1], center_violation(Dc), "agent, centre, agent, centre"),
    ):
        if v is not None:
            sampled = "" if v.exhaustive else ", in a sampled subset"
            found.setdefault(name, []).append(
                f"{role} by {v.excess:.3g} of its largest value at {at} {v.points}{sampled}"
            )
    if not found:
        return
    subject = " and ".join(found)
    detail = "; ".join(part for parts in found.values() for part in parts)
    level, frame = 1, sys._getframe(0)
    while frame is not None and frame.f_globals.get("__name__", "").startswith(__package__):
        level, frame = level + 1, frame.f_back
    warnings.warn(
        f"{subject} {'breaks' if len(found) == 1 else 'break'} the triangle inequality ({detail}): "
        "the paper's core and FJR guarantees assume metrics and do not hold; the losses and "
        "the exact audit are still computed as defined",
        NonMetricWarning,
        stacklevel=level,
    )


@dataclass(frozen=True, eq=False)
class SemiCentroidInstance:
    """Dm: (n, n) non-centroid metric between agents; Dc: (n, |M|) agent-to-centre metric.

    Both must be metrics for the paper's guarantees: a triangle-inequality violation gives a
    NonMetricWarning. `names` is how errors and warnings refer to Dm and Dc (the constructors
    below pass the argument the user gave, e.g. "D" or "metric")."""

    Dm: np.ndarray
    Dc: np.ndarray
    k: int
    lam: float | None = None
    names: InitVar[tuple[str, str]] = ("Dm", "Dc")

    def __post_init__(self, names: tuple[str, str]) -> None:
        if not (
            isinstance(names, tuple | list)
            and len(names) == 2
            and all(isinstance(x, str) for x in names)
        ):
            raise TypeError(f"names must be two strings (how errors name Dm, Dc), got {names!r}")
        Dm, Dc = as_matrix(names[0], self.Dm), as_matrix(names[1], self.Dc)
        _check_square(names[0], Dm)
        n = Dm.shape[0]
        if Dc.shape[0] != n:
            raise ValueError(
                f"{names[1]} must have one row per agent: {Dc.shape[0]} rows for n={n}"
            )
        _warn_if_not_metric(Dm, Dc, names)
        Dm.setflags(write=False)
        Dc.setflags(write=False)
        object.__setattr__(self, "Dm", Dm)
        object.__setattr__(self, "Dc", Dc)
        object.__setattr__(self, "k", check_k(self.k, n))
        if self.lam is not None:
            object.__setattr__(self, "lam", check_lam(self.lam))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SemiCentroidInstance):
            return NotImplemented
        return (
            self.k == other.k
            and self.lam == other.lam
            and np.array_equal(self.Dm, other.Dm)
            and np.array_equal(self.Dc, other.Dc)
        )

    __hash__ = None  # type: ignore[assignment]

    @property
    def n(self) -> int:
        return self.Dm.shape[0]

    @property
    def n_centers(self) -> int:
        return self.Dc.shape[1]

    def check_agents(self, value: object, name: str) -> np.ndarray:
        """`value` as distinct agent indices (a 1-D int array in 0..n-1); errors name `name`."""
        _check_label(name)
        arr = check_array(value, name, dtype="int", ndim=1)
        if arr.min() < 0 or arr.max() >= self.n:
            raise ValueError(f"{name} must hold agent indices in 0..{self.n - 1}, got {arr}")
        if len(np.unique(arr)) != len(arr):
            raise ValueError(f"{name} must hold distinct agents, got {arr}")
        return arr

    def check_center(self, value: object, name: str) -> int:
        """`value` as a candidate centre's index in 0..|M|-1; errors name `name`."""
        _check_label(name)
        return check_scalar(value, name, "int", low=0, high=self.n_centers - 1)

    @property
    def m(self) -> int:
        """Coalition size that is entitled to a cluster, ⌈n/k⌉ (paper §2)."""
        return math.ceil(self.n / self.k)

    @classmethod
    def from_distances(
        cls, D: np.ndarray, k: int, *, lam: float = 0.5, Dc: np.ndarray | None = None
    ) -> SemiCentroidInstance:
        """Weighted single-metric form from precomputed distances: d^m = λ·D, d^c = (1-λ)·Dc.

        D is (n, n) between agents; Dc (n, |M|) to candidate centres defaults to D (M = N)."""
        lam = check_lam(lam)
        D = as_matrix("D", D)
        _check_square("D", D)
        Dc_raw = D if Dc is None else as_matrix("Dc", Dc)
        names = ("D", "D" if Dc is None else "Dc")
        return cls(lam * D, (1.0 - lam) * Dc_raw, check_k(k, len(D)), lam=lam, names=names)

    @classmethod
    def from_points(
        cls,
        X: np.ndarray,
        k: int,
        *,
        lam: float | None = 0.5,
        metric: Metric = "euclidean",
        metric_m: Metric | None = None,
        centers: np.ndarray | None = None,
    ) -> SemiCentroidInstance:
        """From points X (n, features) and candidate centres (default: the points themselves).

        With `metric_m` None this is the λ form over `metric`; otherwise the dual-metric model
        with d^m = metric_m and d^c = metric (then `lam` must be None)."""
        X = as_matrix("X", X, nonnegative=False)
        C = X if centers is None else as_matrix("centers", centers, nonnegative=False)
        if C.shape[1] != X.shape[1]:
            raise ValueError(
                f"centers have {C.shape[1]} features but X has {X.shape[1]}: they must match"
            )
        k = check_k(k, len(X))
        if metric_m is None:
            if lam is None:
                raise ValueError("give lam (weighted single metric) or metric_m (dual metric)")
            lam = check_lam(lam)
            Dm = distances(X, X, metric, "metric")
            np.fill_diagonal(Dm, 0.0)
            Dc = distances(X, C, metric, "metric")
            return cls(lam * Dm, (1.0 - lam) * Dc, k, lam=lam, names=("metric", "metric"))
        if lam is not None:
            raise ValueError("lam must be None when metric_m is given (dual-metric model)")
        Dm = distances(X, X, metric_m, "metric_m")
        np.fill_diagonal(Dm, 0.0)
        return cls(Dm, distances(X, C, metric, "metric"), k, names=("metric_m", "metric"))


def _check_label(name: object) -> None:
    """`name`, what a check's errors call the value, must be a non-empty string."""
    check_type(name, "name", str)
    if not name:
        raise ValueError("name must be a non-empty string (what errors call the value)")
