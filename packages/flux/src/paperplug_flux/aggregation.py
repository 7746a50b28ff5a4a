"""Stage 4, per-cluster FedAvg (§3): the clients of one cluster average their updates, weighted
by their number of examples, into that cluster's model; every client then receives its own
cluster's model."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def fedavg(
    weights: Sequence[dict[str, np.ndarray]], num_examples: Sequence[float]
) -> dict[str, np.ndarray]:
    """The example-weighted average of state dicts (McMahan et al. 2017)."""
    if len(weights) == 0 or len(weights) != len(num_examples):
        raise ValueError("fedavg needs one example count per (non-empty list of) state dicts")
    n = np.asarray(num_examples, dtype=np.float64)
    if np.any(n < 0) or n.sum() <= 0:
        raise ValueError("example counts must be non-negative with a positive sum")
    share = n / n.sum()
    out: dict[str, np.ndarray] = {}
    for key in weights[0]:
        acc = sum(
            s * np.asarray(w[key], dtype=np.float64) for s, w in zip(share, weights, strict=True)
        )
        out[key] = np.asarray(acc).astype(np.asarray(weights[0][key]).dtype)
    return out


def cluster_fedavg(
    weights: Sequence[dict[str, np.ndarray]], num_examples: Sequence[float], labels: Sequence[int]
) -> dict[int, dict[str, np.ndarray]]:
    """One FedAvg per cluster label: {label: averaged state dict of that cluster's clients}."""
    if len(labels) != len(weights):
        raise ValueError("one cluster label per client update")
    out = {}
    for k in sorted({int(v) for v in labels}):
        idx = [i for i, v in enumerate(labels) if int(v) == k]
        out[k] = fedavg([weights[i] for i in idx], [num_examples[i] for i in idx])
    return out
