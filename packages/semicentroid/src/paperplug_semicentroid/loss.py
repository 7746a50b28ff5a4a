"""Agent losses ℓ_i(C, x) = max_{j∈C} d^m(i, j) + d^c(i, x) (paper §2) and the clustering type."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from paperplug.checks import check_type
from paperplug_semicentroid.instance import SemiCentroidInstance, check_instance


@dataclass
class Clustering:
    """labels: (n,) cluster of each agent; centers: (K,) index into M of each cluster's centre;
    radii: (K,) Phase-1 MCC radius r_t where the clustering came from Algorithm 3."""

    labels: np.ndarray
    centers: np.ndarray
    radii: np.ndarray | None = None
    meta: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        out = {"labels": self.labels.tolist(), "centers": self.centers.tolist()}
        out["radii"] = None if self.radii is None else self.radii.tolist()
        return out

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Clustering):
            return NotImplemented
        return np.array_equal(self.labels, other.labels) and np.array_equal(
            self.centers, other.centers
        )


def check_clustering_type(clustering: object, name: str, inst: SemiCentroidInstance) -> Clustering:
    """`clustering` if it is a Clustering of the instance's n agents, else an error naming
    `name`."""
    check_type(clustering, name, Clustering, what="a Clustering")
    if np.shape(clustering.labels) != (inst.n,):
        raise ValueError(
            f"{name} must label the instance's {inst.n} agents, its labels have shape "
            f"{np.shape(clustering.labels)}"
        )
    return clustering


def coalition_losses(inst: SemiCentroidInstance, members: np.ndarray, y: int) -> np.ndarray:
    """ℓ_i(S, y) for each i in S = members: (|S|,)."""
    members = check_instance(inst).check_agents(members, "members")
    y = inst.check_center(y, "y")
    return inst.Dm[np.ix_(members, members)].max(axis=1) + inst.Dc[members, y]


def check_clustering(inst: SemiCentroidInstance, labels: object, centers: object) -> Clustering:
    """Validate a user's (labels, centres) against the instance and return a Clustering."""
    check_instance(inst)
    labels = np.array(labels, copy=True)
    centers = np.array(centers, copy=True)
    if labels.shape != (inst.n,):
        raise ValueError(f"labels must have shape ({inst.n},), got {labels.shape}")
    if labels.dtype.kind not in "iu" or centers.dtype.kind not in "iu":
        raise TypeError("labels and centers must be integer arrays")
    if centers.ndim != 1 or labels.min() < 0 or labels.max() >= len(centers):
        raise ValueError(f"labels must index into centers (0..{len(centers) - 1})")
    if len(np.unique(labels)) > inst.k:
        raise ValueError(f"the clustering uses more than k={inst.k} clusters")
    if centers.min() < 0 or centers.max() >= inst.n_centers:
        raise ValueError(f"centers must index candidate centres 0..{inst.n_centers - 1}")
    return Clustering(labels.astype(int), centers.astype(int))


def losses(inst: SemiCentroidInstance, clustering: Clustering) -> np.ndarray:
    """Each agent's loss ℓ_i(X) under the clustering: (n,)."""
    check_instance(inst)
    check_clustering_type(clustering, "clustering", inst)
    out = np.zeros(inst.n)
    for t, y in enumerate(clustering.centers):
        idx = np.flatnonzero(clustering.labels == t)
        if len(idx):
            out[idx] = coalition_losses(inst, idx, int(y))
    return out


def best_center(inst: SemiCentroidInstance, members: np.ndarray) -> tuple[int, float]:
    """The centre y ∈ M minimising max_{i∈S} ℓ_i(S, y), and that value."""
    members = check_instance(inst).check_agents(members, "members")
    nc = inst.Dm[np.ix_(members, members)].max(axis=1)  # (|S|,)
    worst = (nc[:, None] + inst.Dc[members]).max(axis=0)  # (|M|,)
    y = int(np.argmin(worst))
    return y, float(worst[y])
