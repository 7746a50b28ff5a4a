"""Stage 3 with the paper's knee method: knee, spanning tree, DBSCAN with singletons, the
fallback; planted clusters found without K, and no structure reported as one cluster."""

import itertools
import logging

import numpy as np
import pytest
from paperplug_flux import (
    BlockScaler,
    cluster_clients,
    dbscan_with_singletons,
    knee,
    nearest_neighbour_distances,
    spanning_tree_distances,
)
from sklearn.metrics import adjusted_rand_score


def test_knee_is_the_point_farthest_below_the_chord():
    d = np.array([1.0, 1.1, 1.2, 1.3, 5.0, 9.0])
    x = np.linspace(0, 1, 6)
    y = (d - 1) / 8
    value, strength = knee(d)
    assert value == 1.3 and strength == pytest.approx(max(x - y))
    assert knee(d * 7)[0] == pytest.approx(1.3 * 7)  # the knee does not depend on the scale
    assert knee(np.array([2.0, 2.0, 2.0])) == (2.0, 0.0)  # flat: no knee
    assert knee(np.linspace(0, 1, 9))[1] == pytest.approx(0.0, abs=1e-12)  # straight: no knee


def _prufer_trees(n):
    for seq in itertools.product(range(n), repeat=n - 2):
        degree = [1] * n
        for v in seq:
            degree[v] += 1
        edges, seq = [], list(seq)
        for v in seq:
            leaf = min(i for i in range(n) if degree[i] == 1)
            edges.append((leaf, v))
            degree[leaf] -= 1
            degree[v] -= 1
        u, w = (i for i in range(n) if degree[i] == 1)
        edges.append((u, w))
        yield edges


def test_spanning_tree_is_the_minimum_over_all_trees_and_contains_every_nn_distance():
    pts = np.random.default_rng(0).normal(size=(5, 3))
    dist = np.linalg.norm(pts[:, None] - pts[None], axis=2)
    best = min(sorted(dist[a, b] for a, b in t) for t in _prufer_trees(5))  # 125 trees, brute force
    tree = spanning_tree_distances(pts)
    np.testing.assert_allclose(tree, sorted(best))
    assert set(np.round(nearest_neighbour_distances(pts), 12)) <= set(np.round(tree, 12))


def test_coincident_points_stay_joined():
    pts = np.array([[0.0, 0.0], [0.0, 0.0], [5.0, 5.0], [5.0, 5.0]])
    np.testing.assert_allclose(spanning_tree_distances(pts), [0.0, 0.0, np.sqrt(50)])


def test_noise_points_become_singletons_numbered_in_order():
    pts = np.array([[0.0], [0.1], [10.0], [20.0], [20.1]])
    assert dbscan_with_singletons(pts, eps=0.5).tolist() == [0, 0, 1, 2, 2]


def _blobs(rng, k, per, dim=20, spread=0.05):
    centres = rng.uniform(0, 1, (k, dim))
    return np.concatenate([c + spread * rng.normal(size=(per, dim)) for c in centres]), np.repeat(
        np.arange(k), per
    )


def test_planted_clusters_found_without_k_in_at_least_38_of_40_seeds():
    hits = 0
    for seed in range(40):
        rng = np.random.default_rng(seed)
        k = int(rng.integers(2, 5))
        desc, truth = _blobs(rng, k, per=4)
        found = cluster_clients(desc, marginal_size=6, method="knee").labels
        hits += adjusted_rand_score(truth, found) == 1.0
    assert hits >= 38  # 40/40 measured


def test_no_structure_is_one_cluster_in_at_least_18_of_20_seeds():
    ones = sum(
        cluster_clients(
            np.random.default_rng(s).normal(size=(12, 20)), marginal_size=6, method="knee"
        ).labels.max()
        == 0
        for s in range(20)
    )
    assert ones >= 18  # 20/20 measured


def test_a_far_outlier_is_a_singleton():
    rng = np.random.default_rng(0)
    desc, _truth = _blobs(rng, 2, per=5)
    desc = np.vstack([desc, np.full((1, desc.shape[1]), 2.0)])
    labels = cluster_clients(desc, marginal_size=6, method="knee").labels
    assert labels.tolist() == [0] * 5 + [1] * 5 + [2]


def test_too_few_clients_fall_back_to_silhouette_kmeans_and_say_so(caplog):
    rng = np.random.default_rng(0)
    desc, truth = _blobs(rng, 2, per=3)
    with caplog.at_level(logging.WARNING, logger="paperplug_flux"):
        result = cluster_clients(desc, marginal_size=6, method="knee")
    assert result.method == "silhouette-kmeans" and result.eps is None
    assert adjusted_rand_score(truth, result.labels) == 1.0
    assert "too few for a knee" in caplog.text


def test_block_scaler_maps_each_block_to_unit_range_and_handles_marginals_alone():
    d = np.array([[0.0, 2.0, 10.0, 30.0], [1.0, 4.0, 20.0, 50.0]])
    s = BlockScaler.fit(d, marginal_size=2)
    np.testing.assert_allclose(s.transform(d), [[0.0, 0.5, 0.0, 0.5], [0.25, 1.0, 0.25, 1.0]])
    np.testing.assert_allclose(s.transform(d[:, :2]), [[0.0, 0.5], [0.25, 1.0]])
    with pytest.raises(ValueError, match="columns"):
        s.transform(d[:, :3])


def test_a_knee_near_its_threshold_warns_naming_the_statistic():
    d = np.r_[np.linspace(1.0, 1.5, 8), [3.0, 3.5, 4.0]]  # knee strength ~0.54 against 0.5
    pts = np.c_[np.cumsum(d), np.zeros(len(d))]
    pts = np.r_[[[0.0, 0.0]], pts]
    with pytest.warns(
        UserWarning, match=r"knee strength 0\.\d+ is within 20% of its threshold 0\.5"
    ):
        result = cluster_clients(pts, marginal_size=1, method="knee", eps_curve="mst")
    assert result.decision.statistic == "knee strength" and result.decision.close


def test_clustering_rejects_bad_inputs():
    with pytest.raises(ValueError, match="NaN"):
        cluster_clients(np.array([[np.nan, 1.0], [0.0, 1.0]]), 1, method="knee")
    with pytest.raises(ValueError, match="descriptors is empty or too small"):
        cluster_clients(np.zeros((1, 4)), 2, method="knee")
    with pytest.raises(ValueError, match="eps_curve"):
        cluster_clients(np.zeros((3, 4)), 2, method="knee", eps_curve="elbow")
    with pytest.raises(ValueError, match="needs counts"):
        cluster_clients(np.zeros((3, 4)), 2)
