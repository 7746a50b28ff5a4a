"""Test-time mitigation (paper §4.2): logit adjustment, and CAROT — a robust semi-relaxed
optimal transport of a test batch onto the estimated marginal: each row's mass is kept exact,
the column totals are pulled toward r̂·N with a KL penalty τ, entropic regularisation η; the
prediction is the row's argmax of the plan. (η, τ) are chosen on weakly labelled bags."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from paperplug.checks import check_array, check_scalar
from paperplug_nesy.symbolic import SymbolicFunction


def logit_adjustment(logits: np.ndarray, marginal: np.ndarray, tau: float = 1.0,
                     target: np.ndarray | None = None) -> np.ndarray:  # fmt: skip
    """logits − τ·log r̂ (Menon et al.): removes the prior the training imbalance left; with a
    `target` prior π, logits − τ·(log r̂ − log π), the Bayes rule under label shift at τ = 1."""
    out = np.asarray(logits) - tau * np.log(np.clip(np.asarray(marginal), 1e-12, None))
    if target is not None:
        out = out + tau * np.log(np.clip(np.asarray(target), 1e-12, None))
    return out


def carot_plan(log_probs: np.ndarray, marginal: np.ndarray, *, eta: float, tau: float, iterations: int = 500,
               tol: float = 1e-9) -> np.ndarray:  # fmt: skip
    """The (N, C) plan of semi-relaxed Sinkhorn with cost −log p: rows sum to 1 exactly,
    columns pulled toward r̂·N with strength τ, entropy η (log domain, stable)."""
    check_scalar(eta, "eta", low=0, inclusive="neither")
    check_scalar(tau, "tau", low=0, inclusive="neither")
    check_scalar(iterations, "iterations", "int", low=1)
    check_scalar(tol, "tol", low=0)
    C = -check_array(log_probs, "log_probs", ndim=2, finite=False)
    if np.isnan(C).any() or np.isneginf(C).any():
        raise ValueError("log_probs must be finite or -inf (a zero probability)")
    marginal = check_array(marginal, "marginal", ndim=1)
    if len(marginal) != C.shape[1]:
        raise ValueError(f"marginal has {len(marginal)} classes but log_probs {C.shape[1]} columns")
    N = len(C)
    log_a = np.zeros(N)  # each row carries mass 1
    log_b = np.log(np.clip(np.asarray(marginal, dtype=np.float64) * N, 1e-300, None))
    f, g = np.zeros(N), np.zeros(C.shape[1])
    fi = tau / (tau + eta)
    for _ in range(iterations):
        g_old = g
        f = eta * (log_a - _logsumexp((g[None, :] - C) / eta, 1))
        g = fi * eta * (log_b - _logsumexp((f[:, None] - C) / eta, 0))
        if np.max(np.abs(g - g_old)) < tol:  # f can stand still at the start (η = 1)
            break
    f = eta * (log_a - _logsumexp((g[None, :] - C) / eta, 1))  # rows exact
    return np.exp((f[:, None] + g[None, :] - C) / eta)


def _logsumexp(x: np.ndarray, axis: int) -> np.ndarray:
    top = x.max(axis=axis, keepdims=True)
    return (top + np.log(np.exp(x - top).sum(axis=axis, keepdims=True))).squeeze(axis)


def choose_la(sigma: SymbolicFunction, logits: np.ndarray, s: np.ndarray, marginal: np.ndarray,
              taus: Sequence[float] | None = None) -> tuple[float, float]:  # fmt: skip
    """(τ, bag accuracy) of the logit adjustment that best explains weakly labelled bags;
    ties go to the τ nearest Menon et al.'s standard τ = 1."""
    taus = taus if taus is not None else np.logspace(-5, 4, 20)
    B, M, C = logits.shape
    best, best_key = (float(taus[0]), -1.0), (-1.0, -np.inf)
    for tau in taus:
        pred = logit_adjustment(logits.reshape(B * M, C), marginal, tau).argmax(1).reshape(B, M)
        score = bag_accuracy(sigma, pred, s)
        key = (score, -abs(float(np.log10(tau))))  # ties go to the τ nearest the standard 1
        if key > best_key:
            best, best_key = (float(tau), score), key
    return best


def bag_accuracy(sigma: SymbolicFunction, predictions: np.ndarray, s: np.ndarray) -> float:
    """Share of bags (predictions (bags, M)) whose σ(ŷ) equals the weak label."""
    return float(np.mean([sigma(p) == int(t) for p, t in zip(predictions, s, strict=True)]))


def choose_carot(sigma: SymbolicFunction, log_probs: np.ndarray, s: np.ndarray, marginal: np.ndarray,
                 etas: Sequence[float] | None = None, taus: Sequence[float] | None = None) -> tuple[float, float, float]:  # fmt: skip
    """(η, τ, bag accuracy) of the grid point that best explains weakly labelled validation
    bags: log_probs (bags, M, C), s (bags,); ties broken by the L1 distance between the
    predicted class shares and the marginal. No gold label is used."""
    etas = etas if etas is not None else np.logspace(-5, 4, 10)  # the official grids
    taus = taus if taus is not None else np.logspace(-5, 4, 20)
    B, M, C = log_probs.shape
    flat = log_probs.reshape(B * M, C)
    best, best_key = (float(etas[0]), float(taus[0]), -1.0), (-1.0, -np.inf)
    for eta in etas:
        for tau in taus:
            pred = carot_plan(flat, marginal, eta=eta, tau=tau).argmax(1)
            score = bag_accuracy(sigma, pred.reshape(B, M), s)
            # ties (bag accuracy saturates on easy data) go to the predicted class counts
            # nearest the marginal, the constraint CAROT enforces
            share = np.bincount(pred, minlength=C) / len(pred)
            key = (score, -float(np.abs(share - marginal).sum()))
            if key > best_key:
                best, best_key = (float(eta), float(tau), score), key
    return best
