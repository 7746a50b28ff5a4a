"""The baselines RDX is compared with: KMeans, NMF and PCA on one representation, each turned
into grids of the same size by the same rule (the items nearest a cluster centre, or the
highest-scoring items of a component)."""

from __future__ import annotations

import numpy as np

BASELINES = ("kmeans", "nmf", "pca")


def baseline_grids(
    R: np.ndarray, method: str, n_grids: int = 3, size: int = 9, seed: int = 0
) -> list[np.ndarray]:
    """`n_grids` grids of `size` items from one representation R (n, d)."""
    if method == "kmeans":
        from sklearn.cluster import KMeans

        model = KMeans(n_clusters=n_grids, n_init=10, random_state=seed).fit(R)
        return [
            np.argsort(np.linalg.norm(R - c, axis=1), kind="stable")[:size]
            for c in model.cluster_centers_
        ]
    if method in ("nmf", "pca"):
        from sklearn.decomposition import NMF, PCA

        if method == "nmf":
            scores = NMF(
                n_components=n_grids, init="nndsvda", random_state=seed, max_iter=500
            ).fit_transform(np.maximum(R, 0))
        else:
            scores = PCA(n_components=n_grids, random_state=seed).fit_transform(R)
        return [np.argsort(-scores[:, c], kind="stable")[:size] for c in range(n_grids)]
    raise ValueError(f"method must be one of {BASELINES}, got {method!r}")
