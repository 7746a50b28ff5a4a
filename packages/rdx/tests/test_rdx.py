"""RDX on planted differences: found where planted, absent where not, better than KMeans."""

import numpy as np
import pytest
from paperplug_rdx import RDX, bsr, debiased_cka, linear_cka, neighborhood_ranks
from paperplug_rdx.baselines import baseline_grids
from paperplug_rdx.embedded import planted_mixture


@pytest.fixture(scope="module")
def mixture():
    return planted_mixture(400, seed=0)


def merged_share(grids, labels):
    return np.mean([{3, 5} <= set(labels[g].tolist()) for g in grids]) if grids else 0.0


def test_identical_rotated_and_scaled_representations_give_no_explanation(mixture):
    R0, _, _ = mixture
    rotation = np.linalg.qr(np.random.default_rng(1).normal(size=(16, 16)))[0]
    for other in (R0.copy(), R0 @ rotation * 7.5):
        explanation = RDX().explain(None, (R0, other))
        assert not explanation.meta["found"]
        assert explanation.values == {"1_over_0": [], "0_over_1": []}


def test_ranks_are_invariant_to_rotation_and_scale(mixture):
    R0, _, _ = mixture
    rotation = np.linalg.qr(np.random.default_rng(2).normal(size=(16, 16)))[0]
    assert np.array_equal(neighborhood_ranks(R0), neighborhood_ranks(R0 @ rotation * 3))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_planted_merge_shows_in_one_direction_only(seed):
    R0, R1, labels = planted_mixture(400, seed=seed)
    explanation = RDX(seed=seed).explain(None, (R0, R1))
    merge = explanation.values["1_over_0"]  # model 1 puts 3 and 5 together, model 0 does not
    assert merged_share(merge, labels) >= 0.5
    assert merged_share(explanation.values["0_over_1"], labels) == 0.0


def test_rdx_bsr_beats_kmeans_bsr(mixture):
    R0, R1, _labels = mixture
    explanation = RDX().explain(None, (R0, R1))
    D0, D1 = neighborhood_ranks(R0), neighborhood_ranks(R1)
    ours = np.mean(explanation.meta["bsr"]["1_over_0"])
    kmeans = np.mean([bsr(g, D1, D0) for g in baseline_grids(R1, "kmeans")])
    assert ours > kmeans + 0.1, (ours, kmeans)


def test_knn_mode_finds_the_same_merge():
    R0, R1, labels = planted_mixture(600, seed=3)
    explanation = RDX(knn=30, seed=3).explain(None, (R0, R1))
    assert merged_share(explanation.values["1_over_0"], labels) >= 0.5
    assert not RDX(knn=30).explain(None, (R0, R0 * 2)).meta["found"]


def test_deterministic_under_a_seed_and_inputs_untouched(mixture):
    R0, R1, _ = mixture
    before = R0.copy(), R1.copy()
    a = RDX(seed=4).explain(None, (R0, R1))
    b = RDX(seed=4).explain(None, (R0, R1))
    assert a.values == b.values and a.meta["bsr"] == b.meta["bsr"]
    assert np.array_equal(R0, before[0]) and np.array_equal(R1, before[1])


def test_bsr_and_cka_by_hand():
    D_close = np.array([[0, 1, 2], [1, 0, 2], [1, 2, 0]], float)
    D_far = np.array([[0, 2, 1], [2, 0, 1], [1, 1, 0]], float)
    # ordered pairs: (0,1) 1<2 yes, (0,2) 2<1 no, (1,0) 1<2 yes, (1,2) 2<1 no, (2,0) 1<1 no, (2,1) 2<1 no
    assert bsr(np.array([0, 1, 2]), D_close, D_far) == pytest.approx(2 / 6)
    X = np.random.default_rng(0).normal(size=(50, 5))
    assert linear_cka(X, X @ np.diag([1, 2, 3, 4, 5]) @ np.linalg.qr(np.eye(5))[0]) < 1
    rotation = np.linalg.qr(np.random.default_rng(1).normal(size=(5, 5)))[0]
    assert linear_cka(X, X @ rotation * 4) == pytest.approx(1.0)
    assert debiased_cka(X, X @ rotation) == pytest.approx(1.0)


def test_bad_inputs():
    R = np.zeros((10, 3))
    with pytest.raises(ValueError, match=r"inputs\[0\] and inputs\[1\] .* same number of rows"):
        RDX().explain(None, (R, R[:9]))
    with pytest.raises(ValueError, match=r"inputs\[1\] holds NaN"):
        RDX().explain(None, (R, np.full((10, 3), np.nan)))
    with pytest.raises(TypeError, match="inputs must be the pair"):
        RDX().explain(None, R)
    with pytest.raises(ValueError, match="distance must be one of"):
        RDX(distance="cosine")


def test_knn_beyond_the_items_is_named():
    """issue 33: RDX(knn=5000) on 300 items ran (k silently cut to n - 1)."""
    R0, R1, _ = planted_mixture(300, seed=0)
    with pytest.raises(ValueError, match=r"knn must lie in \[1, 299\], got 5000"):
        RDX(knn=5000).explain(None, (R0, R1))


def test_bsr_of_a_merge_grid_is_its_share_of_cross_label_pairs(mixture):
    """issue 35 (grid BSR near 0.55 with the merge in every grid): in a merge, same-label pairs
    rank farther in the merging model (the other label's items moved in), so BSR is exactly
    the share of cross-label pairs, at most 2·5·4/72 for a grid of nine."""
    R0, R1, labels = mixture
    explanation = RDX().explain(None, (R0, R1))
    D0, D1 = neighborhood_ranks(R0), neighborhood_ranks(R1)
    for grid, score in zip(
        explanation.values["1_over_0"], explanation.meta["bsr"]["1_over_0"], strict=True
    ):
        i, j = np.meshgrid(grid, grid, indexing="ij")
        off = i != j
        cross = off & (labels[i] != labels[j])
        wins = D1[i, j] < D0[i, j]
        assert wins[cross].all() and not wins[off & ~cross].any()
        assert score == pytest.approx(cross.sum() / off.sum()) and score <= 40 / 72 + 1e-12
