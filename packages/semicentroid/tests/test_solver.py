"""The Solver and sklearn-style API on real inputs; bad inputs rejected, data untouched."""

import numpy as np
import pytest
from paperplug_semicentroid import (
    Clustering,
    SemiCentroidFair,
    SemiCentroidInstance,
    audit_core,
    check_clustering,
    losses,
)
from scipy.spatial.distance import cdist


def _blobs(seed=0, per=8):
    rng = np.random.default_rng(seed)
    means = np.array([[0.0, 0.0], [8.0, 0.0], [0.0, 8.0]])
    return np.concatenate([m + rng.normal(scale=0.5, size=(per, 2)) for m in means])


def test_fit_recovers_planted_blobs_with_certificate():
    X = _blobs()
    before = X.copy()
    est = SemiCentroidFair(3, lam=0.5).fit(X)
    np.testing.assert_array_equal(X, before)
    truth = np.repeat(np.arange(3), 8)
    # Same partition as the planted one, up to renaming.
    assert len({(a, b) for a, b in zip(est.labels_, truth, strict=True)}) == 3
    np.testing.assert_array_equal(est.centers_, X[est.center_indices_])
    assert est.certificate_["core"].exact and est.certificate_["core"].ratio == 1.0
    np.testing.assert_allclose(
        est.losses_, losses(est.instance_, Clustering(est.labels_, est.center_indices_))
    )


def test_lambda_form_equals_scaled_dual_metric():
    X = _blobs(1, per=4)
    a = SemiCentroidInstance.from_points(X, 3, lam=0.3)
    b = SemiCentroidInstance.from_points(
        X,
        3,
        lam=None,
        metric_m=lambda u, v: 0.3 * np.linalg.norm(u - v),
        metric=lambda u, v: 0.7 * np.linalg.norm(u - v),
    )
    np.testing.assert_allclose(a.Dm, b.Dm)
    np.testing.assert_allclose(a.Dc, b.Dc)
    c = SemiCentroidInstance.from_distances(cdist(X, X), 3, lam=0.3)
    np.testing.assert_allclose(a.Dc, c.Dc)


def test_candidate_centres_and_precomputed_distances():
    X = _blobs(2, per=5)
    M = np.array([[0.0, 0.0], [8.0, 0.0], [0.0, 8.0], [4.0, 4.0]])
    est = SemiCentroidFair(3, lam=0.5, centers=M).fit(X)
    assert set(est.center_indices_.tolist()) == {0, 1, 2}
    np.testing.assert_array_equal(est.centers_, M[est.center_indices_])
    inst = SemiCentroidInstance.from_distances(cdist(X, X), 3, lam=0.5, Dc=cdist(X, M))
    sol = SemiCentroidFair(audit=None).solve(inst)
    np.testing.assert_array_equal(sol.value.labels, est.labels_)
    assert sol.certificate is None


def test_user_clustering_is_audited():
    X = _blobs(3, per=4)
    inst = SemiCentroidInstance.from_points(X, 3, lam=0.5)
    mixed = check_clustering(inst, np.arange(12) % 3, [0, 1, 2])  # each cluster spans blobs
    assert audit_core(inst, mixed).violated


@pytest.mark.parametrize(
    "kwargs,error,match",
    [
        ({"k": 0}, ValueError, "k must lie"),
        ({"k": 2.0}, TypeError, "k must be an int"),
        ({"lam": 1.5}, ValueError, "lam must lie"),
        ({"lam": "half"}, TypeError, "lam must be a float"),
        ({"lam": None}, ValueError, "give lam"),
        ({"lam": 0.5, "metric_m": "cityblock"}, ValueError, "lam must be None"),
        ({"centers": np.zeros((2, 5))}, ValueError, "features"),
    ],
)
def test_bad_parameters_rejected(kwargs, error, match):
    X = _blobs(per=3)
    before = X.copy()
    k = kwargs.pop("k", 3)
    with pytest.raises(error, match=match):
        SemiCentroidInstance.from_points(X, k, **kwargs)
    np.testing.assert_array_equal(X, before)


def test_bad_arrays_rejected():
    X = _blobs(per=3)
    bad = X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="X contains NaN"):
        SemiCentroidFair(3).fit(bad)
    assert np.isnan(bad[0, 0]) and np.isfinite(bad[1:]).all()
    with pytest.raises(ValueError, match="X: Expected 2D array"):
        SemiCentroidFair(3).fit(X[:, 0])
    with pytest.raises(ValueError, match="X: Found array with 0 sample"):
        SemiCentroidFair(3).fit(np.zeros((0, 2)))
    with pytest.raises(TypeError, match="X must be an array"):
        SemiCentroidFair(3).fit("points")
    D = cdist(X, X)
    with pytest.raises(ValueError, match="Dm must be symmetric"):
        SemiCentroidInstance(D + np.triu(np.ones_like(D), 1), D, 3)
    with pytest.raises(ValueError, match="Dc has negative"):
        SemiCentroidInstance(D, -D, 3)
    with pytest.raises(ValueError, match="Dc must have one row per agent"):
        SemiCentroidInstance(D, D[:-1], 3)
    with pytest.raises(TypeError, match="SemiCentroidInstance"):
        SemiCentroidFair().solve(X)
    with pytest.raises(ValueError, match="mcc"):
        SemiCentroidFair(3, mcc="greedy").fit(X)
    inst = SemiCentroidInstance(D, D, 3)
    with pytest.raises(ValueError, match="more than k"):
        check_clustering(inst, np.arange(9) % 4, [0, 1, 2, 3])
    with pytest.raises(ValueError, match="candidate centres"):
        check_clustering(inst, np.arange(9) % 3, [0, 1, 99])


def _asymmetric(u, v):
    return float(np.abs(u - v).sum() + (u[0] > v[0]))


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda X, D: SemiCentroidInstance.from_distances(D + np.triu(D, 1), 3), ValueError,
         "D must be symmetric"),
        (lambda X, D: SemiCentroidInstance.from_distances(D + np.eye(len(D)), 3), ValueError,
         "D must have a zero diagonal"),
        (lambda X, D: SemiCentroidInstance.from_distances(-D, 3), ValueError,
         "D has negative distances"),
        (lambda X, D: SemiCentroidInstance.from_distances(D[:, :4], 3), ValueError,
         "D must be square"),
        (lambda X, D: SemiCentroidInstance.from_distances(D, 3, Dc=D[:-1]), ValueError,
         "Dc must have one row per agent"),
        (lambda X, D: SemiCentroidInstance.from_points(X, 3, lam=None, metric_m=_asymmetric),
         ValueError, "metric_m must be symmetric"),
        (lambda X, D: SemiCentroidInstance.from_points(X, 3, metric="nope"), ValueError,
         "metric='nope' is not a distance"),
        (lambda X, D: SemiCentroidFair(n_clusters=0).fit(X), ValueError,
         "n_clusters must lie in"),
        (lambda X, D: SemiCentroidFair(n_clusters=2.0).fit(X), TypeError,
         "n_clusters must be an int"),
        (lambda X, D: SemiCentroidFair(n_clusters=99).fit(X), ValueError,
         "n_samples=9 should be >= n_clusters=99"),
        (lambda X, D: SemiCentroidFair(3, metric="nope").fit(X), ValueError, "metric='nope'"),
        (lambda X, D: SemiCentroidFair(3, audit_time_limit=-1).fit(X), ValueError,
         "audit_time_limit"),
    ],
)  # fmt: skip
def test_errors_name_the_argument_the_user_passed(call, error, match):
    """Issue 14: errors named internals (`Dm`) instead of what the user passed (D, n_clusters)."""
    X = _blobs(per=3)
    D = cdist(X, X)
    with pytest.raises(error, match=match) as info:
        call(X, D)
    assert "Dm" not in str(info.value)
