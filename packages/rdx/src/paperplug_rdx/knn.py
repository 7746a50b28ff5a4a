"""The kNN-graph mode for many items: neighbourhood ranks only for each item's k nearest
neighbours in either model (ranks beyond k read as k), so the difference and its affinities
are sparse, O(n·k) memory instead of n × n."""

from __future__ import annotations

import numpy as np
from scipy import sparse
from sklearn.neighbors import NearestNeighbors

from paperplug.checks import check_array, check_consistent_length, check_scalar, check_seed


def knn_ranks(R: np.ndarray, k: int) -> sparse.csr_matrix:
    """Sparse (n, n): rank + 1 of each of i's k nearest neighbours (1 = nearest, i excluded)."""
    R = check_array(R, "R", ndim=2, min_samples=2)
    check_scalar(k, "k", "int", low=1)
    n = len(R)
    k = min(k, n - 1)
    _, index = NearestNeighbors(n_neighbors=k + 1).fit(R).kneighbors(R)
    rows = np.repeat(np.arange(n), k)
    cols = index[:, 1:].ravel()
    ranks = np.tile(np.arange(1, k + 1), n).astype(np.float64)
    return sparse.csr_matrix((ranks, (rows, cols)), shape=(n, n))


def estimated_ranks(R: np.ndarray, i: np.ndarray, j: np.ndarray, sample: np.ndarray) -> np.ndarray:
    """Rank of j among i's neighbours estimated from a fixed sample of items: n times the
    share of the sample nearer to i than j is (exact ranks would need n × n distances)."""
    d_ij = ((R[i] - R[j]) ** 2).sum(1)
    ref = R[sample]
    ref_sq = (ref**2).sum(1)
    out = np.empty(len(i))
    for start in range(0, len(i), 8192):  # squared distances to the sample, by matrix product
        rows = i[start : start + 8192]
        d = (R[rows] ** 2).sum(1)[:, None] + ref_sq[None, :] - 2 * R[rows] @ ref.T
        out[start : start + len(rows)] = (d < d_ij[start : start + len(rows), None]).mean(1) * (
            len(R) - 1
        )
    return out


def sparse_difference(R0: np.ndarray, R1: np.ndarray, *, k: int, gamma: float, beta: float,
                      sample: int = 128, seed: int = 0) -> tuple[sparse.csr_matrix, sparse.csr_matrix]:  # fmt: skip
    """(A10, A01) on the union of both models' kNN pairs (symmetrised), the locally biased
    difference of ranks: exact within an item's k nearest, estimated from `sample` items
    beyond (where a pair is near in one model only, its far rank carries the signal)."""
    R0 = check_array(R0, "R0", ndim=2, min_samples=2)
    R1 = check_array(R1, "R1", ndim=2, min_samples=2)
    check_consistent_length(R0=R0, R1=R1)
    check_scalar(k, "k", "int", low=1)
    check_scalar(gamma, "gamma", low=0, inclusive="neither")
    check_scalar(beta, "beta", low=0, inclusive="neither")
    check_scalar(sample, "sample", "int", low=1)
    check_seed(seed, "seed", allow_none=False)
    K0, K1 = knn_ranks(R0, k), knn_ranks(R1, k)
    pattern = ((K0 + K1) != 0).astype(np.float64)
    pattern = ((pattern + pattern.T) > 0).tocoo()
    i, j = pattern.row, pattern.col
    reference = np.random.default_rng(seed).choice(
        len(R0), size=min(sample, len(R0)), replace=False
    )
    ranks = []
    for R, K in ((R0, K0), (R1, K1)):
        known = np.asarray(K[i, j]).ravel()  # rank + 1 where j is among i's k nearest
        rank = known - 1
        missing = known == 0
        rank[missing] = np.maximum(estimated_ranks(R, i[missing], j[missing], reference), k)
        ranks.append(rank)
    d0, d1 = ranks
    delta = np.tanh(gamma * (d1 - d0) / (np.minimum(d0, d1) + 1.0))
    shape = (len(R0), len(R0))
    A10 = sparse.csr_matrix((np.exp(-beta * delta), (i, j)), shape=shape)
    A01 = sparse.csr_matrix((np.exp(beta * delta), (i, j)), shape=shape)
    return A10, A01


def ranks_of_pairs(R: np.ndarray, items: np.ndarray) -> np.ndarray:
    """Full neighbourhood ranks D(i, j) for i, j in `items` only (for BSR in kNN mode)."""
    from scipy.spatial.distance import cdist

    D = cdist(R[items], R)  # (m, n)
    own = D[np.arange(len(items)), items][:, None]
    # rank of j in i's list = how many items are strictly nearer, ties broken by index
    sub = D[:, items]
    nearer = (D[:, None, :] < sub[:, :, None]).sum(-1)
    ties = (
        (D[:, None, :] == sub[:, :, None])
        & (np.arange(len(R))[None, None, :] < items[None, :, None])
    ).sum(-1)
    del own
    return (nearer + ties).astype(np.float64)
