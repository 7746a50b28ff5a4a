"""Semi-centroid instances: agents N, candidate centres M, a non-centroid metric d^m on N and a
centroid metric d^c from N to M (paper §2, dual-metric model; the weighted single-metric
λ form is the special case d^m = λ·d, d^c = (1-λ)·d)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.spatial.distance import cdist

Metric = str | Callable[[np.ndarray, np.ndarray], float]


def _matrix(name: str, value: object, distances: bool = True) -> np.ndarray:
    if not isinstance(value, np.ndarray | list | tuple):
        raise TypeError(f"{name} must be a numpy array, got {type(value).__name__}")
    arr = np.array(value, dtype=float, copy=True)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} is empty (shape {arr.shape})")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite entries")
    if distances and np.any(arr < 0):
        raise ValueError(f"{name} has negative distances")
    return arr


def _check_k(k: object, n: int) -> int:
    if isinstance(k, bool) or not isinstance(k, int | np.integer):
        raise TypeError(f"k must be an int, got {type(k).__name__}")
    if not 1 <= int(k) <= n:
        raise ValueError(f"k must lie in [1, n={n}], got {k}")
    return int(k)


def _check_lam(lam: object) -> float:
    if isinstance(lam, bool) or not isinstance(lam, int | float | np.floating):
        raise TypeError(f"lam must be a float in [0, 1], got {type(lam).__name__}")
    if not 0.0 <= float(lam) <= 1.0:
        raise ValueError(f"lam must lie in [0, 1], got {lam}")
    return float(lam)


@dataclass(frozen=True, eq=False)
class SemiCentroidInstance:
    """Dm: (n, n) non-centroid metric between agents; Dc: (n, |M|) agent-to-centre metric."""

    Dm: np.ndarray
    Dc: np.ndarray
    k: int
    lam: float | None = None

    def __post_init__(self) -> None:
        Dm, Dc = _matrix("Dm", self.Dm), _matrix("Dc", self.Dc)
        n = Dm.shape[0]
        if Dm.shape != (n, n):
            raise ValueError(f"Dm must be square (n, n), got shape {Dm.shape}")
        if Dc.shape[0] != n:
            raise ValueError(f"Dc must have one row per agent: {Dc.shape[0]} rows for n={n}")
        if not np.allclose(Dm, Dm.T, rtol=1e-9, atol=1e-12):
            raise ValueError("Dm must be symmetric")
        if np.any(np.diag(Dm) != 0):
            raise ValueError("Dm must have a zero diagonal")
        Dm.setflags(write=False)
        Dc.setflags(write=False)
        object.__setattr__(self, "Dm", Dm)
        object.__setattr__(self, "Dc", Dc)
        object.__setattr__(self, "k", _check_k(self.k, n))
        if self.lam is not None:
            object.__setattr__(self, "lam", _check_lam(self.lam))

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
        lam = _check_lam(lam)
        D = _matrix("D", D)
        Dc_raw = D if Dc is None else _matrix("Dc", Dc)
        return cls(lam * D, (1.0 - lam) * Dc_raw, k, lam=lam)

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
        X = _matrix("X", X, distances=False)
        C = X if centers is None else _matrix("centers", centers, distances=False)
        if C.shape[1] != X.shape[1]:
            raise ValueError(
                f"centers have {C.shape[1]} features but X has {X.shape[1]}: they must match"
            )
        if metric_m is None:
            if lam is None:
                raise ValueError("give lam (weighted single metric) or metric_m (dual metric)")
            lam = _check_lam(lam)
            Dm = cdist(X, X, metric=metric)
            np.fill_diagonal(Dm, 0.0)
            return cls(lam * Dm, (1.0 - lam) * cdist(X, C, metric=metric), k, lam=lam)
        if lam is not None:
            raise ValueError("lam must be None when metric_m is given (dual-metric model)")
        Dm = cdist(X, X, metric=metric_m)
        np.fill_diagonal(Dm, 0.0)
        return cls(Dm, cdist(X, C, metric=metric), k)
