"""The sampled and cross-modal estimators: exact at full budget, the border trick, the
cross-modal advantage at equal encoder passes (over seeds), bad inputs."""

import numpy as np
import pytest
from games import encoder_pair, table_game
from paperplug_fixlip import (
    FunctionGame,
    approximate,
    approximate_crossmodal,
    banzhaf_size_weights,
    exact_fwbii,
    sample_coalitions,
    small_side_floor,
    split_budget,
    split_passes,
)


@pytest.mark.parametrize("p", [0.3, 0.5])
def test_full_budget_is_exact(p):
    value, _ = table_game(7, seed=8)
    game = FunctionGame(value, 7)
    exact = exact_fwbii(game, p=p)
    full = approximate(game, 2**7, p=p, random_state=1)
    assert not full.estimated and np.allclose(full.values, exact.values, atol=1e-10)
    dual = encoder_pair(4, 5, seed=9)
    cross = approximate_crossmodal(dual, budget_a=16, budget_b=32, p=p, random_state=1)
    assert not cross.estimated and np.allclose(
        cross.values, exact_fwbii(dual, p=p).values, atol=1e-10
    )


def test_border_trick_enumerates_the_likely_sizes():
    """n = 10, p = 0.3, budget 200: sizes 0, 1, 2 (1 + 10 + 45 coalitions) have expected
    counts above their number of coalitions, so they are enumerated with weight μ_p(T); the
    other 144 are drawn. (At p = 0.5 every coalition is equally likely: the border trick
    only enumerates at a budget of 2^n.)"""
    rng = np.random.default_rng(0)
    sample = sample_coalitions(10, 200, banzhaf_size_weights(10, 0.3), rng)
    sizes = sample.coalitions.sum(axis=1)
    assert len(sample.coalitions) == 200 == len(np.unique(sample.coalitions, axis=0))
    assert sample.n_enumerated == 56
    assert [(sizes == k).sum() for k in range(3)] == [1, 10, 45]
    assert np.allclose(sample.weights[sizes == 1], 0.3 * 0.7**9)
    assert sample.weights.sum() == pytest.approx(1.0, abs=0.05)
    assert sample_coalitions(10, 200, banzhaf_size_weights(10, 0.5), rng).n_enumerated == 0


@pytest.mark.filterwarnings("ignore:joint sampling is ill-conditioned")
def test_crossmodal_beats_joint_sampling_at_equal_passes():
    """8 image x 6 text players (106 interactions), 256 encoder passes: the cross-modal
    estimate (192 + 64 passes, 12288 pairs) has a lower squared error to the exact FWBII
    than joint sampling (128 coalitions, two passes each) on every one of 5 seeds (we
    require >= 4 of 5)."""
    game = encoder_pair(8, 6, seed=10)
    exact = exact_fwbii(game).values
    wins = 0
    for seed in range(5):
        cross = approximate_crossmodal(game, budget_a=192, budget_b=64, random_state=seed)
        joint = approximate(game, 128, random_state=seed)
        assert cross.encoder_calls == joint.encoder_calls == 256
        wins += np.mean((cross.values - exact) ** 2) < np.mean((joint.values - exact) ** 2)
    assert wins >= 4


def test_budget_splits():
    assert split_budget(2**19, 49, 6) == (2**19 // 64, 64)  # the paper's 2^13 × 2^6
    # 196 x 16 at 2^16 pairs: the paper's rule gives the text side 21 coalitions for its 17
    # image x text terms; the floor the estimators pass raises it to 4 x 17
    assert split_budget(2**16, 196, 16) == (3120, 21)
    floor = small_side_floor(196, 16, 2, crossmodal_only=True)
    assert floor == 68 and split_budget(2**16, 196, 16, min_small=floor) == (963, 68)
    assert small_side_floor(9, 10, 2, crossmodal_only=False) == 4 * 46
    a, b = split_passes(256, 9, 10)
    assert a + b == 256 and a < b


def test_same_seed_same_result_and_rng_untouched():
    game = encoder_pair(5, 5, seed=11)
    state = np.random.get_state(legacy=False)
    first = approximate_crossmodal(game, budget_a=24, budget_b=24, random_state=4)
    second = approximate_crossmodal(game, budget_a=24, budget_b=24, random_state=4)
    assert np.array_equal(first.values, second.values)
    assert str(np.random.get_state(legacy=False)) == str(state)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda g, f: approximate(f, 10, p=0.0), "p must"),
        (lambda g, f: approximate(f, 10, p=1.5), "p must"),
        (lambda g, f: approximate(f, 0), "budget"),
        (lambda g, f: approximate(f, 10, mode="owen"), "mode"),
        (lambda g, f: exact_fwbii(f, crossmodal_only=True), "crossmodal_only"),
        (lambda g, f: approximate_crossmodal(g), "budget"),
        (lambda g, f: split_budget(3, 4, 4), "budget must be >= 4"),
    ],
)
def test_bad_arguments_rejected(call, match):
    game = encoder_pair(3, 3, seed=0)
    value, _ = table_game(4, seed=0)
    with pytest.raises(ValueError, match=match):
        call(game, FunctionGame(value, 4))


def test_bad_games_rejected():
    with pytest.raises(TypeError, match="game must"):
        exact_fwbii(lambda c: c.sum(1))
    with pytest.raises(ValueError, match="non-finite"):
        exact_fwbii(FunctionGame(lambda c: np.full(len(c), np.nan), 3))
    with pytest.raises(ValueError, match="values"):
        exact_fwbii(FunctionGame(lambda c: np.zeros(3), 4))
    with pytest.raises(ValueError, match="n must"):
        FunctionGame(lambda c: c.sum(1), 0)
    from paperplug_fixlip import DualEncoderGame

    bad = DualEncoderGame(lambda m: np.ones((len(m) + 1, 3)), lambda m: np.ones((len(m), 3)), 2, 2)
    with pytest.raises(ValueError, match="encode_a must return"):
        exact_fwbii(bad)
    with pytest.raises(TypeError, match="callables"):
        DualEncoderGame("clip", None, 2, 2)


def test_exact_run_prints_no_progress_bar(monkeypatch, capfd):
    """Progress bars switched on (as for a user): an exact 7-player run, one enumeration chunk
    of milliseconds, leaves stderr empty."""
    import tqdm  # noqa: F401  (the bar library is installed, so a bar could appear)

    monkeypatch.setenv("PAPERPLUG_PROGRESS", "1")
    value, _ = table_game(7, seed=2)
    result = exact_fwbii(FunctionGame(value, 7))
    assert not result.estimated
    assert capfd.readouterr().err == ""


def test_joint_sampling_warns_when_ill_conditioned():
    """9 x 10 players, 191 interactions: 200 coalitions solve but leave a direction nearly
    uncovered (it warns, and the error is far above that at 4 x 191 coalitions, which does
    not warn), on each of 3 seeds."""
    import warnings

    game = encoder_pair(9, 10, seed=3)
    exact = exact_fwbii(game).values
    for seed in range(3):
        with pytest.warns(RuntimeWarning, match="ill-conditioned"):
            tight = approximate(game, 200, random_state=seed)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            comfortable = approximate(game, 4 * 191, random_state=seed)
        tight_mse = np.mean((tight.values - exact) ** 2)
        assert tight_mse > 10 * np.mean((comfortable.values - exact) ** 2)


@pytest.mark.parametrize(
    "cross, tight, comfortable",
    [(False, (50, 60), (184, 224)), (True, (12, 13), (40, 44))],
)
def test_crossmodal_estimator_warns_when_ill_conditioned(cross, tight, comfortable):
    """9 x 10 players. All pairs: each modality's part of the lookup has 46 and 56 terms, and
    50 x 60 coalitions solve but cover a direction far less than Bernoulli(1/2) does. The
    image x text lookup: 10 and 11 terms, 12 x 13 coalitions. Each warns, on 3 seeds, with an
    error over 5x that at about 4x the terms, which does not warn."""
    import warnings

    game = encoder_pair(9, 10, seed=3)
    exact = exact_fwbii(game, crossmodal_only=cross).values
    for seed in range(3):
        with pytest.warns(RuntimeWarning, match="cross-modal estimator is ill-conditioned"):
            bad = approximate_crossmodal(
                game, budget_a=tight[0], budget_b=tight[1], crossmodal_only=cross, random_state=seed
            )
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            good = approximate_crossmodal(
                game,
                budget_a=comfortable[0],
                budget_b=comfortable[1],
                crossmodal_only=cross,
                random_state=seed,
            )
        assert np.mean((bad.values - exact) ** 2) > 5 * np.mean((good.values - exact) ** 2)
