"""The in-context conditional k-gram estimator and its add-α (Bayes) version (paper §2).

At position n (k tokens of context at least) the estimate of the next token is the empirical
distribution of what followed earlier occurrences of the last k tokens:

    p̂(s | x_{≤n}) = (#{i ≤ n : x_{i−k..i−1} = x_{n−k+1..n}, x_i = s} + α) / (#matches + S·α),

uniform when there is no match (and α = 0). With a Dirichlet(α) prior on each transition row of
an order-k Markov chain, the add-α estimate is the Bayes predictor.
"""

from __future__ import annotations

import numpy as np

from paperplug.checks import check_array, check_scalar


def check_tokens(
    x: object,
    vocab_size: int,
    k: int,
    name: str = "x",
    k_name: str = "k",
    vocab_name: str = "vocab_size",
) -> np.ndarray:
    """Token ids as an int64 array (T,) or (batch, T) in 0..vocab_size−1; k ≥ 1. Errors name
    the argument (`name`, `k_name`, `vocab_name`) as the caller wrote it."""
    check_scalar(vocab_size, vocab_name, "int", low=2)
    check_scalar(k, k_name, "int", low=1)
    arr = check_array(x, name, dtype="int", ndim=(1, 2))
    if arr.shape[-1] == 0:
        raise ValueError(f"{name} must have shape (T,) or (batch, T) with T >= 1, got {arr.shape}")
    if arr.min() < 0 or arr.max() >= vocab_size:
        raise ValueError(
            f"{name} must hold ids in 0..{vocab_size - 1} (below {vocab_name} = {vocab_size}), "
            f"got {arr.min()}..{arr.max()}"
        )
    return arr.astype(np.int64)


def conditional_kgram(x: object, vocab_size: int, k: int, alpha: float = 0.0) -> np.ndarray:
    """p̂(· | x_{≤n}) for every position n: shape (..., T, vocab_size). Positions with fewer
    than k tokens of context get the uniform distribution."""
    check_scalar(alpha, "alpha", low=0)
    arr = check_tokens(x, vocab_size, k)
    if arr.ndim == 2:
        return np.stack([conditional_kgram(row, vocab_size, k, alpha) for row in arr])
    T, S = len(arr), vocab_size
    out = np.full((T, S), 1.0 / S)
    codes = _window_codes(arr, S, k)
    counts: dict[int, np.ndarray] = {}
    for n in range(k - 1, T):  # context x_{n−k+1..n} (0-based), complete from n = k − 1
        if n >= k:  # position n adds the transition (x_{n−k..n−1} → x_n)
            row = counts.setdefault(int(codes[n - 1]), np.zeros(S))
            row[arr[n]] += 1
        seen = counts.get(int(codes[n]))
        total = 0.0 if seen is None else seen.sum()
        if total + S * alpha > 0:
            out[n] = ((seen if seen is not None else 0.0) + alpha) / (total + S * alpha)
    return out


def _window_codes(arr: np.ndarray, S: int, k: int) -> np.ndarray:
    """codes[n] = Σ_m x_{n−m}·S^m over the k tokens ending at n (−1 before n = k − 1)."""
    T = len(arr)
    codes = np.full(T, -1, dtype=np.int64)
    if k <= T:
        windows = np.lib.stride_tricks.sliding_window_view(arr, k)  # (T−k+1, k), oldest first
        codes[k - 1 :] = windows @ (S ** np.arange(k - 1, -1, -1))
    return codes
