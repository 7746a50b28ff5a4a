"""From hidden-label marginals to output distributions and back (paper §3): the forward map
T_σ(r)(s) = P(σ(y) = s) for y_1..y_M i.i.d. from r, and the estimate of r from the outputs
seen (weak labels): a closed form for MAX, an optimiser for any σ."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from paperplug import seeded_torch
from paperplug.checks import (
    check_array,
    check_choice,
    check_distribution,
    check_scalar,
    check_tensor,
)
from paperplug_nesy.symbolic import SymbolicFunction, check_labels, check_sigma


def forward_map(sigma: SymbolicFunction, r: torch.Tensor) -> torch.Tensor:
    """T_σ(r): distribution over `sigma.outputs` (differentiable in r). MAX through CDF
    powers, SUM through repeated convolution, any σ through its proofs."""
    check_sigma(sigma)
    check_tensor(r, "r", shape=(sigma.C,))  # checked on a detached view: r stays differentiable
    r = torch.as_tensor(r, dtype=torch.float64)
    if sigma.name.startswith("MAX"):
        F = torch.cumsum(r, 0) ** sigma.M
        full = torch.cat([F[:1], F[1:] - F[:-1]])
        return full[torch.as_tensor(sigma.outputs)]
    if sigma.name.startswith("SUM"):
        dist = r
        for _ in range(sigma.M - 1):
            dist = torch.nn.functional.conv1d(
                dist.view(1, 1, -1), r.flip(0).view(1, 1, -1), padding=len(r) - 1
            ).view(-1)
        return dist[torch.as_tensor(sigma.outputs)]
    return torch.stack([r[torch.as_tensor(sigma.proofs(s))].prod(1).sum() for s in sigma.outputs])


def output_frequencies(sigma: SymbolicFunction, s: object) -> np.ndarray:
    """p̂(s): the share of each output among the weak labels."""
    index = sigma.index(s)
    return np.bincount(index, minlength=len(sigma.outputs)) / len(index)


def max_closed_form(sigma: SymbolicFunction, s: object) -> np.ndarray:
    """r_k = P̂(s ≤ k)^{1/M} − P̂(s ≤ k − 1)^{1/M}: MAX's inverse map, exact in the limit."""
    if not sigma.name.startswith("MAX"):
        raise ValueError("the closed form holds for MAX only; use method='optimizer'")
    freq = np.zeros(sigma.C)
    freq[sigma.outputs] = output_frequencies(sigma, s)
    root = np.cumsum(freq) ** (1.0 / sigma.M)
    return np.diff(np.concatenate([[0.0], root]))


def estimate_marginal(sigma: SymbolicFunction, s: object, *, method: str = "auto", steps: int = 5000,
                      lr: float = 0.01, seed: int = 0) -> np.ndarray:  # fmt: skip
    """r̂ from weak labels s: the closed form for MAX ("auto"/"closed_form"), else maximise
    Σ_s p̂(s) log T_σ(softmax θ)(s) with Adam ("optimizer")."""
    check_sigma(sigma)
    s = check_labels(sigma, s)
    check_choice(method, "method", ("auto", "closed_form", "optimizer"))
    check_scalar(steps, "steps", "int", low=1)
    check_scalar(lr, "lr", low=0, inclusive="neither")
    check_scalar(seed, "seed", "int", low=0)
    if method == "closed_form" or (method == "auto" and sigma.name.startswith("MAX")):
        return max_closed_form(sigma, s)
    target = torch.as_tensor(output_frequencies(sigma, s))
    with seeded_torch(seed):
        theta = torch.zeros(sigma.C, dtype=torch.float64, requires_grad=True)
    optimizer = torch.optim.Adam([theta], lr=lr, foreach=False)
    for _ in range(steps):
        p = forward_map(sigma, torch.softmax(theta, 0)).clamp_min(1e-300)
        loss = -(target * torch.log(p)).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return torch.softmax(theta, 0).detach().numpy()


def marginal_error(sigma: SymbolicFunction, r: object, n: int) -> dict[str, Any]:
    """How well n weak labels identify the marginal r (ours; the Cramér–Rao bound of the
    maximum-likelihood estimate): per-class standard errors and the expected L1 error
    Σ_c √(2/π)·SE_c. With r on the simplex (C − 1 free coordinates) and q = T_σ(r), the Fisher
    information of n labels is n·Jᵀ diag(1/q) J; a singular one means r is not identified
    (infinite error)."""
    r = check_distribution(r, "r", size=check_sigma(sigma).C)
    check_scalar(n, "n", "int", low=1)
    C = sigma.C
    free = torch.as_tensor(r[:-1], dtype=torch.float64)

    def q_of(theta: torch.Tensor) -> torch.Tensor:
        return forward_map(sigma, torch.cat([theta, 1 - theta.sum(0, keepdim=True)]))

    J = torch.autograd.functional.jacobian(q_of, free).numpy()  # (outputs, C − 1)
    q = q_of(free).detach().numpy()
    seen = q > 1e-12
    info = n * J[seen].T @ (J[seen] / q[seen, None])
    A = np.vstack([np.eye(C - 1), -np.ones(C - 1)])  # r = A θ + e_C
    try:
        cov = A @ np.linalg.inv(info) @ A.T
        se = np.sqrt(np.clip(np.diag(cov), 0, None))
    except np.linalg.LinAlgError:
        se = np.full(C, np.inf)
    if not np.isfinite(se).all() or np.linalg.cond(info) > 1e12:
        se = np.full(C, np.inf)
    return {"se": se, "expected_l1": float(np.sqrt(2 / np.pi) * se.sum())}


def naive_marginal_update(marginal: Any, logits: Any, gamma: float) -> np.ndarray:
    """The official code's "naive" marginal, one step: γ·(share of each class among the
    classifier's argmax predictions on the training instances) + (1 − γ)·marginal."""
    r = check_distribution(marginal, "marginal")
    logits = check_array(logits, "logits", ndim=2, shape=(None, len(r)))
    check_scalar(gamma, "gamma", "real", low=0, high=1)
    share = np.bincount(logits.argmax(1), minlength=len(r)) / len(logits)
    return gamma * share + (1 - gamma) * r
