"""The embedded default's settings and data, shared by demo.py and bench/run.py."""

from __future__ import annotations

import numpy as np
import torch

from paperplug_kgram.markov import sample_chains

# (vocabulary size, order) pairs the construction is verified on.
CONSTRUCTION_CASES = ((2, 1), (3, 1), (3, 2), (4, 2), (3, 3), (2, 4), (5, 4), (2, 5))
# The learning-dynamics setting: order-1 chains over 3 symbols, Dirichlet(1) rows.
TRAINING = {"vocab_size": 3, "order": 1, "seq_len": 48, "d_model": 24, "batch_size": 32,
            "steps": 600, "lr": 5e-3, "alpha": 1.0, "record_every": 25}  # fmt: skip


def random_sequences(vocab_size: int, n: int, length: int, seed: int) -> np.ndarray:
    """Uniformly random token sequences (n, length): every window pattern occurs."""
    return np.random.default_rng(seed).integers(0, vocab_size, size=(n, length))


def chains(n: int, seed: int, **overrides: int) -> torch.Tensor:
    """Sequences from fresh order-1 chains in the TRAINING setting."""
    cfg = {**TRAINING, **overrides}
    return sample_chains(n, cfg["seq_len"], cfg["vocab_size"], cfg["order"], alpha=cfg["alpha"],
                         rng=np.random.default_rng(seed))  # fmt: skip
