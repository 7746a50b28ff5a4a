"""Training-time mitigation (paper §4.1): per batch, pseudo-labels q for every instance from a
linear program that keeps each bag consistent with its weak label, keeps the batch's class
counts at each bag position within ε of the estimated marginal (ε widened by 1 while infeasible), and agrees most
with the classifier: max Σ q·log p_θ. The classifier then trains on q with cross-entropy."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.optimize import linprog

from paperplug_nesy.symbolic import SymbolicFunction


@dataclass
class LPSolution:
    """The batch LP's answer: pseudo-label distributions, the feasible band, the solver status."""

    q: np.ndarray  # (bags, M, C) pseudo-label distributions
    epsilon: float  # the band that was feasible
    status: str


def _consistency_rows(
    sigma: SymbolicFunction, s: np.ndarray, B: int
) -> tuple[list, list, list, list, int]:
    """Inequalities A_ub x <= b_ub (rows, cols, values, rhs) making bag b consistent with s_b.

    MAX has a compact exact encoding: no class above s, and at least one instance at s.
    Any other σ uses its abductive proofs, Tseitin-style: a proof variable α_l ≤ each of its
    facts q_{j, y_lj}, and Σ_l α_l ≥ 1."""
    M, C = sigma.M, sigma.C
    rows, cols, vals, rhs = [], [], [], []
    n_q = B * M * C
    extra = 0
    r = 0

    def q_index(b: int, j: int, k: int) -> int:
        return (b * M + j) * C + k

    for b in range(B):
        if sigma.name.startswith("MAX"):
            for j in range(M):  # q_{b,j,k} = 0 for k > s: as q <= 0
                for k in range(int(s[b]) + 1, C):
                    rows.append(r), cols.append(q_index(b, j, k)), vals.append(1.0), rhs.append(0.0)
                    r += 1
            for j in range(M):  # −Σ_j q_{b,j,s} <= −1
                rows.append(r), cols.append(q_index(b, j, int(s[b]))), vals.append(-1.0)
            rhs.append(-1.0)
            r += 1
            continue
        proofs = sigma.proofs(int(s[b]))
        alphas = list(range(n_q + extra, n_q + extra + len(proofs)))
        extra += len(proofs)
        for a, proof in zip(alphas, proofs, strict=True):
            for j, k in enumerate(proof):  # α − q_{b,j,y_j} <= 0
                rows += [r, r]
                cols += [a, q_index(b, j, int(k))]
                vals += [1.0, -1.0]
                rhs.append(0.0)
                r += 1
        for a in alphas:  # −Σ α <= −1
            rows.append(r), cols.append(a), vals.append(-1.0)
        rhs.append(-1.0)
        r += 1
    return rows, cols, vals, rhs, extra


def pseudo_labels(sigma: SymbolicFunction, log_probs: np.ndarray, s: object, marginal: np.ndarray,
                  *, epsilon: float = 0.99, max_widen: int = 50) -> LPSolution:  # fmt: skip
    """The batch LP. log_probs (bags, M, C) from the classifier; s the bags' weak labels;
    marginal r̂ (C,). The count band, per position j as in the official code, is
    |Σ_b q_{b,j,k} − r̂_k·B| ≤ ε."""
    log_probs = np.asarray(log_probs, dtype=np.float64)
    B, M, C = log_probs.shape
    if (M, C) != (sigma.M, sigma.C):
        raise ValueError(f"log_probs must be (bags, {sigma.M}, {sigma.C}), got {log_probs.shape}")
    s = np.asarray(s).ravel()
    sigma.index(s)  # every weak label must be a possible output
    rows, cols, vals, rhs, extra = _consistency_rows(sigma, s, B)
    n_q = B * M * C
    n = n_q + extra
    # count band rows, per position j and class k: ±Σ_b q_{b,j,k} <= ε ± r̂_k B
    band_rows, band_cols, band_vals = [], [], []
    base = len(rhs)
    for j in range(M):
        for k in range(C):
            row = base + 2 * (j * C + k)
            members = [(b * M + j) * C + k for b in range(B)]
            band_rows += [row] * B + [row + 1] * B
            band_cols += members * 2
            band_vals += [1.0] * B + [-1.0] * B
    A_ub = sparse.csr_matrix(
        (vals + band_vals, (rows + band_rows, cols + band_cols)), shape=(base + 2 * M * C, n)
    )
    target = np.tile(np.asarray(marginal, dtype=np.float64) * B, M)
    eq_rows = np.repeat(np.arange(B * M), C)  # Σ_k q_{b,j,k} = 1
    A_eq = sparse.csr_matrix((np.ones(n_q), (eq_rows, np.arange(n_q))), shape=(B * M, n))
    cost = np.concatenate([-log_probs.ravel(), np.zeros(extra)])
    for widen in range(max_widen + 1):
        eps = epsilon + widen
        b_ub = np.concatenate([rhs, np.ravel(np.column_stack([eps + target, eps - target]))])
        result = linprog(
            cost,
            A_ub=A_ub,
            b_ub=b_ub,
            A_eq=A_eq,
            b_eq=np.ones(B * M),
            bounds=(0, 1),
            method="highs",
        )
        if result.status == 0:
            q = result.x[:n_q].reshape(B, M, C)
            return LPSolution(np.clip(q, 0, 1), eps, "optimal")
    raise RuntimeError(f"the batch LP stayed infeasible up to ε = {epsilon + max_widen}")
