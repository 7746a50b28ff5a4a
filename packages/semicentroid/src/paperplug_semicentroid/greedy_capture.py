"""Baselines: centroid Greedy Capture (Chen et al. 2019, (1+√2)-core for the centroid loss) and
non-centroid Greedy Capture (Caragiannis et al. 2024, 2-core for the max loss)."""

from __future__ import annotations

import numpy as np

from paperplug_semicentroid.instance import SemiCentroidInstance, check_instance
from paperplug_semicentroid.loss import Clustering, best_center


def centroid_greedy_capture(inst: SemiCentroidInstance) -> Clustering:
    """Balls grow around every candidate centre at one rate (in d^c); a centre opens when its
    ball holds ⌈n/k⌉ unassigned agents, and open balls keep capturing agents they reach."""
    Dc, m = check_instance(inst).Dc, inst.m
    labels = np.full(inst.n, -1)
    opened: list[int] = []
    for delta in np.unique(Dc):
        free = labels < 0
        if opened:  # open balls capture first, each agent by its nearest open centre
            near = Dc[:, opened]
            reach = free & (near.min(axis=1) <= delta)
            labels[reach] = np.argmin(near[reach], axis=1)
        while True:
            counts = ((Dc <= delta) & (labels < 0)[:, None]).sum(axis=0)
            counts[opened] = 0
            y = int(np.argmax(counts))
            if counts[y] < m:
                break
            labels[(labels < 0) & (Dc[:, y] <= delta)] = len(opened)
            opened.append(y)
        if (labels >= 0).all():
            break
    return Clustering(labels, np.array(opened, dtype=int), meta={"baseline": "centroid GC"})


def non_centroid_greedy_capture(inst: SemiCentroidInstance) -> Clustering:
    """Balls grow around unassigned agents (in d^m); once one holds ⌈n/k⌉ unassigned agents its
    m nearest form a cluster; the < m agents left form the last one. Centres: best for each."""
    Dm, m = check_instance(inst).Dm, inst.m
    labels = np.full(inst.n, -1)
    clusters: list[np.ndarray] = []
    for delta in np.unique(Dm):
        while (labels < 0).sum() >= m:
            free = np.flatnonzero(labels < 0)
            counts = (Dm[np.ix_(free, free)] <= delta).sum(axis=1)
            a = int(np.argmax(counts))
            if counts[a] < m:
                break
            members = free[np.argsort(Dm[free[a], free], kind="stable")[:m]]
            labels[members] = len(clusters)
            clusters.append(members)
        if (labels < 0).sum() < m:
            break
    rest = np.flatnonzero(labels < 0)
    if len(rest):
        labels[rest] = len(clusters)
        clusters.append(rest)
    centers = np.array([best_center(inst, C)[0] for C in clusters], dtype=int)
    return Clustering(labels, centers, meta={"baseline": "non-centroid GC"})
