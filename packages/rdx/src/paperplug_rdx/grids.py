"""Explanation grids (RDX §3.4): from each cluster, the `size` items that best show what the
cluster means — the neighbourhood (in the model that considers them similar) whose summed
affinity is largest (`maximize_total_neighborhood_affinity`)."""

from __future__ import annotations

import numpy as np
from scipy import sparse
from sklearn.neighbors import NearestNeighbors

from paperplug.checks import check_array, check_scalar
from paperplug_rdx.validation import check_affinity, check_items


def neighbourhood_grid(
    members: np.ndarray, A: object, R_close: np.ndarray, size: int = 9
) -> np.ndarray:
    """Item indices of the grid of one cluster (all of them when it has at most `size`).

    Each member's `size` nearest fellow members (itself first) form a candidate; the one of
    largest summed affinity wins. Memory grows with the cluster, not with its square."""
    A = check_affinity(A, "A")
    members = check_items(members, "members", A.shape[0])
    R_close = check_array(R_close, "R_close", shape=(A.shape[0], None))
    check_scalar(size, "size", "int", low=1)
    if len(members) <= size:
        return members
    _, index = NearestNeighbors(n_neighbors=size).fit(R_close[members]).kneighbors(R_close[members])
    candidates = members[index]  # (m, size) item indices
    rows = np.repeat(candidates, size, axis=1).ravel()
    cols = np.tile(candidates, (1, size)).ravel()
    values = np.asarray(A[rows, cols]).ravel() if sparse.issparse(A) else np.asarray(A)[rows, cols]
    totals = values.reshape(len(members), size * size).sum(1)
    return candidates[int(np.argmax(totals))]
