"""UCD: planted von Mises–Fisher mixture centres recovered; dead prototypes re-initialised
and counted; the objective is the mean best cosine."""

import numpy as np
import pytest
from paperplug_chunking import UnsupervisedChunkDiscovery, cosine_objective
from sklearn.metrics import adjusted_rand_score


def vmf_like(seed, k=6, d=32, n=1200, spread=0.15):
    """Unit directions around k random centres (a concentrated vMF-like mixture)."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(k, d))
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    labels = rng.integers(0, k, n)
    X = centres[labels] + spread * rng.normal(size=(n, d)) / np.sqrt(d)
    scale = rng.uniform(0.5, 3.0, (n, 1))  # UCD is scale-free
    return X * scale, labels, centres


def test_recovers_vmf_centres_over_seeds():
    """Every planted centre has a prototype with cos > 0.95, ARI >= 0.95: 3 of 3 seeds."""
    for seed in range(3):
        X, labels, centres = vmf_like(seed)
        ucd = UnsupervisedChunkDiscovery(n_chunks=6, epochs=30, seed=seed).fit(X)
        assert (centres @ ucd.prototypes_.T).max(1).min() > 0.95
        assert adjusted_rand_score(labels, ucd.predict(X)) >= 0.95


def test_dead_prototypes_are_reinitialised_and_counted():
    X, _, _ = vmf_like(0, k=3)
    with_reinit = UnsupervisedChunkDiscovery(n_chunks=12, epochs=10, seed=0).fit(X)
    without = UnsupervisedChunkDiscovery(n_chunks=12, epochs=10, reinit_dead=False, seed=0).fit(X)
    assert with_reinit.n_reinitialised_ > 0 and without.n_reinitialised_ == 0
    assert with_reinit.score(X) >= without.score(X) - 1e-9


def test_objective_closed_form():
    X = np.array([[1.0, 0.0], [0.0, 2.0]])
    assert cosine_objective(X, [[1.0, 1.0]]) == pytest.approx(np.sqrt(0.5))
    assert cosine_objective(X, [[1.0, 0.0], [0.0, 1.0]]) == pytest.approx(1.0)


def test_same_seed_same_prototypes():
    X, _, _ = vmf_like(1)
    a = UnsupervisedChunkDiscovery(n_chunks=6, epochs=5, seed=3).fit(X).prototypes_
    b = UnsupervisedChunkDiscovery(n_chunks=6, epochs=5, seed=3).fit(X).prototypes_
    np.testing.assert_array_equal(a, b)


def test_bad_inputs():
    with pytest.raises(ValueError, match="n_chunks"):
        UnsupervisedChunkDiscovery(n_chunks=10).fit(np.ones((5, 3)))
    with pytest.raises(TypeError, match="n_chunks"):
        UnsupervisedChunkDiscovery(n_chunks="4").fit(np.ones((5, 3)))
    with pytest.raises(ValueError, match="X"):
        UnsupervisedChunkDiscovery().fit(np.ones(5))
