"""The metrics the paper reports (ACC25, LACC@τ, bin accuracy, NDCG@10, MRR), tie-aware: a
scorer that gives several documents one score (isotonic calibration, a constant) gets the
expectation over the orders of its ties, never the credit of the order the rows came in."""

from __future__ import annotations

from math import comb

import numpy as np

from paperplug.checks import check_array, check_consistent_length, check_scalar
from paperplug_eareranker.bins import adequacy_bin


def _pair(
    pred: object, target: object, names: tuple[str, str] = ("pred", "target")
) -> tuple[np.ndarray, np.ndarray]:
    pred, target = check_array(pred, names[0], ndim=1), check_array(target, names[1], ndim=1)
    check_consistent_length(**{names[0]: pred, names[1]: target})
    return pred, target


def acc(pred: object, target: object, tol: float = 0.25) -> float:
    """ACC25: share of predictions within `tol` of the label."""
    pred, target = _pair(pred, target)
    return float(np.mean(np.abs(pred - target) <= check_scalar(tol, "tol", low=0)))


def lacc(pred: object, target: object, threshold: float) -> float:
    """LACC@τ: share of pairs on the same side of τ (keep or drop) in prediction and label."""
    pred, target = _pair(pred, target)
    threshold = check_scalar(threshold, "threshold", low=0, high=1)
    return float(np.mean((pred >= threshold) == (target >= threshold)))


def bin_accuracy(pred: object, target: object) -> float:
    """Share of predictions in the label's adequacy bin."""
    pred, target = _pair(pred, target)
    return float(np.mean(adequacy_bin(pred, "pred") == adequacy_bin(target, "target")))


def _graded(scores: object, labels: object, name: str = "scores") -> tuple[np.ndarray, np.ndarray]:
    """Checked scores and non-negative relevance grades, one per document."""
    scores, labels = _pair(scores, labels, (name, "labels"))
    if (labels < 0).any():
        raise ValueError("labels must be non-negative relevance grades")
    return scores, labels


def _ranking(
    scores: object, labels: object, groups: object, name: str = "scores"
) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """Checked scores and labels, and the row indices of each query."""
    scores, labels = _graded(scores, labels, name)
    groups = np.asarray(groups)
    if groups.dtype.kind in "fcb":  # query ids: integers or strings
        groups = check_array(groups, "groups", dtype="int")
    if groups.ndim != 1:
        raise ValueError(f"groups must be one query id per row (1-D), got shape {groups.shape}")
    check_consistent_length(**{name: scores, "labels": labels, "groups": groups})
    _, inverse = np.unique(groups, return_inverse=True)
    return scores, labels, [np.flatnonzero(inverse == g) for g in range(inverse.max() + 1)]


def tie_averaged_dcg(scores: np.ndarray, gains: np.ndarray, k: int) -> float:
    """DCG@k of one query in expectation over the orders of tied scores: each block of tied
    documents spreads its mean gain over the discounts 1/log2(1 + rank) of the ranks it holds
    (McSherry & Najork 2008; what scikit-learn's `ndcg_score` computes)."""
    _, block = np.unique(-scores, return_inverse=True)  # block 0 holds the highest score
    counts = np.bincount(block)
    mean_gain = np.bincount(block, weights=gains) / counts
    discount = np.where(np.arange(len(scores)) < k, 1 / np.log2(np.arange(2, len(scores) + 2)), 0)
    cumulative = np.concatenate([[0.0], np.cumsum(discount)])
    ends = np.cumsum(counts)
    return float((mean_gain * (cumulative[ends] - cumulative[ends - counts])).sum())


def ndcg_at(scores: object, labels: object, groups: object, k: int = 10) -> float:
    """Mean NDCG@k over queries (`groups`), gain 2^label − 1, documents ranked by `scores`,
    tie-aware (`tie_averaged_dcg`). A query whose gains are all 0 scores 0."""
    scores, labels, queries = _ranking(scores, labels, groups)
    k = check_scalar(k, "k", "int", low=1)
    gains = 2.0**labels - 1
    values = []
    for idx in queries:
        ideal = tie_averaged_dcg(-np.arange(len(idx), dtype=float), np.sort(gains[idx])[::-1], k)
        values.append(tie_averaged_dcg(scores[idx], gains[idx], k) / ideal if ideal > 0 else 0.0)
    return float(np.mean(values))


def reciprocal_rank(scores: np.ndarray, labels: np.ndarray) -> float:
    """1 / rank of the first best-labelled document, in expectation over the orders of tied
    scores: with `ahead` documents scored above the first tie block holding m best ones among
    n, the first of them sits at ahead + J, P(J = j) = C(n − j, m − 1) / C(n, m)."""
    scores, labels = _graded(scores, labels)
    best = labels == labels.max()
    ahead = 0
    for level in np.unique(scores)[::-1]:
        block = scores == level
        n, m = int(block.sum()), int((block & best).sum())
        if m:
            return sum(comb(n - j, m - 1) / (ahead + j) for j in range(1, n - m + 2)) / comb(n, m)
        ahead += n
    raise AssertionError("unreachable: the best label is somewhere")


def mrr(scores: object, labels: object, groups: object) -> float:
    """Mean reciprocal rank of each query's best-labelled document (tie-aware: the expected
    value over the orders of tied scores)."""
    scores, labels, queries = _ranking(scores, labels, groups)
    return float(np.mean([reciprocal_rank(scores[idx], labels[idx]) for idx in queries]))


def report(pred: object, labels: object, groups: object) -> dict[str, float]:
    """ACC25, LACC@10, LACC@25, bin accuracy, NDCG@10 and MRR in one dict."""
    _ranking(pred, labels, groups, "pred")  # named as passed here
    return {
        "ACC25": acc(pred, labels),
        "LACC@10": lacc(pred, labels, 0.10),
        "LACC@25": lacc(pred, labels, 0.25),
        "bin acc": bin_accuracy(pred, labels),
        "NDCG@10": ndcg_at(pred, labels, groups),
        "MRR": mrr(pred, labels, groups),
    }
