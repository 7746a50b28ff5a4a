"""The random-colouring regime: with no dominant group the PoF tends to 1 as markets grow."""

import pytest
from paperplug_matroid import random_colouring_trend


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pof_tends_to_one_in_large_balanced_random_markets(seed):
    small, large = random_colouring_trend([10, 300], [1 / 3] * 3, degree=1.0, trials=30, seed=seed)
    assert large.mean_pof <= small.mean_pof and large.mean_pof < 1.002
    assert large.share_equal_to_one >= 0.8


def test_trend_is_reproducible():
    a = random_colouring_trend([20, 50], [0.5, 0.5], trials=5, seed=4)
    assert a == random_colouring_trend([20, 50], [0.5, 0.5], trials=5, seed=4)
    assert all(p.mean_pof == 1.0 for p in a)  # C = 2: always 1
