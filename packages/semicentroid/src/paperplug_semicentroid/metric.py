"""The paper's metric assumption (§2): d^m and d^c are (pseudo-)metrics. Every approximation
guarantee (Algorithm 3's core bound, Phase 1's FJR bound, Greedy Capture's) uses the triangle
inequality, so a distance that breaks it (e.g. squared Euclidean) voids them. The losses and the
exact audit stay well defined on any non-negative distances, so a violation warns, not raises."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from paperplug.checks import check_array, check_scalar

MAX_POINTS = 300  # d^m: all triples among at most this many agents (a seeded subset beyond)
MAX_WORK = 30_000_000  # d^c: agents × agents × centres entries per check (a subset beyond)


class NonMetricWarning(UserWarning):
    """A distance breaks the triangle inequality: the paper's guarantees do not hold for it."""


@dataclass(frozen=True)
class Violation:
    """The worst violation found, `excess` = its size over the largest distance. d^m: d(a, c) >
    d(a, b) + d(b, c) for points (a, b, c); d^c: d(a, y) > d(a, y') + d(b, y') + d(b, y), the
    path agent a → centre y' → agent b → centre y, for points (a, y', b, y). `exhaustive`: every
    triple (quadruple) was checked, not those of a subset of the agents."""

    excess: float
    points: tuple[int, ...]
    exhaustive: bool


def _subset(n: int, size: int, seed: int) -> np.ndarray:
    if size >= n:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, size, replace=False))


def triangle_violation(D: np.ndarray, seed: int = 0) -> Violation | None:
    """The worst d(i, k) > d(i, j) + d(j, k) in a square distance matrix, or None: every triple
    up to MAX_POINTS points, else every triple of a seeded subset of MAX_POINTS points."""
    D = check_array(D, "D", ndim=2)
    if D.shape[0] != D.shape[1]:
        raise ValueError(f"D must be square (n, n), got shape {D.shape}")
    check_scalar(seed, "seed", "int", low=0)
    idx = _subset(D.shape[0], MAX_POINTS, seed)
    sub = D[np.ix_(idx, idx)]
    worst, where = 1e-9 * max(float(D.max()), 1e-300), None
    for j in range(len(idx)):
        gap = sub - (sub[:, j][:, None] + sub[j][None, :])  # (i, k): d(i,k) − d(i,j) − d(j,k)
        i, k = np.unravel_index(int(np.argmax(gap)), gap.shape)
        if gap[i, k] > worst:
            worst, where = float(gap[i, k]), (int(idx[i]), int(idx[j]), int(idx[k]))
    if where is None:
        return None
    return Violation(worst / float(D.max()), where, len(idx) == D.shape[0])


def center_violation(Dc: np.ndarray, seed: int = 0) -> Violation | None:
    """The worst d(i, y) > d(i, y') + d(j, y') + d(j, y) in an agent-to-centre matrix (n, |M|), a
    condition every metric on N ∪ M meets (with M = N it is the triangle inequality), or None.
    All agents while n²·|M| ≤ MAX_WORK, else a seeded subset of them (all centres always)."""
    Dc = check_array(Dc, "Dc", ndim=2)
    check_scalar(seed, "seed", "int", low=0)
    n, c = Dc.shape
    idx = _subset(n, max(2, int((MAX_WORK / c) ** 0.5)), seed)
    sub = Dc[idx]  # (a, |M|)
    # via[i, j]: the shortest path agent i → some centre → agent j; then to y through j.
    via = np.stack([(row[None, :] + sub).min(axis=1) for row in sub])  # (a, a)
    reach = np.stack([(row[:, None] + sub).min(axis=0) for row in via])  # (a, |M|)
    gap = sub - reach
    i, y = np.unravel_index(int(np.argmax(gap)), gap.shape)
    if gap[i, y] <= 1e-9 * max(float(Dc.max()), 1e-300):
        return None
    j = int(np.argmin(via[i] + sub[:, y]))
    y2 = int(np.argmin(sub[i] + sub[j]))
    points = (int(idx[i]), y2, int(idx[j]), int(y))
    return Violation(float(gap[i, y]) / float(Dc.max()), points, len(idx) == n)
