"""The estimator against a brute-force count; the Markov sampler and reference predictors."""

import itertools

import numpy as np
import pytest
from paperplug_kgram import bayes_nll, conditional_kgram, sample_chains, unigram_nll


def brute(x, S, k, alpha):
    out = np.full((len(x), S), 1.0 / S)
    for n in range(k - 1, len(x)):
        context = tuple(x[n - k + 1 : n + 1])
        counts = np.zeros(S)
        for i in range(k, n + 1):
            if tuple(x[i - k : i]) == context:
                counts[x[i]] += 1
        if counts.sum() + S * alpha > 0:
            out[n] = (counts + alpha) / (counts.sum() + S * alpha)
    return out


@pytest.mark.parametrize(
    ("S", "k", "alpha"), list(itertools.product([2, 3, 5], [1, 2, 3], [0.0, 0.5, 1.0]))
)
def test_estimator_equals_brute_force_count(S, k, alpha):
    x = np.random.default_rng(S * 10 + k).integers(0, S, 60)
    assert np.allclose(conditional_kgram(x, S, k, alpha), brute(x, S, k, alpha), atol=1e-15)


def test_no_match_is_uniform_and_a_repeated_pattern_is_certain():
    x = np.array([0, 1, 2, 0, 1, 2, 0, 1])
    p = conditional_kgram(x, 3, 2)
    assert np.allclose(p[1], 1 / 3)  # context (0, 1) seen for the first time
    assert np.allclose(p[4], [0, 0, 1])  # (0, 1) was followed by 2


def test_sampler_follows_its_chain_and_the_bayes_predictor_beats_unigram():
    x = sample_chains(400, 60, 3, 1, rng=np.random.default_rng(0))
    assert x.shape == (400, 60) and x.min() >= 0 and x.max() <= 2
    assert bayes_nll(x, 3, 1) < unigram_nll(x, 3) < np.log(3)
    again = sample_chains(400, 60, 3, 1, rng=np.random.default_rng(0))
    assert (x == again).all()


def test_unigram_nll_by_hand():
    # add-1 counts over [0, 0]: p(x1 = 0 | x0 = 0) = (1 + 1) / (1 + 2)
    assert unigram_nll(np.array([[0, 0]]), 2) == pytest.approx(-np.log(2 / 3))
