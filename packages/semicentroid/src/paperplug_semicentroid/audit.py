"""Exact audit of core and FJR violation (paper §2 definitions): the largest ratio any
coalition S (|S| ≥ ⌈n/k⌉) with a centre y achieves, and that blocking coalition."""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field

import numpy as np

from paperplug.checks import check_array, check_choice, check_scalar
from paperplug_semicentroid.cliques import SearchTimeout, check_deadline, clique_search
from paperplug_semicentroid.instance import SemiCentroidInstance, check_instance
from paperplug_semicentroid.loss import Clustering, losses
from paperplug_semicentroid.mcc import exact_mcc, mcc_feasible, mcc_lower_bound, semiball_mcc


@dataclass
class Audit:
    """value: max over (S, y) of the criterion's ratio; ratio = max(1, value) is the smallest α
    for which the clustering is in the α-core (α-FJR); exact False means value is a lower bound
    (the "lower" method, or `timed_out`: the time limit cut the exact search short)."""

    criterion: str
    value: float
    coalition: np.ndarray
    center: int
    exact: bool = True
    timed_out: bool = False
    meta: dict = field(default_factory=dict)

    @property
    def ratio(self) -> float:
        return max(1.0, self.value)

    @property
    def violated(self) -> bool:
        """Whether some coalition strictly gains: the clustering is not in the (1-)core/FJR."""
        return self.value > 1.0

    def to_dict(self) -> dict:
        return {
            "criterion": self.criterion,
            "ratio": self.ratio,
            "value": self.value,
            "coalition": self.coalition.tolist(),
            "center": self.center,
            "exact": self.exact,
            "timed_out": self.timed_out,
        }


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num/den with 0/0 = 0 (an agent with zero loss never gains) and x/0 = inf for x > 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.inf)
    return np.where(num > 0, out, 0.0)


def _current_losses(inst: SemiCentroidInstance, clustering: Clustering | np.ndarray) -> np.ndarray:
    check_instance(inst)
    if isinstance(clustering, Clustering):
        return losses(inst, clustering)
    L = check_array(clustering, "clustering", ndim=1, shape=(inst.n,), copy=True)
    if np.any(L < 0):
        raise ValueError(f"clustering (as losses) must be non-negative, got minimum {L.min()}")
    return L


def _core_pairs(inst: SemiCentroidInstance, L: np.ndarray, y: int) -> np.ndarray:
    """(n, n) matrix whose (i, j) entry is the ratio i and j both reach if together in S with y."""
    R = _ratio(L[:, None], inst.Dm + inst.Dc[:, y][:, None])  # i's ratio facing j
    return np.minimum(R, R.T)


def _core_lower_bound(
    inst: SemiCentroidInstance, L: np.ndarray, best: list, deadline: float | None
) -> None:
    """Raise `best` = [value, S, y] to the best ratio over the semi-ball coalitions (each centre
    y, each anchor a: the m agents nearest a in d^m(a, ·) + d^c(·, y)), a lower bound."""
    m = inst.m
    chunk = max(1, 2_000_000 // (m * m))  # anchors per step: (chunk, m, m) gathered at once
    for y in range(inst.n_centers):
        kappa = inst.Dm + inst.Dc[:, y][None, :]  # (anchor, agent)
        for start in range(0, inst.n, chunk):
            check_deadline(deadline)
            S = np.argsort(kappa[start : start + chunk], axis=1, kind="stable")[:, :m]
            worst = inst.Dm[S[:, :, None], S[:, None, :]].max(axis=2)  # (anchors, m)
            vals = _ratio(L[S], worst + inst.Dc[S, y]).min(axis=1)
            a = int(np.argmax(vals))
            if vals[a] > best[0]:
                best[:] = [float(vals[a]), np.sort(S[a]), y]


def _fjr_lower_bound(
    inst: SemiCentroidInstance, L: np.ndarray, best: list, floor: float, deadline: float | None
) -> None:
    """Raise `best` to the best FJR ratio with semi-ball MCCs at every loss threshold v, a
    lower bound; stops where v / `floor` (≤ v / MCC(v)) cannot beat it."""
    for v in np.unique(L[L > 0])[::-1]:
        check_deadline(deadline)
        V = np.flatnonzero(v <= L)
        if len(V) < inst.m:
            continue
        if floor > 0 and v / floor <= best[0]:
            break
        found = semiball_mcc(inst, V, inst.m)
        ratio = float(_ratio(np.array([v]), np.array([found.radius]))[0])
        if ratio > best[0]:
            best[:] = [ratio, found.members, found.center]


def _deadline(time_limit: float | None) -> float | None:
    check_scalar(time_limit, "time_limit", low=0, allow_none=True)
    return None if time_limit is None else time.perf_counter() + time_limit


def audit_core(
    inst: SemiCentroidInstance,
    clustering: Clustering | np.ndarray,
    method: str = "exact",
    time_limit: float | None = None,
) -> Audit:
    """Core-violation ratio max_{S,y} min_{i∈S} ℓ_i(X)/ℓ_i(S, y) and the blocking (S, y).

    method "exact": per centre, binary search over pair ratios with an m-clique test (graph:
    i ~ j when both keep ratio ≥ ρ); "brute": enumerate all m-subsets; "lower": semi-ball
    coalitions only. The exact search starts from the semi-ball bound, so a time limit that cuts
    it short still returns at least what "lower" finds in that time: past `time_limit` seconds
    (checked inside every search loop) the best coalition so far, flagged timed_out and not
    exact, a lower bound."""
    check_choice(method, "method", ("exact", "brute", "lower"))
    L = _current_losses(inst, clustering)
    if method == "brute":
        return _brute(inst, L, "core")
    deadline = _deadline(time_limit)
    m = inst.m
    best = [-1.0, np.arange(m), 0]
    try:
        _core_lower_bound(inst, L, best, deadline)
        if method == "exact":
            for yy in range(inst.n_centers):
                check_deadline(deadline)
                P = _core_pairs(inst, L, yy)
                cand = np.unique(P[best[0] < P])
                lo, hi = 0, len(cand) - 1
                while lo <= hi:  # the largest candidate ρ with an m-clique in {P ≥ ρ}
                    mid = (lo + hi) // 2
                    found = clique_search(cand[mid] <= P, m, deadline)
                    if found is None:
                        hi = mid - 1
                    else:  # its own ratio, which may exceed ρ while the search is unfinished
                        found = np.array(found)
                        best[:] = [float(P[np.ix_(found, found)].min()), found, yy]
                        lo = mid + 1
    except SearchTimeout:
        return Audit("core", max(best[0], 0.0), best[1], best[2], exact=False, timed_out=True)
    return Audit("core", best[0], best[1], best[2], exact=method == "exact")


def audit_fjr(
    inst: SemiCentroidInstance,
    clustering: Clustering | np.ndarray,
    method: str = "exact",
    time_limit: float | None = None,
) -> Audit:
    """FJR ratio max_{S,y} min_{i∈S} ℓ_i(X) / max_{j∈S} ℓ_j(S, y) and the blocking (S, y).

    Exact: for each threshold v among the losses, an exact MCC over {i : ℓ_i(X) ≥ v} gives
    the best ratio v / MCC(v); "brute" enumerates; "lower" uses semi-ball MCCs. The exact
    search starts from the semi-ball bound, so a time limit that cuts it short still returns at
    least what "lower" finds in that time: past `time_limit` seconds (checked inside every
    search loop) the best coalition so far, flagged timed_out and not exact, a lower bound."""
    check_choice(method, "method", ("exact", "brute", "lower"))
    L = _current_losses(inst, clustering)
    if method == "brute":
        return _brute(inst, L, "fjr")
    deadline = _deadline(time_limit)
    m = inst.m
    best = [-1.0, np.arange(m), 0]
    try:
        floor = mcc_lower_bound(inst, m=m)  # ≤ MCC(v) for every v
        _fjr_lower_bound(inst, L, best, floor, deadline)
        if method == "lower":
            return Audit("fjr", max(best[0], 0.0), best[1], best[2], exact=False)
        for v in np.unique(L[L > 0])[::-1]:
            check_deadline(deadline)
            V = np.flatnonzero(v <= L)
            if len(V) < m:
                continue
            if floor > 0 and v / floor <= best[0]:
                break  # every later threshold is smaller while MCC(v) ≥ MCC(all agents)
            # only an MCC below v / best can raise the ratio: test that first
            limit = np.inf if best[0] <= 0 else np.nextafter(v / best[0], 0.0)
            if limit < np.inf and mcc_feasible(inst, V, m, limit, deadline) is None:
                continue
            found = exact_mcc(inst, V, m, deadline)
            ratio = float(_ratio(np.array([v]), np.array([found.radius]))[0])
            if ratio > best[0]:
                best[:] = [ratio, found.members, found.center]
    except SearchTimeout:
        return Audit("fjr", max(best[0], 0.0), best[1], best[2], exact=False, timed_out=True)
    return Audit("fjr", max(best[0], 0.0), best[1], best[2], exact=True)


def _brute(inst: SemiCentroidInstance, L: np.ndarray, criterion: str) -> Audit:
    """Enumerate every m-subset and centre (coalitions larger than m never do better)."""
    if inst.n > 16:
        raise ValueError(f"brute-force audit is for tiny instances (n ≤ 16), got n={inst.n}")
    best = (-1.0, np.arange(inst.m), 0)
    for S in itertools.combinations(range(inst.n), inst.m):
        S = np.array(S)
        dev = inst.Dm[np.ix_(S, S)].max(axis=1)[:, None] + inst.Dc[S]  # (|S|, |M|)
        if criterion == "core":
            vals = _ratio(L[S][:, None], dev).min(axis=0)
        else:
            vals = _ratio(np.full(dev.shape[1], L[S].min()), dev.max(axis=0))
        y = int(np.argmax(vals))
        if vals[y] > best[0]:
            best = (float(vals[y]), S, y)
    return Audit(criterion, *best)
