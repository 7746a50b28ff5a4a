"""The naive and delay-k rules, metrics and the choice of θ and k."""

import pytest
from paperplug_scm import (
    DelayKCounter,
    binary_metrics,
    choose_theta_k,
    delay_k_stop,
    naive_stop,
    stream_metrics,
)


def test_delay_k_counts_non_consecutive_tokens():
    scores = [0.1, 0.7, 0.2, 0.6, 0.9, 0.4, 0.8]
    assert naive_stop(scores, 0.5) == 1
    assert delay_k_stop(scores, 0.5, 2) == 3
    assert delay_k_stop(scores, 0.5, 4) == 6
    assert delay_k_stop(scores, 0.5, 5) is None
    assert delay_k_stop(scores, 0.75, 2) == 6
    counter = DelayKCounter(0.5, 3)
    flags = [counter.update(s) for s in scores]
    assert flags == [False, False, False, False, True, True, True]
    assert counter.n_flagged == 4 and counter.n_seen == 7


def test_threshold_is_inclusive():
    assert naive_stop([0.49, 0.5], 0.5) == 1


@pytest.mark.parametrize("theta,k", [(0.0, 1), (1.2, 1), (0.5, 0), (0.5, 2.0), (0.5, True)])
def test_bad_rule_rejected(theta, k):
    with pytest.raises(ValueError):
        DelayKCounter(theta, k)


def test_metrics_by_hand():
    m = binary_metrics([1, 1, 0, 0, 1], [1, 0, 0, 0, 1])
    # harmful: tp 2, fp 1, fn 0 -> 0.8; benign: tp 2, fp 0, fn 1 -> 0.8
    assert m["macro_f1"] == pytest.approx(0.8)
    assert m["false_alarm_rate"] == pytest.approx(1 / 3) and m["miss_rate"] == 0.0
    scores = [[0.1, 0.9, 0.9, 0.1], [0.1, 0.1], [0.9, 0.1, 0.1, 0.1, 0.1]]
    s = stream_metrics(scores, [1, 0, 1], theta=0.5, k=1)
    assert s["macro_f1"] == 1.0
    assert s["frac_read_harmful"] == pytest.approx((2 / 4 + 1 / 5) / 2)
    assert s["frac_read_all"] == pytest.approx((2 / 4 + 1 + 1 / 5) / 3)


def test_choose_theta_k_recovers_a_planted_rule():
    # benign responses hold up to 2 scattered scores of 0.75; harmful ones 3 scores above 0.85:
    # only theta >= 0.8 with k <= 3, or theta 0.5-0.7 with k = 3, separates them.
    benign = [[0.75, 0.1, 0.75, 0.1, 0.1, 0.1]] * 4
    harmful = [[0.1, 0.9, 0.95, 0.88, 0.1, 0.1]] * 4
    theta, k, m = choose_theta_k(benign + harmful, [0] * 4 + [1] * 4)
    assert m["macro_f1"] == 1.0
    assert (theta >= 0.8 and k == 1) or (theta < 0.8 and k == 3)
    assert m["frac_read_harmful"] == pytest.approx(2 / 6 if k == 1 else 4 / 6)
    assert (theta, k) == (0.8, 1)  # ties go to fewer tokens read
