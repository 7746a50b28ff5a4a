"""The paper's six adequacy bins over [0, 1] and the reranking metrics it reports."""

from __future__ import annotations

import numpy as np

BIN_EDGES = (0.10, 0.25, 0.50, 0.75, 0.90)
BIN_NAMES = ("irrelevant", "weak", "marginal", "moderate", "high", "precise")  # low to high


def adequacy_bin(scores: object) -> np.ndarray:
    """Bin index 0 (irrelevant, < 0.10) .. 5 (precise, >= 0.90) of each score."""
    return np.searchsorted(BIN_EDGES, np.asarray(scores, dtype=float), side="right")


def bin_name(score: float) -> str:
    return BIN_NAMES[int(adequacy_bin([score])[0])]


def acc(pred: object, target: object, tol: float = 0.25) -> float:
    """ACC25: share of predictions within `tol` of the label."""
    return float(np.mean(np.abs(np.asarray(pred) - np.asarray(target)) <= tol))


def lacc(pred: object, target: object, threshold: float) -> float:
    """LACC@τ: share of pairs on the same side of τ (keep or drop) in prediction and label."""
    return float(np.mean((np.asarray(pred) >= threshold) == (np.asarray(target) >= threshold)))


def bin_accuracy(pred: object, target: object) -> float:
    return float(np.mean(adequacy_bin(pred) == adequacy_bin(target)))


def ndcg_at(scores: np.ndarray, labels: np.ndarray, groups: np.ndarray, k: int = 10) -> float:
    """Mean NDCG@k over queries (`groups`), gain 2^label − 1, documents ranked by `scores`."""
    values = []
    for g in np.unique(groups):
        idx = np.flatnonzero(groups == g)
        order = idx[np.argsort(-scores[idx], kind="stable")][:k]
        ideal = idx[np.argsort(-labels[idx], kind="stable")][:k]
        discount = 1 / np.log2(np.arange(2, len(order) + 2))
        dcg = ((2 ** labels[order] - 1) * discount).sum()
        idcg = ((2 ** labels[ideal] - 1) * discount[: len(ideal)]).sum()
        values.append(dcg / idcg if idcg > 0 else 1.0)
    return float(np.mean(values))


def mrr(scores: np.ndarray, labels: np.ndarray, groups: np.ndarray) -> float:
    """Mean reciprocal rank of each query's best-labelled document."""
    values = []
    for g in np.unique(groups):
        idx = np.flatnonzero(groups == g)
        order = idx[np.argsort(-scores[idx], kind="stable")]
        best = labels[idx].max()
        rank = int(np.flatnonzero(labels[order] == best)[0]) + 1
        values.append(1.0 / rank)
    return float(np.mean(values))


def report(pred: np.ndarray, labels: np.ndarray, groups: np.ndarray) -> dict[str, float]:
    """ACC25, LACC@10, LACC@25, bin accuracy, NDCG@10 and MRR in one dict."""
    return {
        "ACC25": acc(pred, labels),
        "LACC@10": lacc(pred, labels, 0.10),
        "LACC@25": lacc(pred, labels, 0.25),
        "bin acc": bin_accuracy(pred, labels),
        "NDCG@10": ndcg_at(pred, labels, groups),
        "MRR": mrr(pred, labels, groups),
    }
