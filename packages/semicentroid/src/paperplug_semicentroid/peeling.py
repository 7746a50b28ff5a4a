"""Phase 1, cohesive-cluster peeling (GreedyCohesiveClustering, Caragiannis et al. 2024, as
the first phase of the paper's Algorithm 3): remove an MCC while ⌈n/k⌉ agents remain."""

from __future__ import annotations

import numpy as np

from paperplug.checks import check_choice
from paperplug_semicentroid.instance import SemiCentroidInstance, check_instance
from paperplug_semicentroid.loss import Clustering, best_center
from paperplug_semicentroid.mcc import most_cohesive_cluster


def cohesive_peeling(inst: SemiCentroidInstance, mcc: str = "semiball") -> Clustering:
    """Peel MCCs of size m = ⌈n/k⌉; the < m agents left form the last cluster with its best
    centre. radii[t] = r_t, the peeled cluster's max loss. α-FJR for an α-approximate MCC."""
    check_instance(inst)
    check_choice(mcc, "mcc", ("exact", "semiball"))
    m = inst.m
    remaining = np.arange(inst.n)
    labels = np.full(inst.n, -1)
    centers, radii = [], []
    while len(remaining) >= m:
        found = most_cohesive_cluster(inst, remaining, m, method=mcc)
        labels[found.members] = len(centers)
        centers.append(found.center)
        radii.append(found.radius)
        remaining = np.setdiff1d(remaining, found.members)
    if len(remaining):
        y, r = best_center(inst, remaining)
        labels[remaining] = len(centers)
        centers.append(y)
        radii.append(r)
    return Clustering(labels, np.array(centers, dtype=int), np.array(radii), {"mcc": mcc})
