"""Phase 2, selective switching (paper's Algorithm 3, second phase; reconstructed, see README):
an agent may join another Phase-1 cluster t only if every original member of t keeps loss
≤ c·r_t; each agent decides against the Phase-1 clusters alone, so decisions are independent."""

from __future__ import annotations

import math

import numpy as np

from paperplug.checks import check_scalar
from paperplug_semicentroid.instance import SemiCentroidInstance, check_instance
from paperplug_semicentroid.loss import Clustering, check_clustering_type


def switching_constant(alpha: float) -> float:
    """c = (3α + √(α(α+8))) / (4α), the admission slack for an α-approximate MCC."""
    check_scalar(alpha, "alpha (the MCC approximation factor)", low=1)
    return (3 * alpha + math.sqrt(alpha * (alpha + 8))) / (4 * alpha)


def core_bound(alpha: float) -> float:
    """Core factor c/(c-1) of Algorithm 3 with an α-approximate MCC: 3 at α=1, 3+2√3 at α=4."""
    c = switching_constant(alpha)
    return c / (c - 1)


def selective_switching(
    inst: SemiCentroidInstance, phase1: Clustering, c: float
) -> tuple[Clustering, np.ndarray]:
    """Move each agent to the admissible Phase-1 cluster with the smallest guaranteed loss.

    Admissible(i, t): max_{j∈C_t} d^m(i,j) + d^c(j,x_t) ≤ c·r_t. The guaranteed loss u(i, t)
    bounds i's final loss whoever else switches; returns the clustering and u at the choice."""
    check_instance(inst)
    check_clustering_type(phase1, "phase1", inst)
    c = check_scalar(c, "c", low=1)
    if phase1.radii is None:
        raise ValueError("phase1 has no radii: selective switching needs the Phase-1 radii r_t")
    Dm, Dc = inst.Dm, inst.Dc
    K = len(phase1.centers)
    admissible = np.zeros((inst.n, K), dtype=bool)
    bound = np.full((inst.n, K), np.inf)  # u(i, t)
    for t in range(K):
        C = np.flatnonzero(phase1.labels == t)
        x, r = int(phase1.centers[t]), float(phase1.radii[t])
        member_dc = Dc[C, x]  # (|C|,)
        admissible[:, t] = (Dm[:, C] + member_dc[None, :]).max(axis=1) <= c * r
        admissible[C, t] = True
        joiners = np.flatnonzero(admissible[:, t])
        joiners = joiners[phase1.labels[joiners] != t]
        # Another joiner i' satisfies d^m(i', j) ≤ c·r − d^c(j, x) for every member j, so by the
        # triangle inequality through any member; or directly over the admissible set.
        via_member = (Dm[:, C] + (c * r - member_dc)[None, :]).min(axis=1)
        direct = Dm[:, joiners].max(axis=1) if len(joiners) else np.zeros(inst.n)
        to_members = Dm[:, C].max(axis=1)
        bound[:, t] = np.maximum(to_members, np.minimum(via_member, direct)) + Dc[:, x]
    bound[~admissible] = np.inf
    own = phase1.labels
    choice = own.copy()
    for i in range(inst.n):
        t = int(np.argmin(bound[i]))
        if bound[i, t] < bound[i, own[i]]:
            choice[i] = t
    used = np.unique(choice)  # drop clusters left empty
    relabel = np.full(K, -1)
    relabel[used] = np.arange(len(used))
    out = Clustering(
        relabel[choice],
        phase1.centers[used].copy(),
        phase1.radii[used].copy(),
        {**phase1.meta, "c": c, "switched": int((choice != own).sum())},
    )
    return out, bound[np.arange(inst.n), choice]
