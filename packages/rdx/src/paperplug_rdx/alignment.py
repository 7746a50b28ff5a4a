"""Optional steps before the difference (RDX §3.5): a linear map of one representation onto the
other that maximises debiased linear CKA (so differences that a linear change explains drop
out), and label guidance (items of different labels pushed apart in both models)."""

from __future__ import annotations

from typing import Any

import numpy as np

from paperplug import seeded_torch
from paperplug.checks import (
    check_array,
    check_consistent_length,
    check_scalar,
    check_seed,
    check_sequence,
)
from paperplug.extras import requires_extra
from paperplug_rdx.validation import check_square


def _debiased_cka_torch(X: Any, Y: Any) -> Any:
    """Debiased linear CKA of two (n, d) tensors, differentiable (torch autograd)."""

    def hsic(K: Any, L: Any) -> Any:
        n = K.shape[0]
        K = K - K.diag().diag()
        L = L - L.diag().diag()
        ones = K.new_ones(n)
        term = (K * L).sum() + (ones @ K @ ones) * (ones @ L @ ones) / ((n - 1) * (n - 2))
        return (term - 2 / (n - 2) * (ones @ K @ L @ ones)) / (n * (n - 3))

    K, L = X @ X.T, Y @ Y.T
    return hsic(K, L) / (hsic(K, K) * hsic(L, L)).sqrt()


def align_linear(source: np.ndarray, target: np.ndarray, *, steps: int = 100, lr: float = 1e-3,
                 train_fraction: float = 0.7, seed: int = 0) -> np.ndarray:  # fmt: skip
    """`source` mapped by a linear W (d_source × d_target, from the identity or least squares)
    trained with Adam to maximise debiased CKA with `target` on 70% of the items, keeping the
    W of best CKA on the other 30% (early stopping). Needs torch (the [torch] extra)."""
    with requires_extra("paperplug-rdx", "torch", "the CKA alignment"):
        import torch

    source = check_array(source, "source", ndim=2)
    target = check_array(target, "target", ndim=2)
    n = check_consistent_length(source=source, target=target)
    check_scalar(steps, "steps", "int", low=1)
    check_scalar(lr, "lr", low=0, inclusive="neither")
    check_scalar(train_fraction, "train_fraction", low=0, high=1, inclusive="neither")
    check_seed(seed, "seed", allow_none=False)
    if min(int(train_fraction * n), n - int(train_fraction * n)) < 4:
        raise ValueError(
            f"train_fraction={train_fraction} splits the {n} items of source into "
            "parts of fewer than 4 (debiased CKA needs 4)"
        )
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(source))
    cut = int(train_fraction * len(source))
    train, test = order[:cut], order[cut:]
    S, T = (
        torch.as_tensor(source, dtype=torch.float64),
        torch.as_tensor(target, dtype=torch.float64),
    )
    W0 = np.linalg.lstsq(source[train], target[train], rcond=None)[0]
    with seeded_torch(seed):
        W = torch.nn.Parameter(torch.as_tensor(W0))
    optimizer = torch.optim.Adam([W], lr=lr, foreach=False)
    best, best_W = -np.inf, W.detach().clone()
    for _ in range(steps):
        loss = -_debiased_cka_torch(S[train] @ W, T[train])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        with torch.no_grad():
            score = float(_debiased_cka_torch(S[test] @ W, T[test]))
        if score > best:
            best, best_W = score, W.detach().clone()
    return (S @ best_W).numpy()


def label_guidance(D: np.ndarray, labels: np.ndarray, factor: float = 5.0) -> np.ndarray:
    """Distances with every cross-label pair set to factor·max (labels from a classifier or
    the ground truth): the explanation then looks only within classes."""
    D = check_square(D, "D")
    labels = np.asarray(check_sequence(labels, "labels", what="labels"))
    if labels.shape != (len(D),):
        raise ValueError(f"labels must hold one label per item of D ({len(D)}), got {labels.shape}")
    check_scalar(factor, "factor", low=1)
    out = D.copy()
    out[labels[:, None] != labels[None, :]] = factor * D.max()
    return out
