"""Training-time mitigation (paper §4.1): pseudo-labels q for every instance of a set of bags
from a linear program that keeps each bag consistent with its weak label, keeps the set's
class counts within a band around the marginal, and agrees most with the classifier:
max Σ q·log p_θ. The classifier then trains on q with cross-entropy.

The band is where the counts of the true labels lie: the official code puts ±0.99 around
r̂·B at each bag position of a 64-bag batch (`per_position=True, band=0.99`), far inside the
batch's own sampling spread (±√(B r(1−r)): the largest deviation is 4.4 counts at the median on
32 MAX-3 bags at ratio 50),
so the true labelling is infeasible and the LP relabels correct instances; `count_band` gives
the band the counts' sampling and estimation error call for."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.optimize import linprog

from paperplug.checks import (
    check_array,
    check_consistent_length,
    check_distribution,
    check_scalar,
    check_type,
)
from paperplug_nesy.symbolic import SymbolicFunction, check_bags, check_labels, check_sigma


@dataclass
class LPSolution:
    """The batch LP's answer: pseudo-label distributions, the feasible band, the solver status."""

    q: np.ndarray  # (bags, M, C) pseudo-label distributions
    epsilon: np.ndarray  # (C,) the band's half-width per class that was feasible
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


def count_band(marginal: np.ndarray, n: int, se: np.ndarray | None = None, *, z: float = 3.0,
               floor: float = 0.99) -> np.ndarray:  # fmt: skip
    """Half-width per class of the band around r̂·n for the class counts of n instances (ours):
    z standard deviations of the true count about r̂·n — its multinomial sampling spread
    n·r(1−r), plus the estimate's error (n·SE)² when r̂ is estimated (SE from
    `marginal_error`) — at least `floor`, the official ε, and at most n (vacuous)."""
    r = check_distribution(marginal, "marginal")
    check_scalar(n, "n", "int", low=1)
    check_scalar(z, "z", "real", low=0)
    check_scalar(floor, "floor", "real", low=0)
    if se is not None:
        se = check_array(se, "se", ndim=1, shape=(len(r),))
        if (se < 0).any():
            raise ValueError(f"se must be non-negative standard errors, got minimum {se.min():.3g}")
    var = n * r * (1 - r) + (0.0 if se is None else (n * se) ** 2)
    return np.clip(z * np.sqrt(var), floor, max(floor, n))


def pseudo_labels(sigma: SymbolicFunction, log_probs: np.ndarray, s: object, marginal: np.ndarray,
                  *, band: float | np.ndarray = 0.99, per_position: bool = False,
                  max_widen: int = 30) -> LPSolution:  # fmt: skip
    """The LP over a set of bags. log_probs (bags, M, C) from the classifier; s the bags' weak
    labels; marginal r̂ (C,). The count band: |Σ_{b,j} q_{b,j,k} − r̂_k·B·M| ≤ band_k over all
    B·M instances, or per position j |Σ_b q_{b,j,k} − r̂_k·B| ≤ band_k (`per_position`, the
    official code's). While infeasible the band widens by 1, 2, 4, ... (the official code
    adds 1)."""
    log_probs = check_bags(check_sigma(sigma), log_probs, "log_probs")
    B, M, C = log_probs.shape
    s = check_labels(sigma, s)  # every weak label must be a possible output
    check_consistent_length(log_probs=log_probs, s=s)
    r = check_distribution(marginal, "marginal", size=C)
    check_type(per_position, "per_position", bool)
    check_scalar(max_widen, "max_widen", "int", low=0)
    rows, cols, vals, rhs, extra = _consistency_rows(sigma, s, B)
    n_q = B * M * C
    n = n_q + extra
    groups = [[j] for j in range(M)] if per_position else [list(range(M))]
    # count band rows, per group of positions and class k: ±Σ q_{·,group,k} <= band ± target
    band_rows, band_cols, band_vals = [], [], []
    base = len(rhs)
    for g, positions in enumerate(groups):
        for k in range(C):
            row = base + 2 * (g * C + k)
            members = [(b * M + j) * C + k for b in range(B) for j in positions]
            band_rows += [row] * len(members) + [row + 1] * len(members)
            band_cols += members * 2
            band_vals += [1.0] * len(members) + [-1.0] * len(members)
    A_ub = sparse.csr_matrix(
        (vals + band_vals, (rows + band_rows, cols + band_cols)),
        shape=(base + 2 * len(groups) * C, n),
    )
    target = np.tile(r * B * len(groups[0]), len(groups))
    half = check_array(band, "band", ndim=(0, 1), shape=None, min_samples=0)
    if half.ndim == 1 and half.shape != (C,):
        raise ValueError(
            f"band must be a number or one half-width per class ({C}), got {half.shape}"
        )
    half = np.broadcast_to(half, (C,))
    if (half < 0).any():
        raise ValueError(f"band must be non-negative half-widths, got minimum {half.min():.3g}")
    eq_rows = np.repeat(np.arange(B * M), C)  # Σ_k q_{b,j,k} = 1
    A_eq = sparse.csr_matrix((np.ones(n_q), (eq_rows, np.arange(n_q))), shape=(B * M, n))
    cost = np.concatenate([-log_probs.ravel(), np.zeros(extra)])
    for widen in range(max_widen + 1):
        eps = half + (2**widen - 1)
        wide = np.tile(eps, len(groups))
        b_ub = np.concatenate([rhs, np.ravel(np.column_stack([wide + target, wide - target]))])
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
            return LPSolution(np.clip(q, 0, 1), eps.copy(), "optimal")
    raise RuntimeError(f"the LP stayed infeasible up to a band of {half.max() + 2**max_widen - 1}")
