"""The metric assumption: a distance that breaks the triangle inequality is caught (every triple
on small inputs, a seeded subset on large ones) and warned about, naming the user's argument."""

import itertools
import warnings

import numpy as np
import pytest
from paperplug_semicentroid import (
    NonMetricWarning,
    SemiCentroidFair,
    SemiCentroidInstance,
    center_violation,
    triangle_violation,
)
from scipy.spatial.distance import cdist


def _brute_triangle(D):
    return max(
        D[i, k] - D[i, j] - D[j, k] for i, j, k in itertools.product(range(len(D)), repeat=3)
    )


def _brute_center(Dc):
    n, c = Dc.shape
    return max(
        Dc[i, y] - Dc[i, y2] - Dc[j, y2] - Dc[j, y]
        for i, j in itertools.product(range(n), repeat=2)
        for y, y2 in itertools.product(range(c), repeat=2)
    )


def test_the_checks_equal_brute_force_enumeration():
    rng = np.random.default_rng(0)
    for _ in range(40):
        n, c = int(rng.integers(3, 8)), int(rng.integers(2, 6))
        A = rng.random((n, n)) ** 3
        D = A + A.T
        np.fill_diagonal(D, 0.0)
        Dc = rng.random((n, c)) ** 3
        for found, worst, M in (
            (triangle_violation(D), _brute_triangle(D), D),
            (center_violation(Dc), _brute_center(Dc), Dc),
        ):
            if worst <= 1e-9 * M.max():
                assert found is None
            else:
                assert found.exhaustive and found.excess == pytest.approx(worst / M.max())


def test_the_reported_points_witness_the_violation():
    X = np.array([[0.0], [1.0], [2.0]])
    D = cdist(X, X, "sqeuclidean")  # d(0, 2) = 4 > d(0, 1) + d(1, 2) = 2
    v = triangle_violation(D)
    i, j, k = v.points
    assert D[i, k] - D[i, j] - D[j, k] == pytest.approx(2.0) and v.excess == pytest.approx(0.5)
    a, y2, b, y = center_violation(D).points
    assert D[a, y] - D[a, y2] - D[b, y2] - D[b, y] == pytest.approx(2.0)


@pytest.mark.parametrize("n", [40, 700])
def test_squared_euclidean_is_caught_and_names_the_argument(n):
    """Issue 14: a non-metric was accepted silently. n = 700 checks a seeded subset of 300."""
    X = np.random.default_rng(1).normal(size=(n, 3))
    with pytest.warns(NonMetricWarning, match=r"^metric breaks the triangle inequality \(d\^m by"):
        SemiCentroidInstance.from_points(X, 3, metric="sqeuclidean")
    with pytest.warns(NonMetricWarning, match=r"^D breaks the triangle inequality"):
        SemiCentroidInstance.from_distances(cdist(X, X, "sqeuclidean"), 3)
    with pytest.warns(
        NonMetricWarning, match=r"^metric_m breaks the triangle inequality \(d\^m by [^;]*\):"
    ):
        SemiCentroidInstance.from_points(X, 3, lam=None, metric_m="sqeuclidean")


def test_a_non_metric_centre_distance_alone_is_caught():
    """d^c from agents to other centres: the 4-point path condition catches squared distances."""
    rng = np.random.default_rng(2)
    X, M = rng.normal(size=(30, 2)), rng.normal(size=(12, 2))
    with pytest.warns(NonMetricWarning, match=r"^Dc breaks the triangle inequality \(d\^c by"):
        SemiCentroidInstance(cdist(X, X), cdist(X, M, "sqeuclidean"), 3)


@pytest.mark.parametrize("metric", ["euclidean", "cityblock", "chebyshev"])
def test_metrics_pass_silently(metric):
    X = np.random.default_rng(3).normal(size=(50, 3))
    M = np.random.default_rng(4).normal(size=(10, 3))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        SemiCentroidInstance.from_points(X, 3, metric=metric)
        SemiCentroidInstance.from_points(X, 3, metric=metric, centers=M)
        SemiCentroidFair(3, lam=None, metric_m=metric, metric="euclidean", audit=None).fit(X)
    assert [str(w.message) for w in caught] == []


def test_the_warning_points_at_the_callers_line():
    X = np.random.default_rng(6).normal(size=(20, 2))
    with pytest.warns(NonMetricWarning) as record:
        SemiCentroidInstance.from_points(X, 2, metric="sqeuclidean")
    assert record[0].filename == __file__


def test_a_warned_instance_still_clusters_and_audits():
    """The warning says the guarantee is void; the losses and the exact audit stay defined."""
    X = np.random.default_rng(5).normal(size=(24, 2))
    with pytest.warns(NonMetricWarning):
        est = SemiCentroidFair(3, metric="sqeuclidean").fit(X)
    assert est.certificate_["core"].exact and est.certificate_["core"].ratio >= 1.0
