"""The embedded default's data and peer, shared by demo.py and bench/run.py: iris and wine
(scikit-learn's bundled copies, standardised), their semi-centroid instances, and k-means++."""

from __future__ import annotations

import numpy as np
from scipy.spatial.distance import cdist

from paperplug.checks import check_array, check_scalar
from paperplug_semicentroid.instance import SemiCentroidInstance
from paperplug_semicentroid.loss import Clustering


def load(name: str, n: int = 0, seed: int = 0) -> np.ndarray:
    """Standardised iris or wine features, a seeded subsample of n rows (n = 0: all)."""
    from sklearn.datasets import load_iris, load_wine
    from sklearn.preprocessing import StandardScaler

    datasets = {"iris": load_iris, "wine": load_wine}
    if name not in datasets:
        raise ValueError(f"name must be one of {sorted(datasets)}, got {name!r}")
    X = StandardScaler().fit_transform(datasets[name]().data)
    if 0 < n < len(X):
        X = X[np.sort(np.random.default_rng(seed).choice(len(X), n, replace=False))]
    return X


def build(X: np.ndarray, k: int, variant: str) -> SemiCentroidInstance:
    """ "lam": λ = 0.5 over Euclidean; "dual": d^m Euclidean on the first half of the features,
    d^c Euclidean on the second half (M = N in both)."""
    if variant == "lam":
        return SemiCentroidInstance.from_points(X, k, lam=0.5)
    if variant != "dual":
        raise ValueError(f"variant must be 'lam' or 'dual', got {variant!r}")
    h = X.shape[1] // 2
    return SemiCentroidInstance(cdist(X[:, :h], X[:, :h]), cdist(X[:, h:], X[:, h:]), k)


def kmeans_pp(X: np.ndarray, k: int, seed: int = 0) -> Clustering:
    """The peer: scikit-learn k-means++ (n_init=10); each cluster's centre is its data point
    nearest the mean, so its losses are semi-centroid losses over M = N."""
    X = check_array(X, "X", ndim=2)
    check_scalar(k, "k", "int", low=1, high=len(X))
    check_scalar(seed, "seed", "int", low=0)
    from sklearn.cluster import KMeans

    km = KMeans(n_clusters=k, n_init=10, random_state=seed).fit(X)
    centers = cdist(km.cluster_centers_, X).argmin(axis=1)
    used = np.unique(km.labels_)
    relabel = np.full(k, -1)
    relabel[used] = np.arange(len(used))
    return Clustering(relabel[km.labels_], centers[used])


def cost(X: np.ndarray, labels: np.ndarray) -> tuple[float, float]:
    """(k-means cost: squared distances to cluster means; largest cluster diameter)."""
    km = diam = 0.0
    for t in np.unique(labels):
        P = X[labels == t]
        km += float(((P - P.mean(axis=0)) ** 2).sum())
        diam = max(diam, float(cdist(P, P).max()))
    return km, diam
