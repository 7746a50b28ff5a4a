"""The paper's metrics on planted games: a token that interacts only with its own region is
pointed at by the second order (PGR = 1) and not by the first; a degree-2 game is fully
p-faithful; the insertion curves rank a planted game's coalitions."""

import numpy as np
import pytest
from paperplug_fixlip import (
    DualEncoderGame,
    FunctionGame,
    exact_fwbii,
    insertion_deletion,
    p_faithfulness,
    pointing_game,
)

from paperplug.testing import assert_rejects_bad_input

REGIONS = np.array([0, 0, 1, 1])  # four patches, two regions
TOKENS = np.array([0, 1])  # token 0 names region 0, token 1 region 1


def planted_mosaic_game() -> DualEncoderGame:
    """Embedding dims 0/1 light up for region 0/1's patches and for token 0/1: the
    similarity rises only when a token and a patch of its region are both present."""

    def enc_image(mask):
        return np.stack([mask[:, :2].sum(1), mask[:, 2:].sum(1), np.ones(len(mask))], axis=1)

    def enc_text(mask):
        return np.stack([mask[:, 0], mask[:, 1], np.ones(len(mask))], axis=1).astype(float)

    return DualEncoderGame(enc_image, enc_text, 4, 2, normalize=False)


def test_second_order_points_where_first_order_cannot():
    result = exact_fwbii(planted_mosaic_game())
    pgr = pointing_game(result, REGIONS, TOKENS)
    assert pgr["pgr_second_order"] == pytest.approx(1.0)
    assert pgr["pgr_first_order"] == pytest.approx(0.5)  # both regions light up for any token
    with pytest.raises(ValueError, match="patch_regions"):
        pointing_game(result, REGIONS[:3], TOKENS)


def test_degree_two_game_is_fully_faithful():
    game = FunctionGame(lambda c: 2 * c[:, 0] * c[:, 1] - c[:, 2] + 0.5 * c[:, 3], 6)
    scores = p_faithfulness(game, exact_fwbii(game, p=0.3), 200, random_state=0)
    assert scores["r2"] == pytest.approx(1.0) and scores["mse"] == pytest.approx(0.0, abs=1e-20)
    assert scores["r2_shapley_weighted"] == pytest.approx(1.0)
    assert scores["pearson"] == pytest.approx(1.0)


def test_faithfulness_rejects_a_coalition_probability_outside_0_1():
    """issue 48: p=1.5 drew every player into every coalition and scored R² = nan silently."""
    game = FunctionGame(lambda c: 2 * c[:, 0] * c[:, 1] - c[:, 2], 4)
    result = exact_fwbii(game, p=0.3)
    assert_rejects_bad_input(
        p_faithfulness,
        (game, result, 50),
        {"p": 0.4, "random_state": 1},
        bad_params={"n_samples": [2, 0], "p": [1.5, 1.0, 0.0, -0.2], "random_state": [-1]},
    )
    with pytest.raises(ValueError, match=r"p must lie in \(0, 1\), got 1.5"):
        p_faithfulness(game, result, 50, p=1.5)


def test_insertion_curves_on_a_planted_pair_game():
    """ν = 3·[0 and 1 both in] + Σ small singletons: the pair {0, 1} is worth more than any
    other two players but neither alone is; greedy cliques insert both at k = 2."""
    weights = np.array([0.1, 0.1, 0.3, 0.2, 0.25])
    game = FunctionGame(lambda c: 3.0 * c[:, 0] * c[:, 1] + c @ weights, 5)
    result = exact_fwbii(game)
    second = insertion_deletion(game, result, order=2)
    first = insertion_deletion(game, result, order=1)
    assert second["mif"][2] == pytest.approx((3.2) / (3.0 + weights.sum()))
    assert second["mif"][0] == 0.0 and second["mif"][-1] == pytest.approx(1.0)
    assert second["aid"] > 0 and second["aid"] >= first["aid"] - 1e-12
    with pytest.raises(ValueError, match="order"):
        insertion_deletion(game, result, order=3)


def test_official_aid_scaling_by_hand():
    """ν = 2·x0·x1 + x2 − 0.5 on 3 players: ν(∅) = −0.5, ν(N) = 2.5. By hand, the best
    coalition of each size is {}, {2}, {0, 1}, N (ν = −0.5, 0.5, 1.5, 2.5) and the worst {},
    {0}, {0, 2}, N (−0.5, −0.5, 0.5, 2.5). The official scaling (ν − ν(∅)) / (ν(N) − ν(∅))
    gives MIF = 0, 1/3, 2/3, 1 and LIF = 0, 0, 1/3, 1, so AID = mean(0, 1/3, 1/3, 0) = 1/6."""
    game = FunctionGame(lambda c: 2.0 * c[:, 0] * c[:, 1] + c[:, 2] - 0.5, 3)
    result = exact_fwbii(game)
    official = insertion_deletion(game, result, order=2, scale="official")
    assert np.allclose(official["mif"], [0, 1 / 3, 2 / 3, 1])
    assert np.allclose(official["lif"], [0, 0, 1 / 3, 1])
    assert official["aid"] == pytest.approx(1 / 6)
    by_range = insertion_deletion(game, result, order=2)  # range 3.0 = ν(N) − ν(∅) here too
    assert by_range["aid"] == pytest.approx(1 / 6)
    with pytest.raises(ValueError, match="scale"):
        insertion_deletion(game, result, scale="paper")


def test_official_aid_warns_when_full_equals_empty():
    """ν(N) ≈ ν(∅) (players 0 and 1 cancel): the official denominator is tiny, so it warns;
    the range scaling stays bounded."""
    game = FunctionGame(lambda c: c[:, 0] - c[:, 1] * 0.999 + 0.0 * c[:, 2], 3)
    result = exact_fwbii(game)
    with pytest.warns(RuntimeWarning, match="official scaling inflates"):
        inflated = insertion_deletion(game, result, scale="official")
    assert abs(inflated["aid"]) > 10 * abs(insertion_deletion(game, result)["aid"])
