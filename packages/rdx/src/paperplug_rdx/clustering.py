"""Clusters of the difference graph (RDX §3.3): spectral clustering of the symmetrised affinity
into k + 1 clusters, ordered by mean intra-cluster affinity so that the lowest is the null
cluster; or the PageRank / eigenvector-centrality seeding of fixed-size neighbourhoods."""

from __future__ import annotations

import numpy as np
from scipy import sparse

from paperplug.checks import check_choice, check_scalar, check_seed, check_type
from paperplug_rdx.validation import check_affinity

SEEDINGS = ("spectral", "pagerank", "centrality")


def _mean_affinity(A: object, members: np.ndarray) -> float:
    block = A[members][:, members]
    return (
        float(block.mean())
        if not sparse.issparse(block)
        else float(block.sum() / len(members) ** 2)
    )


def spectral_clusters(
    A: object, n_clusters: int, *, seed: int = 0, null_cluster: bool = True
) -> np.ndarray:
    """Labels 0..n_clusters (0 the null cluster, the one of lowest mean affinity, when
    null_cluster) ordered by increasing mean intra-cluster affinity."""
    from sklearn.cluster import SpectralClustering

    A = check_affinity(A, "A")
    check_type(null_cluster, "null_cluster", bool, what="True or False")
    check_scalar(n_clusters, "n_clusters", "int", low=1, high=A.shape[0] - int(null_cluster))
    check_seed(seed, "seed", allow_none=False)
    sym = (A + A.T) / 2
    k = n_clusters + int(null_cluster)
    raw = SpectralClustering(n_clusters=k, affinity="precomputed", random_state=seed,
                             assign_labels="cluster_qr").fit(sym).labels_  # fmt: skip
    labels = np.unique(raw)
    means = np.array([_mean_affinity(sym, np.flatnonzero(raw == c)) for c in labels])
    rank = {int(c): i for i, c in enumerate(labels[np.argsort(means, kind="stable")])}
    return np.array([rank[int(c)] for c in raw])


def seeded_neighbourhoods(
    A: object, n_clusters: int, *, size: int = 9, method: str = "pagerank"
) -> np.ndarray:
    """Labels 1..n_clusters for `n_clusters` disjoint neighbourhoods of `size` items, each grown
    around the most central remaining item (PageRank or eigenvector centrality on A); 0 for
    every other item."""
    import networkx as nx

    A = check_affinity(A, "A")
    check_scalar(n_clusters, "n_clusters", "int", low=1)
    check_scalar(size, "size", "int", low=1, high=A.shape[0])
    check_choice(method, "method", ("pagerank", "centrality"))
    dense = A.toarray() if sparse.issparse(A) else np.asarray(A)
    graph = nx.from_numpy_array((dense + dense.T) / 2)
    if method == "pagerank":
        score = nx.pagerank(graph, weight="weight")
    else:
        score = nx.eigenvector_centrality_numpy(graph, weight="weight")
    centrality = np.array([score[i] for i in range(len(dense))])
    labels = np.zeros(len(dense), dtype=int)
    free = np.ones(len(dense), dtype=bool)
    for c in range(1, n_clusters + 1):
        if free.sum() < size:
            break
        centre = int(np.argmax(np.where(free, centrality, -np.inf)))
        near = np.argsort(-np.where(free, dense[centre], -np.inf), kind="stable")
        near = [i for i in near if free[i] and i != centre][: size - 1]
        members = [centre, *near]
        labels[members] = c
        free[members] = False
    return labels
