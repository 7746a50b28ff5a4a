"""Memory is estimated before anything is allocated: the ViT-B/16-sized all-pairs lookup is
refused (or, by default, replaced by the image x text lookup with a warning) without one
encoder pass, and the estimates bound what the estimators really allocate."""

import tracemalloc
import warnings

import numpy as np
import pytest
from games import encoder_pair, table_game
from paperplug_fixlip import FIxLIP, FunctionGame, approximate, approximate_crossmodal
from paperplug_fixlip.memory import dual_fit_bytes, joint_fit_bytes, lookup_size


def test_vit_b16_all_pairs_refused_before_any_pass():
    """196 patches x 16 tokens: 1 + 212 + C(212, 2) = 22,579 terms; the m x m normal matrix
    alone is 3.8 GiB, the whole fit about 18 GiB. interactions='all' fails at once, naming
    what to pass, and no encoder has run."""
    game = encoder_pair(196, 16, seed=0)
    assert lookup_size(212, 2) == 22_579
    assert dual_fit_bytes(196, 16, 119, 548) > 8 * 22_579**2 > 3.7 * 2**30
    with pytest.raises(ValueError, match=r"22,579 terms.*interactions='crossmodal'"):
        FIxLIP(interactions="all").explain(game)
    assert game.encoder_calls == 0


def test_default_switches_to_the_image_text_lookup_with_a_warning():
    game = encoder_pair(196, 16, seed=0)
    explainer = FIxLIP()
    with pytest.warns(UserWarning, match=r"fitting the image x text lookup \(3,349 terms"):
        explanation = explainer.explain(game)
    assert (
        len(explainer.interactions_.lookup)
        == 3349
        == lookup_size(212, n_a=196, crossmodal_only=True)
    )
    second = explanation.values["second_order"]
    assert np.all(second[:196, :196] == 0) and np.any(second[:196, 196:] != 0)
    with warnings.catch_warnings():  # the same explanation asked for by name: no warning
        warnings.simplefilter("error")
        named = FIxLIP(interactions="crossmodal").explain(encoder_pair(196, 16, seed=0))
    assert np.array_equal(named.values["second_order"], second)


def test_small_games_keep_all_pairs_and_over_limit_says_what_to_pass():
    game = encoder_pair(5, 4, seed=1)
    assert len(FIxLIP().interactions(game).lookup) == lookup_size(9, 2) == 46
    value, _ = table_game(6, seed=0)
    with pytest.raises(ValueError, match=r"max_order=1, or a larger max_memory_gib"):
        FIxLIP(max_memory_gib=1e-6).interactions(FunctionGame(value, 6))
    with pytest.raises(ValueError, match="image x text lookup") as err:
        FIxLIP(interactions="crossmodal", max_memory_gib=1e-9).interactions(game)
    assert "interactions='crossmodal'" not in str(err.value)


@pytest.mark.parametrize(
    "case",
    [
        ("dual", 12, 10, 300, 200, False),
        ("dual", 60, 8, 2000, 64, True),
        ("joint", 12, 8, 1500, None, False),
    ],
)
def test_estimates_bound_the_measured_peak(case):
    """tracemalloc's peak during the fit is below the estimate, and above half of it."""
    kind, n_a, n_b, rows_a, rows_b, cross = case
    game = encoder_pair(n_a, n_b, seed=2)
    assert np.isfinite(game.empty_value)  # computed before measuring, as the explainer does
    tracemalloc.start()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # small budgets: not the point here
        if kind == "dual":
            approximate_crossmodal(game, budget_a=rows_a, budget_b=rows_b, crossmodal_only=cross)
        else:
            approximate(game, rows_a)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    if kind == "dual":
        estimate = dual_fit_bytes(n_a, n_b, rows_a, rows_b, crossmodal=cross)
    else:
        estimate = joint_fit_bytes(lookup_size(n_a + n_b, 2), rows_a)
    assert estimate / 2 < peak < estimate
