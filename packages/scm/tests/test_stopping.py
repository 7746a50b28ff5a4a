"""The naive and delay-k rules, metrics and the choice of θ and k."""

import random

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


def test_windowed_rule_by_hand():
    scores = [0.9, 0.1, 0.1, 0.9, 0.1, 0.1, 0.9, 0.9]
    assert delay_k_stop(scores, 0.5, 2) == 3  # cumulative: the 2nd flag, far from the 1st
    assert delay_k_stop(scores, 0.5, 2, window=3) == 7  # 2 flags within 3 tokens
    assert delay_k_stop(scores, 0.5, 3, window=4) is None
    assert delay_k_stop(scores, 0.5, 1, window=1) == naive_stop(scores, 0.5) == 0
    counter = DelayKCounter(0.5, 2, window=3)
    assert [counter.update(s) for s in scores[:4]] == [False] * 4
    assert counter.n_flagged == 1  # the flag at 0 left the window


def test_rules_match_their_definitions_by_brute_force():
    rng = random.Random(0)
    for _ in range(300):
        scores = [rng.random() for _ in range(rng.randint(0, 40))]
        theta, k = rng.choice([0.5, 0.7, 0.9]), rng.randint(1, 5)
        window = rng.choice([None, k, k + 3, 20])
        flags = [s >= theta for s in scores]
        want = next(
            (
                i
                for i in range(len(scores))
                if sum(flags[(0 if window is None else max(0, i + 1 - window)) : i + 1]) >= k
            ),
            None,
        )
        got = delay_k_stop(scores, theta, k, window)
        assert got == want
        cumulative = delay_k_stop(scores, theta, k)
        if got is not None:  # a window only ever delays or prevents a stop
            assert cumulative is not None and cumulative <= got


def test_truncate_forgets_the_last_tokens():
    counter = DelayKCounter(0.5, 3)
    for s in (0.9, 0.9, 0.1, 0.9):
        counter.update(s)
    assert counter.stop and counter.n_seen == 4
    counter.truncate(2)
    assert counter.n_seen == 2 and counter.n_flagged == 2 and not counter.stop


def test_threshold_is_inclusive():
    assert naive_stop([0.49, 0.5], 0.5) == 1


@pytest.mark.parametrize(
    "theta,k,window,error,named",
    [
        (0.0, 1, None, ValueError, "theta"),
        (1.2, 1, None, ValueError, "theta"),
        (0.5, 0, None, ValueError, "k"),
        (0.5, 2.0, None, TypeError, "k"),
        (0.5, True, None, TypeError, "k"),
        (0.5, 3, 2, ValueError, "window"),
        (0.5, 1, 0, ValueError, "window"),
        (0.5, 1, 2.5, TypeError, "window"),
    ],
)
def test_bad_rule_rejected(theta, k, window, error, named):
    with pytest.raises(error, match=rf"^{named} must"):
        DelayKCounter(theta, k, window)


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
