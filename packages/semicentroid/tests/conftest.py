"""One thread (shared CPUs) and no progress bars in tests; the random small instances the tests
share: λ form, dual metric, independent metrics."""

import os

import numpy as np
import pytest
from paperplug_semicentroid import SemiCentroidInstance
from scipy.spatial.distance import cdist

os.environ.setdefault("PAPERPLUG_PROGRESS", "0")


@pytest.fixture(autouse=True, scope="session")
def _one_thread():
    from paperplug.harness import single_thread

    single_thread()


def random_instance(rng: np.random.Generator, kind: str, n: int, k: int) -> SemiCentroidInstance:
    """kind: "lam" (one Euclidean metric, random λ), "dual" (two feature subsets, L1 and L2),
    "independent" (d^m and d^c from unrelated point sets: the regime Phase 2 exists for)."""
    if kind == "lam":
        X = rng.normal(size=(n, 2)) * rng.uniform(0.2, 3.0, size=(1, 2))
        return SemiCentroidInstance.from_points(X, k, lam=float(rng.uniform(0, 1)))
    if kind == "dual":
        X = rng.normal(size=(n, 4))
        return SemiCentroidInstance(cdist(X[:, :2], X[:, :2], "cityblock"), cdist(X, X), k)
    A, B = rng.normal(size=(n, 2)), rng.normal(size=(n, 2)) * rng.uniform(0.3, 5.0)
    return SemiCentroidInstance(cdist(A, A), cdist(B, B), k)


@pytest.fixture
def instances():
    """A list of 150 random instances, n in [5, 10], k in [2, 4], all three kinds."""
    rng = np.random.default_rng(12345)
    out = []
    for t in range(150):
        kind = ("lam", "dual", "independent")[t % 3]
        out.append(random_instance(rng, kind, int(rng.integers(5, 11)), int(rng.integers(2, 5))))
    return out
