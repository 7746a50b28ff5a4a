"""Stage 4, per-cluster FedAvg (§3): the clients of one cluster average their updates, weighted
by their number of examples, into that cluster's model; every client then receives its own
cluster's model."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from paperplug.checks import check_array, check_sequence


def _check_states(weights: Any) -> list[dict[str, np.ndarray]]:
    """Client state dicts: the same keys and shapes each, finite arrays."""
    states = check_sequence(weights, "weights", Mapping, what="state dicts")
    first = states[0]
    for i, state in enumerate(states):
        if set(state) != set(first):
            raise ValueError(f"weights[{i}] has other keys than weights[0]")
        for key, value in state.items():
            shape = np.shape(first[key])
            name = f"weights[{i}][{key!r}]"
            check_array(value, name, dtype="numeric", shape=shape, min_samples=0)
    return states


def fedavg(
    weights: Sequence[dict[str, np.ndarray]], num_examples: Sequence[float]
) -> dict[str, np.ndarray]:
    """The example-weighted average of state dicts (McMahan et al. 2017)."""
    weights = _check_states(weights)
    n = check_array(num_examples, "num_examples", ndim=1)
    if len(n) != len(weights):
        raise ValueError(f"num_examples must hold one count per state dict ({len(weights)})")
    if np.any(n < 0) or n.sum() <= 0:
        raise ValueError("num_examples: example counts must be non-negative with a positive sum")
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
    weights = _check_states(weights)
    labels = check_array(labels, "labels", dtype="int", ndim=1)
    num_examples = check_array(num_examples, "num_examples", ndim=1)
    if len(labels) != len(weights) or len(num_examples) != len(weights):
        raise ValueError(
            f"labels and num_examples must hold one entry per client update ({len(weights)})"
        )
    out = {}
    for k in sorted({int(v) for v in labels}):
        idx = [i for i, v in enumerate(labels) if int(v) == k]
        out[k] = fedavg([weights[i] for i in idx], [num_examples[i] for i in idx])
    return out
