"""In-context learning data: every sequence comes from its own random Markov chain of order k
(transition rows drawn from Dirichlet(α)), and the reference predictors to score against."""

from __future__ import annotations

import numpy as np
import torch

from paperplug.checks import check_array, check_scalar, check_type
from paperplug_kgram.estimator import check_tokens, conditional_kgram


def sample_chains(
    n_sequences: int,
    length: int,
    vocab_size: int,
    k: int,
    *,
    alpha: float = 1.0,
    rng: np.random.Generator | None = None,
) -> torch.Tensor:
    """(n_sequences, length) token ids: the first k tokens uniform, then each sequence follows
    its own order-k chain whose S^k transition rows are drawn from Dirichlet(α)."""
    check_scalar(n_sequences, "n_sequences", "int", low=1)
    check_scalar(k, "k", "int", low=1)
    if check_scalar(length, "length", "int", low=1) <= k:
        raise ValueError(f"length must exceed the order (length > k = {k}), got {length}")
    check_scalar(vocab_size, "vocab_size", "int", low=2)
    check_scalar(alpha, "alpha", low=0, inclusive="neither")
    if rng is not None:
        check_type(rng, "rng", np.random.Generator)
    rng = rng if rng is not None else np.random.default_rng(0)
    S = vocab_size
    rows = rng.dirichlet(np.full(S, float(alpha)), size=(n_sequences, S**k))  # (n, S^k, S)
    cumulative = np.cumsum(rows, -1)
    x = np.empty((n_sequences, length), dtype=np.int64)
    x[:, :k] = rng.integers(0, S, size=(n_sequences, k))
    weights = S ** np.arange(k - 1, -1, -1)
    batch = np.arange(n_sequences)
    for t in range(k, length):
        context = x[:, t - k : t] @ weights
        u = rng.random(n_sequences)[:, None]
        x[:, t] = np.minimum((u > cumulative[batch, context]).sum(-1), S - 1)
    return torch.from_numpy(x)


def predictor_nll(x: object, probs: np.ndarray) -> float:
    """Mean −log p(x_{t+1} | x_{≤t}) of predictions `probs` (..., T, S) over t = 0..T−2."""
    tokens = check_array(x, "x", dtype="int")
    probs = check_array(probs, "probs")
    if probs.shape[:-1] != tokens.shape or (tokens >= probs.shape[-1]).any() or (tokens < 0).any():
        raise ValueError(
            f"probs must have shape x.shape + (S,) with x's ids in 0..S-1, got {probs.shape} for "
            f"x of shape {tokens.shape}"
        )
    nxt = tokens[..., 1:]
    p = np.take_along_axis(probs[..., :-1, :], nxt[..., None], -1)[..., 0]
    return float(-np.log(np.clip(p, 1e-300, None)).mean())


def bayes_nll(x: object, vocab_size: int, k: int, alpha: float = 1.0) -> float:
    """The Bayes predictor's NLL (add-α conditional k-gram) on the sequences x."""
    tokens = check_tokens(x, vocab_size, k)
    return predictor_nll(tokens, conditional_kgram(tokens, vocab_size, k, alpha))


def unigram_nll(x: object, vocab_size: int, alpha: float = 1.0) -> float:
    """The in-context unigram predictor's NLL (add-α counts of the tokens so far): the level a
    model that ignores order reaches."""
    tokens = check_tokens(x, vocab_size, 1)
    check_scalar(alpha, "alpha", low=0, inclusive="neither")
    tokens = tokens[None] if tokens.ndim == 1 else tokens
    onehot = np.eye(vocab_size)[tokens]  # (n, T, S)
    counts = np.cumsum(onehot, 1)
    probs = (counts + alpha) / (counts.sum(-1, keepdims=True) + vocab_size * alpha)
    return predictor_nll(tokens, probs)
