"""The Most Cohesive Cluster subroutine (paper §3): among the remaining agents R, the coalition
S (|S| = m) and centre y minimising max_{i∈S} ℓ_i(S, y); exact and polynomial (semi-ball)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from paperplug.checks import check_choice, check_scalar
from paperplug_semicentroid.cliques import check_deadline, clique_search
from paperplug_semicentroid.instance import SemiCentroidInstance, check_instance
from paperplug_semicentroid.loss import best_center, coalition_losses

SEMIBALL_FACTOR = 2.0  # max loss of the semi-ball cluster is at most 2 × the optimum


@dataclass(frozen=True)
class Cohesive:
    """members: agent indices of S; center: index into M; radius: max_{i∈S} ℓ_i(S, center)."""

    members: np.ndarray
    center: int
    radius: float


def _agents(inst: SemiCentroidInstance, agents: np.ndarray | None, m: int | None):
    check_instance(inst)
    R = np.arange(inst.n) if agents is None else inst.check_agents(agents, "agents")
    m = inst.m if m is None else check_scalar(m, "m", "int", low=1, high=len(R))
    return R, m


def semiball_mcc(
    inst: SemiCentroidInstance, agents: np.ndarray | None = None, m: int | None = None
) -> Cohesive:
    """Polynomial MCC: for each centre y and anchor a, take the m agents with the smallest
    κ_i = d^c(i, y) + d^m(i, a); keep the smallest κ_(m), then re-centre. 2-approximate."""
    R, m = _agents(inst, agents, m)
    Dm_R = inst.Dm[np.ix_(R, R)]  # (|R|, |R|): row a = anchor
    best = (np.inf, -1, -1)
    for y in range(inst.n_centers):
        kappa = Dm_R + inst.Dc[R, y][None, :]  # (anchor, agent)
        kth = np.partition(kappa, m - 1, axis=1)[:, m - 1]
        a = int(np.argmin(kth))
        if kth[a] < best[0]:
            best = (float(kth[a]), y, a)
    _, y, a = best
    kappa = Dm_R[a] + inst.Dc[R, y]
    members = np.sort(R[np.argsort(kappa, kind="stable")[:m]])
    y, radius = best_center(inst, members)
    return Cohesive(members, y, radius)


def mcc_lower_bound(
    inst: SemiCentroidInstance, agents: np.ndarray | None = None, m: int | None = None
) -> float:
    """κ_(m) = min over centres y and anchors a of the m-th smallest d^m(a, i) + d^c(i, y): at most
    the MCC's radius (an anchor in the optimal S sees its m members within it)."""
    R, m = _agents(inst, agents, m)
    Dm_R = inst.Dm[np.ix_(R, R)]
    return min(
        float(np.partition(Dm_R + inst.Dc[R, y][None, :], m - 1, axis=1)[:, m - 1].min())
        for y in range(inst.n_centers)
    )


def mcc_feasible(
    inst: SemiCentroidInstance, R: np.ndarray, m: int, r: float, deadline: float | None = None
) -> Cohesive | None:
    """A coalition of m agents from R with max loss ≤ r for some centre, or None: an m-clique
    in {i : d^c(i,y) ≤ r}, edges d^m(i,j) + max(d^c(i,y), d^c(j,y)) ≤ r."""
    Dm_R = inst.Dm[np.ix_(R, R)]
    for y in range(inst.n_centers):
        check_deadline(deadline)
        dc = inst.Dc[R, y]
        ok = np.flatnonzero(dc <= r)
        if len(ok) < m:
            continue
        sub = Dm_R[np.ix_(ok, ok)] + np.maximum(dc[ok][:, None], dc[ok][None, :])
        found = clique_search(sub <= r, m, deadline)
        if found is not None:
            members = np.sort(R[ok[found]])
            return Cohesive(members, y, float(coalition_losses(inst, members, y).max()))
    return None


def exact_mcc(
    inst: SemiCentroidInstance,
    agents: np.ndarray | None = None,
    m: int | None = None,
    deadline: float | None = None,
) -> Cohesive:
    """Exact MCC by binary search over the candidate values d^m(i,j) + d^c(i,y), each step an
    m-clique test; bracketed by the semi-ball bounds (κ_(m) ≤ OPT ≤ semi-ball radius)."""
    R, m = _agents(inst, agents, m)
    check_scalar(deadline, "deadline", allow_none=True)
    upper = semiball_mcc(inst, R, m)
    Dm_R = inst.Dm[np.ix_(R, R)]
    lower = mcc_lower_bound(inst, R, m)
    vals = (Dm_R[:, :, None] + inst.Dc[R][:, None, :]).ravel()
    vals = np.unique(vals[(vals >= lower) & (vals < upper.radius)])
    best, lo, hi = upper, 0, len(vals) - 1
    while lo <= hi:
        mid = (lo + hi) // 2
        found = mcc_feasible(inst, R, m, float(vals[mid]), deadline)
        if found is None:
            lo = mid + 1
        else:
            best, hi = found, mid - 1
    return best


def most_cohesive_cluster(
    inst: SemiCentroidInstance,
    agents: np.ndarray | None = None,
    m: int | None = None,
    method: str = "semiball",
) -> Cohesive:
    """MCC among `agents` (default all) of size m (default ⌈n/k⌉); method "exact" or "semiball"."""
    check_choice(method, "method", ("exact", "semiball"))
    return (exact_mcc if method == "exact" else semiball_mcc)(inst, agents, m)
