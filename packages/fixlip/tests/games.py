"""Small games with known answers, shared by the tests."""

import numpy as np
from paperplug_fixlip import DualEncoderGame


def table_game(n: int, seed: int):
    """A random game given by its table over all 2^n coalitions (bit i = player i)."""
    table = np.random.default_rng(seed).normal(size=2**n)

    def value(coalitions):
        bits = np.asarray(coalitions, dtype=np.int64) * (1 << np.arange(n))
        return table[bits.sum(axis=1)]

    return value, table


def encoder_pair(n_a: int, n_b: int, seed: int, d: int = 8) -> DualEncoderGame:
    """A nonlinear dual encoder: masks -> tanh(random projection) embeddings."""
    rng = np.random.default_rng(seed)
    wa, wb = rng.normal(size=(n_a, d)), rng.normal(size=(n_b, d))
    ba, bb = rng.normal(size=d), rng.normal(size=d)

    def enc_a(mask):
        return np.tanh(mask @ wa * 0.7 + ba)

    def enc_b(mask):
        return np.tanh(mask @ wb * 0.7 + bb)

    return DualEncoderGame(enc_a, enc_b, n_a, n_b, scale=5.0)
