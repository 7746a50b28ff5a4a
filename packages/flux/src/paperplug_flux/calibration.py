"""Stage 3a, noise-calibrated distances between client descriptors (our addition, README
"Choices"): each [mu, sigma] block's squared 2-Wasserstein distance divided by what sampling
noise alone would give it if both clients drew from one distribution.

A client of n samples estimates mu_j with variance sigma_j^2 / n and sigma_j with variance
about sigma_j^2 / (2n) (Gaussian), so for two clients a, b of one distribution

    E ||D_a - D_b||^2 = sum_j s_j^2 (1/n_a + 1/n_b) (1 + 1/2),   s_j^2 = (sigma_aj^2 + sigma_bj^2) / 2

(plus 2 * 2b^2 per entry under Laplace noise of scale b). The ratio of the observed distance to
this expectation is about 1 between clients of one distribution whatever their sizes, and
grows with a real shift: a 40-sample client is no longer far from its own cluster just for
being small. A label block is compared only where both clients hold at least `min_count`
samples of that label (the paper's -1 fill of an absent label is never read). The pair's ratio
is the mean of the marginal block's ratio and the mean ratio over the shared label blocks (the
marginal's alone when they share none), so P(X) and P(Y) shifts (marginal) and P(Y|X) and
P(X|Y) shifts (label blocks) weigh alike.
"""

from __future__ import annotations

import numpy as np

from paperplug.checks import check_array, check_scalar


def _blocks(descriptors: np.ndarray, n_classes: int) -> np.ndarray:
    """(clients, 1 + n_classes, 2, d_p): the [mu, sigma] halves of every block."""
    n, width = descriptors.shape
    if width % (2 * (1 + n_classes)):
        raise ValueError(
            f"descriptors have {width} columns, not 2 * d_p * (1 + n_classes) for "
            f"n_classes={n_classes} (the columns of counts)"
        )
    return descriptors.reshape(n, 1 + n_classes, 2, width // (2 * (1 + n_classes)))


def block_ratio(
    a: np.ndarray, b: np.ndarray, n_a: float, n_b: float, noise_scale: float = 0.0
) -> float:
    """One block's ratio: ||[mu_a, sigma_a] - [mu_b, sigma_b]||^2 over its expectation under
    one shared distribution, for blocks `a`, `b` of shape (2, d_p) estimated from n_a, n_b
    samples; for constant latents (expectation 0), 0 if the blocks agree, else 1e12 (apart)."""
    a, b = check_array(a, "a", shape=(2, None)), check_array(b, "b", shape=(2, None))
    if a.shape != b.shape:
        raise ValueError(
            f"a and b must be blocks of one shape (2, d_p), got {a.shape} and {b.shape}"
        )
    check_scalar(n_a, "n_a", low=0, inclusive="neither")
    check_scalar(n_b, "n_b", low=0, inclusive="neither")
    check_scalar(noise_scale, "noise_scale", low=0)
    (mu_a, s_a), (mu_b, s_b) = a, b
    d2 = float(np.sum((mu_a - mu_b) ** 2) + np.sum((s_a - s_b) ** 2))
    s2 = (s_a**2 + s_b**2) / 2
    expected = float(np.sum(s2)) * (1 / n_a + 1 / n_b) * 1.5 + a.size * 4 * noise_scale**2
    if expected <= 0:
        return 0.0 if d2 == 0 else 1e12
    return d2 / expected


def noise_ratios(
    descriptors: np.ndarray,
    counts: np.ndarray,
    *,
    min_count: int = 3,
    noise_scale: float = 0.0,
) -> np.ndarray:
    """(clients, clients) symmetric matrix of calibrated distances (zero diagonal) from raw
    descriptors and each client's samples per label, `counts` (clients, n_classes)."""
    d = check_array(descriptors, "descriptors", ndim=2, min_samples=2)
    c = check_array(counts, "counts", dtype="int", shape=(len(d), None))
    if (c < 0).any() or (c.sum(axis=1) < 2).any():
        raise ValueError("counts must be non-negative with at least 2 samples per client")
    min_count = check_scalar(min_count, "min_count", "int", low=2)
    noise_scale = check_scalar(noise_scale, "noise_scale", "real", low=0)
    blocks = _blocks(d, c.shape[1])
    sizes = np.concatenate([c.sum(axis=1, keepdims=True), c], axis=1)  # (clients, 1 + C)
    out = np.zeros((len(d), len(d)))
    for i in range(len(d)):
        for j in range(i + 1, len(d)):
            marginal = block_ratio(
                blocks[i, 0], blocks[j, 0], sizes[i, 0], sizes[j, 0], noise_scale
            )
            shared = np.flatnonzero((sizes[i, 1:] >= min_count) & (sizes[j, 1:] >= min_count))
            labels = [
                block_ratio(
                    blocks[i, g + 1],
                    blocks[j, g + 1],
                    sizes[i, g + 1],
                    sizes[j, g + 1],
                    noise_scale,
                )
                for g in shared
            ]
            out[i, j] = out[j, i] = (marginal + np.mean(labels)) / 2 if labels else marginal
    return out
