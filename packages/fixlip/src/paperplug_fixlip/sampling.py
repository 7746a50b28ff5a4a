"""Coalition sampling with the border trick (§3): sizes whose expected count covers all their
coalitions are enumerated and weighted by the kernel; the rest are drawn (size by its share,
members uniformly) and weighted by their empirical frequency."""

from __future__ import annotations

from dataclasses import dataclass
from math import comb

import numpy as np

from paperplug.checks import check_array, check_scalar, check_sequence, check_type
from paperplug_fixlip.lookup import all_coalitions


def banzhaf_size_weights(n: int, p: float) -> np.ndarray:
    """P(|T| = k) under μ_p(T) = p^|T| (1 - p)^(n - |T|): Binomial(n, p)."""
    check_scalar(n, "n", "int", low=1)
    check_scalar(p, "p", low=0.0, high=1.0, inclusive="neither")
    k = np.arange(n + 1)
    return np.array([comb(n, int(i)) for i in k], dtype=float) * p**k * (1 - p) ** (n - k)


def shapley_size_weights(n: int) -> np.ndarray:
    """The KernelSHAP(-IQ) size distribution ∝ 1 / (k (n - k)) on 1..n-1 (empty, full forced)."""
    check_scalar(n, "n", "int", low=2)
    w = np.zeros(n + 1)
    k = np.arange(1, n)
    w[1:n] = 1.0 / (k * (n - k))
    return w / w.sum() if w.sum() > 0 else w


@dataclass
class CoalitionSample:
    """Distinct coalitions (bool (m, n)) with their regression weights (sum ≈ covered mass)."""

    coalitions: np.ndarray
    weights: np.ndarray
    n_enumerated: int
    n_draws: int


def _uniform_subsets(n: int, sizes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    ranks = np.argsort(np.argsort(rng.random((len(sizes), n)), axis=1), axis=1)
    return ranks < sizes[:, None]


def sample_coalitions(
    n: int,
    budget: int,
    size_weights: np.ndarray,
    rng: np.random.Generator,
    *,
    forced: tuple[int, ...] = (),
) -> CoalitionSample:
    """`budget` distinct coalitions: forced sizes (e.g. empty and full for Shapley), then the
    border trick, then draws until the budget of distinct coalitions is met."""
    n = check_scalar(n, "n", "int", low=1)
    check_scalar(budget, "budget", "int", low=1)
    size_weights = check_array(size_weights, "size_weights", ndim=1)
    if len(size_weights) != n + 1:
        raise ValueError(
            f"size_weights must weigh the sizes 0 to n = {n}: {n + 1} weights, got {len(size_weights)}"
        )
    if (size_weights < 0).any() or not size_weights.sum() > 0:
        raise ValueError("size_weights must be non-negative with a positive sum")
    check_type(rng, "rng", np.random.Generator)
    forced = tuple(
        check_scalar(k, f"forced[{i}]", "int", low=0, high=n)
        for i, k in enumerate(check_sequence(forced, "forced", min_len=0, what="sizes"))
    )
    if len(set(forced)) < len(forced):
        raise ValueError(f"forced must list distinct sizes, got {forced!r}")
    if budget < sum(comb(n, k) for k in forced):
        raise ValueError(
            f"budget={budget} is below the {sum(comb(n, k) for k in forced)} forced coalitions"
        )
    blocks, weights = [], []
    left = int(budget)
    for k in forced:
        block = _size_block(n, k)
        blocks.append(block)
        weights.append(np.ones(len(block)))  # the constraint rows; their weight is unused
        left -= len(block)
    remaining = [k for k in range(n + 1) if size_weights[k] > 0 and k not in forced]
    enumerated = 0
    changed = True
    while changed and remaining and left > 0:  # the border trick, repeated until it settles
        changed = False
        mass = size_weights[remaining].sum()
        for k in sorted(remaining, key=lambda k: comb(n, k)):
            if left * size_weights[k] / mass >= comb(n, k):
                block = _size_block(n, k)
                blocks.append(block)
                weights.append(np.full(len(block), size_weights[k] / comb(n, k)))
                left -= len(block)
                enumerated += len(block)
                remaining.remove(k)
                changed = True
                break
    draws = 0
    if remaining and left > 0:
        probs = size_weights[remaining] / size_weights[remaining].sum()
        mass = size_weights[remaining].sum()
        counts: dict[bytes, int] = {}
        rows: list[np.ndarray] = []
        chunk = max(64, left)
        while len(rows) < left and draws < 1000 * budget:
            sizes = rng.choice(np.array(remaining), size=chunk, p=probs)
            for row in _uniform_subsets(n, sizes, rng):
                draws += 1
                key = row.tobytes()
                if key in counts:
                    counts[key] += 1
                    continue
                counts[key] = 1
                rows.append(row)
                if len(rows) == left:
                    break
        if rows:
            blocks.append(np.array(rows))
            weights.append(np.array([counts[r.tobytes()] for r in rows]) / draws * mass)
    coalitions = np.concatenate(blocks) if blocks else np.zeros((0, n), dtype=bool)
    return CoalitionSample(
        coalitions, np.concatenate(weights) if weights else np.zeros(0), enumerated, draws
    )


def _size_block(n: int, k: int) -> np.ndarray:
    """Every coalition of size k (bool (C(n, k), n))."""
    from itertools import combinations

    idx = list(combinations(range(n), k))
    block = np.zeros((len(idx), n), dtype=bool)
    for r, members in enumerate(idx):
        block[r, list(members)] = True
    return block


def enumerate_with_weights(n: int, size_weights: np.ndarray) -> CoalitionSample:
    """All 2^n coalitions with the kernel weight of their size (the exact index's rows)."""
    coalitions = all_coalitions(n)
    sizes = coalitions.sum(axis=1)
    per = np.array([size_weights[k] / comb(n, k) for k in range(n + 1)])
    return CoalitionSample(coalitions, per[sizes], len(coalitions), 0)
