"""Labels from several LLM judges (paper Alg. 1) and their calibration within bins."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from paperplug.checks import check_array, check_consistent_length, check_scalar
from paperplug_eareranker.bins import BIN_EDGES, adequacy_bin


def aggregate_judges(
    scores: Sequence[float], *, first: int = 4, tol: float = 0.2
) -> tuple[float, str]:
    """One label from J judge scores in [0, 1] (Alg. 1): the mean of the first `first` scores
    when they agree (max − min ≤ tol); else the mean of the first agreeing `first`-subset of
    all J (in the judges' order); else the mean of all. Returns (label, branch)."""
    first = check_scalar(first, "first", "int", low=1)
    tol = check_scalar(tol, "tol", low=0)
    values = check_array(scores, "scores", ndim=1, min_samples=first)
    if (values < 0).any() or (values > 1).any():
        raise ValueError("scores (the judges' grades) must lie in [0, 1]")
    head = values[:first]
    if head.max() - head.min() <= tol + 1e-9:
        return float(head.mean()), "first agree"
    for subset in itertools.combinations(range(len(values)), first):
        chosen = values[list(subset)]
        if chosen.max() - chosen.min() <= tol + 1e-9:
            return float(chosen.mean()), "consistent subset"
    return float(values.mean()), "mean of all"


def calibrate_within_bins(labels: Sequence[float], reranker_scores: Sequence[float]) -> np.ndarray:
    """Spread the labels inside each adequacy bin by a reranker's normalised scores: an item
    keeps its bin and is placed at lo + (hi − lo)·r̃, r̃ the min–max normalised reranker
    score among the items of that bin (the bin's midpoint when they tie)."""
    labels = check_array(labels, "labels", ndim=1)
    reranker = check_array(reranker_scores, "reranker_scores", ndim=1)
    check_consistent_length(labels=labels, reranker_scores=reranker)
    edges = np.concatenate([[0.0], BIN_EDGES, [1.0]])
    bins = adequacy_bin(labels, "labels")
    out = labels.copy()
    for b in np.unique(bins):
        idx = np.flatnonzero(bins == b)
        lo, hi = edges[b], edges[b + 1]
        r = reranker[idx]
        span = r.max() - r.min()
        unit = (r - r.min()) / span if span > 0 else np.full(len(idx), 0.5)
        out[idx] = lo + (hi - lo) * np.minimum(unit, 1 - 1e-9)  # stay inside [lo, hi)
    return out
