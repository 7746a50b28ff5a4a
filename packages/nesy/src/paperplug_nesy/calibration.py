"""Test-time mitigation (paper §4.2): logit adjustment, and CAROT — a robust semi-relaxed
optimal transport of a test batch onto the estimated marginal: each row's mass is kept exact,
the column totals are pulled toward r̂·N with a KL penalty τ, entropic regularisation η; the
prediction is the row's argmax of the plan. (η, τ) are chosen on weakly labelled bags."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from paperplug.checks import check_array, check_consistent_length, check_scalar, check_sequence
from paperplug_nesy.symbolic import SymbolicFunction, check_bags, check_labels, check_sigma


def _prior(value: object, name: str, C: int, scores: str) -> np.ndarray:
    """A (C,) non-negative class prior (a zero entry allowed, as in an estimated marginal), C
    the number of columns of `scores`."""
    p = check_array(value, name, ndim=1)
    if len(p) != C:
        raise ValueError(f"{name} has {len(p)} classes but {scores} has {C} columns")
    if (p < 0).any():
        raise ValueError(f"{name} must be non-negative, got minimum {p.min():.3g}")
    return p


def _grid(values: Sequence[float], name: str) -> list[float]:
    """A non-empty grid of positive numbers."""
    grid = check_sequence(np.ravel(values) if isinstance(values, np.ndarray) else values, name)
    for i, v in enumerate(grid):
        check_scalar(v, f"{name}[{i}]", low=0, inclusive="neither")
    return [float(v) for v in grid]


def logit_adjustment(logits: np.ndarray, marginal: np.ndarray, tau: float = 1.0,
                     target: np.ndarray | None = None) -> np.ndarray:  # fmt: skip
    """logits − τ·log r̂ (Menon et al.): removes the prior the training imbalance left; with a
    `target` prior π, logits − τ·(log r̂ − log π), the Bayes rule under label shift at τ = 1."""
    logits = check_array(logits, "logits", ndim=(1, 2, 3))
    C = logits.shape[-1]
    check_scalar(tau, "tau", low=0)
    out = logits - tau * np.log(np.clip(_prior(marginal, "marginal", C, "logits"), 1e-12, None))
    if target is not None:
        out = out + tau * np.log(np.clip(_prior(target, "target", C, "logits"), 1e-12, None))
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
    marginal = _prior(marginal, "marginal", C.shape[1], "log_probs")
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
    taus = _grid(taus if taus is not None else np.logspace(-5, 4, 20), "taus")
    logits = check_bags(check_sigma(sigma), logits, "logits")
    s = check_labels(sigma, s)
    check_consistent_length(logits=logits, s=s)
    B, M, C = logits.shape
    marginal = _prior(marginal, "marginal", C, "logits")
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
    check_sigma(sigma)
    predictions = check_array(
        predictions, "predictions", dtype="int", ndim=2, shape=(None, sigma.M)
    )
    if ((predictions < 0) | (predictions >= sigma.C)).any():
        raise ValueError(f"predictions must hold classes in 0..{sigma.C - 1}")
    s = check_array(s, "s", dtype="int", ndim=1)
    check_consistent_length(predictions=predictions, s=s)
    return float(np.mean([sigma(p) == int(t) for p, t in zip(predictions, s, strict=True)]))


def choose_carot(sigma: SymbolicFunction, log_probs: np.ndarray, s: np.ndarray, marginal: np.ndarray,
                 etas: Sequence[float] | None = None, taus: Sequence[float] | None = None) -> tuple[float, float, float]:  # fmt: skip
    """(η, τ, bag accuracy) of the grid point that best explains weakly labelled validation
    bags: log_probs (bags, M, C), s (bags,); ties broken by the L1 distance between the
    predicted class shares and the marginal. No gold label is used."""
    etas = _grid(etas if etas is not None else np.logspace(-5, 4, 10), "etas")  # the official grids
    taus = _grid(taus if taus is not None else np.logspace(-5, 4, 20), "taus")
    log_probs = check_array(
        log_probs, "log_probs", ndim=3, shape=(None, check_sigma(sigma).M, sigma.C), finite=False
    )
    s = check_labels(sigma, s)
    check_consistent_length(log_probs=log_probs, s=s)
    B, M, C = log_probs.shape
    marginal = _prior(marginal, "marginal", C, "log_probs")
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
