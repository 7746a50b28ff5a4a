"""Class-specific risks under σ (the paper's theory, §2; the bound here is derived by us, see
the README): how much error in class j a classifier can keep while its partial risk — the
share of bags whose predicted labels σ maps to the wrong output — stays small. It depends on
σ and the marginal r through the detection weight ω_j: the expected number of positions at
which σ exposes a single wrong label on a class-j instance, for the least exposed wrong label.

    R_j ≤ R_P / (r_j · (ω_j − M(M−1)·R̄)),   ω_j = min_{k≠j} Σ_i P_{y_−i ~ r}(σ(y_−i, y_i = k) ≠ σ(y_−i, y_i = j))

with R_j = P(f(x) ≠ j | y = j), R_P the partial risk and R̄ = P(f(x) ≠ y) the instance risk."""

from __future__ import annotations

import numpy as np

from paperplug.checks import check_array, check_distribution, check_scalar
from paperplug_nesy.symbolic import SymbolicFunction, check_sigma


def detection_weights(sigma: SymbolicFunction, marginal: object) -> np.ndarray:
    """ω_j (C,): min over wrong labels k of Σ over positions i of the probability, over the
    other M−1 labels drawn from r, that σ's output changes when y_i = j is replaced by k."""
    r = check_distribution(marginal, "marginal", size=check_sigma(sigma).C)
    table = sigma.table()
    C, M = sigma.C, sigma.M
    exposed = np.zeros((C, C))
    for i in range(M):
        t = np.moveaxis(table, i, 0).reshape(C, -1)  # (label at i, the others' assignment)
        others = np.ones(1)
        for _ in range(M - 1):
            others = np.outer(others, r).ravel()  # P(y_−i), in the same C-ary order
        exposed += ((t[:, None, :] != t[None, :, :]) * others).sum(-1)  # [j, k]
    np.fill_diagonal(exposed, np.inf)
    return exposed.min(1)


def partial_risk(sigma: SymbolicFunction, marginal: object, confusion: object) -> float:
    """The exact partial risk P(σ(ŷ) ≠ σ(y)) of a classifier whose prediction for a class-c
    instance is drawn from confusion[c], independently across the M instances (enumerates
    all C^M × C^M pairs; for checking the bound)."""
    r = check_distribution(marginal, "marginal", size=check_sigma(sigma).C)
    P = check_array(confusion, "confusion", ndim=2, shape=(sigma.C, sigma.C))
    if (P < 0).any() or not np.allclose(P.sum(1), 1.0, atol=1e-6):
        raise ValueError("confusion must be row-stochastic: P(ŷ = k | y = c) in row c")
    if sigma.C ** (2 * sigma.M) > 2e7:
        raise ValueError(f"{sigma.C}^(2·{sigma.M}) label pairs are too many to enumerate")
    A = r[:, None] * P  # P(y = c, ŷ = k) for one instance
    joint = np.ones((1, 1))
    for _ in range(sigma.M):
        joint = np.kron(joint, A)  # P(y, ŷ) over all M instances, C-ary order
    t = sigma.table().ravel()
    return float(joint[t[:, None] != t[None, :]].sum())


def class_risk_bound(sigma: SymbolicFunction, marginal: object, partial: float,
                     instance_risk: float) -> np.ndarray:  # fmt: skip
    """Upper bounds (C,) on the class risks R_j of any classifier with partial risk `partial`
    and instance risk at most `instance_risk`, instances i.i.d. with label marginal r:
    R_P / (r_j (ω_j − M(M−1) R̄)), 1 where that is not positive or exceeds 1."""
    r = check_distribution(marginal, "marginal", size=check_sigma(sigma).C)
    check_scalar(partial, "partial", "real", low=0, high=1)
    check_scalar(instance_risk, "instance_risk", "real", low=0, high=1)
    margin = r * (detection_weights(sigma, r) - sigma.M * (sigma.M - 1) * instance_risk)
    with np.errstate(divide="ignore", invalid="ignore"):
        bound = np.where(margin > 0, partial / margin, 1.0)
    return np.clip(bound, 0.0, 1.0)
