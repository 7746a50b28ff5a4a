"""Stage 3, server clustering (§3.2): scale each descriptor block, pick DBSCAN's eps from the
knee of a sorted distance curve, run DBSCAN, and keep noise points as singleton clusters. The
number of clusters is an output, never an input.

The paper reads the knee off the sorted 1-NN distances. When every cluster has at least two
members those are all within-cluster distances, the curve is flat and its "knee" falls
mid-curve, turning a third of the clients into singletons (measured on the embedded default:
ARI 0.74-0.79). The default curve here is the sorted edge lengths of the descriptors' minimum
spanning tree: it holds every 1-NN distance plus the edges that join the groups, so its knee
sits at the jump from within- to between-cluster distances, which is exactly where DBSCAN
with min_samples=2 (single linkage) must cut. `eps_curve="nearest"` keeps the paper's curve.
A curve without a significant knee (Kneedle's peak below `min_knee`) means no structure:
eps becomes the largest edge and every client lands in one cluster.

With too few clients the knee of a handful of distances means nothing; below
`min_clients_for_knee` the server falls back to k-means with k chosen by the silhouette score
(one cluster when no k separates the clients), and logs the switch.
"""

from __future__ import annotations

import itertools
import logging
from dataclasses import dataclass

import numpy as np
from scipy.spatial.distance import cdist
from sklearn.cluster import DBSCAN, KMeans
from sklearn.metrics import silhouette_score
from sklearn.neighbors import NearestNeighbors

log = logging.getLogger("paperplug_flux")


@dataclass(frozen=True)
class BlockScaler:
    """Min-max scaling of each descriptor block by one (min, max) pair per block, fitted on the
    training clients: block b maps to (D_b - lo_b) / (hi_b - lo_b). One scalar pair per block
    (not per feature) keeps Euclidean distances inside a block proportional to the
    2-Wasserstein distance."""

    edges: tuple[int, ...]
    lo: tuple[float, ...]
    hi: tuple[float, ...]

    @classmethod
    def fit(cls, descriptors: np.ndarray, marginal_size: int) -> BlockScaler:
        d = _check_descriptors(descriptors)
        if not 0 < marginal_size <= d.shape[1]:
            raise ValueError(f"marginal_size must lie in (0, {d.shape[1]}], got {marginal_size}")
        edges = (0, marginal_size, d.shape[1]) if marginal_size < d.shape[1] else (0, marginal_size)
        lo = tuple(float(d[:, a:b].min()) for a, b in itertools.pairwise(edges))
        hi = tuple(float(d[:, a:b].max()) for a, b in itertools.pairwise(edges))
        return cls(edges=edges, lo=lo, hi=hi)

    def transform(self, descriptors: np.ndarray) -> np.ndarray:
        """Scale full descriptors, or marginal blocks alone (unseen clients) when narrower."""
        d = _check_descriptors(descriptors)
        out = np.empty_like(d)
        for (a, b), lo, hi in zip(
            zip(self.edges[:-1], self.edges[1:], strict=True), self.lo, self.hi, strict=True
        ):
            if a >= d.shape[1]:
                break
            out[:, a:b] = (d[:, a:b] - lo) / (hi - lo if hi > lo else 1.0)
        if d.shape[1] not in self.edges[1:]:
            raise ValueError(
                f"descriptors have {d.shape[1]} columns; expected one of {self.edges[1:]}"
            )
        return out


def _check_descriptors(descriptors: np.ndarray) -> np.ndarray:
    d = np.asarray(descriptors, dtype=np.float64)
    if d.ndim != 2 or len(d) == 0:
        raise ValueError(f"descriptors must be a (clients, features) array, got shape {d.shape}")
    if not np.isfinite(d).all():
        raise ValueError("descriptors hold NaN or infinite values")
    return d


def nearest_neighbour_distances(points: np.ndarray, min_samples: int = 2) -> np.ndarray:
    """Each point's distance to its (min_samples - 1)-th nearest other point, sorted ascending:
    the k-distance curve DBSCAN's eps is read from."""
    pts = _check_descriptors(points)
    if not 2 <= min_samples <= len(pts):
        raise ValueError(f"min_samples must lie in [2, {len(pts)}], got {min_samples}")
    dist, _ = NearestNeighbors(n_neighbors=min_samples).fit(pts).kneighbors(pts)
    return np.sort(dist[:, -1])


def spanning_tree_distances(points: np.ndarray) -> np.ndarray:
    """The edge lengths of the points' Euclidean minimum spanning tree, sorted ascending
    (n - 1 values; coincident points give zero-length edges)."""
    pts = _check_descriptors(points)
    if len(pts) < 2:
        raise ValueError("a spanning tree needs at least two points")
    dist = cdist(pts, pts)
    # Prim's algorithm, O(n²): clients are few
    in_tree = np.zeros(len(pts), dtype=bool)
    in_tree[0] = True
    reach = dist[0].copy()
    edges = []
    for _ in range(len(pts) - 1):
        j = int(np.argmin(np.where(in_tree, np.inf, reach)))
        edges.append(reach[j])
        in_tree[j] = True
        reach = np.minimum(reach, dist[j])
    return np.sort(np.array(edges))


def knee(sorted_distances: np.ndarray) -> tuple[float, float]:
    """(value at the knee, strength) of an increasing convex curve by Kneedle (Satopää et al.
    2011, as `kneed.KneeLocator(curve="convex", direction="increasing")`): with both axes
    scaled to [0, 1], the point farthest below the chord, argmax(x - y); the strength is that
    peak, in [0, 1) (0 for a flat or straight curve). One far outlier squeezes the other
    jumps towards the chord, so the knee can slide past them (README, limits)."""
    d = np.asarray(sorted_distances, dtype=np.float64)
    if d.ndim != 1 or len(d) < 2 or np.any(np.diff(d) < 0):
        raise ValueError("sorted_distances must be an ascending 1-D array of at least two values")
    span = d[-1] - d[0]
    if span <= 0:
        return float(d[-1]), 0.0
    gap = np.linspace(0.0, 1.0, len(d)) - (d - d[0]) / span
    i = int(np.argmax(gap))
    return float(d[i]), float(gap[i])


def dbscan_with_singletons(points: np.ndarray, eps: float, min_samples: int = 2) -> np.ndarray:
    """DBSCAN labels where every noise point becomes its own cluster, numbered in order of
    first appearance (so the result does not depend on DBSCAN's internal numbering)."""
    pts = _check_descriptors(points)
    # the same distance matrix as the spanning tree: an edge equal to eps stays inside
    raw = DBSCAN(eps=max(eps, 1e-12), min_samples=min_samples, metric="precomputed").fit_predict(
        cdist(pts, pts)
    )
    keys = [("c", int(r)) if r >= 0 else ("n", i) for i, r in enumerate(raw)]
    order: dict[tuple[str, int], int] = {}
    return np.array([order.setdefault(k, len(order)) for k in keys], dtype=np.int64)


def silhouette_kmeans(
    points: np.ndarray, *, min_silhouette: float = 0.5, seed: int = 0
) -> np.ndarray:
    """The fallback for few clients: k-means for k = 2..n-1, keeping the k of best silhouette;
    one cluster when n < 3 or no k reaches `min_silhouette`."""
    pts = _check_descriptors(points)
    best, labels = min_silhouette, np.zeros(len(pts), dtype=np.int64)
    for k in range(2, len(pts)):
        cand = KMeans(n_clusters=k, n_init=10, random_state=seed).fit_predict(pts)
        if len(set(cand.tolist())) < 2:
            continue
        score = silhouette_score(pts, cand)
        if score > best:
            best, labels = score, cand
    order: dict[int, int] = {}
    return np.array([order.setdefault(int(c), len(order)) for c in labels], dtype=np.int64)


@dataclass(frozen=True)
class Clustering:
    """What the server keeps: labels per training client, centroids in the scaled space, the
    scaler (for unseen clients), eps and which method ran."""

    labels: np.ndarray
    centroids: np.ndarray
    scaler: BlockScaler
    eps: float | None
    method: str

    @property
    def n_clusters(self) -> int:
        return int(self.labels.max()) + 1


def cluster_clients(
    descriptors: np.ndarray,
    marginal_size: int,
    *,
    min_samples: int = 2,
    eps_curve: str = "mst",
    min_knee: float = 0.5,
    min_clients_for_knee: int = 8,
    seed: int = 0,
) -> Clustering:
    """Stage 3 in full: block scaling, eps at the knee of the sorted distances (`eps_curve`
    "mst" or the paper's "nearest"), DBSCAN with singleton noise, centroids; below
    `min_clients_for_knee` clients the logged silhouette k-means fallback."""
    d = _check_descriptors(descriptors)
    if len(d) < 2:
        raise ValueError("clustering needs descriptors of at least two clients")
    if eps_curve not in ("mst", "nearest"):
        raise ValueError(f"eps_curve must be 'mst' or 'nearest', got {eps_curve!r}")
    if not 0 <= min_knee < 1:
        raise ValueError(f"min_knee must lie in [0, 1), got {min_knee}")
    scaler = BlockScaler.fit(d, marginal_size)
    scaled = scaler.transform(d)
    if len(d) >= max(min_clients_for_knee, min_samples + 1):
        curve = (
            spanning_tree_distances(scaled)
            if eps_curve == "mst"
            else nearest_neighbour_distances(scaled, min_samples)
        )
        value, strength = knee(curve)
        eps: float | None = value if strength >= min_knee else float(curve[-1])
        labels, method = dbscan_with_singletons(scaled, eps, min_samples), "dbscan"
    else:
        log.warning(
            "FLUX: %d clients are too few for a knee (< %d); clustering with silhouette k-means",
            len(d),
            min_clients_for_knee,
        )
        eps, labels, method = None, silhouette_kmeans(scaled, seed=seed), "silhouette-kmeans"
    centroids = np.stack([scaled[labels == k].mean(axis=0) for k in range(int(labels.max()) + 1)])
    return Clustering(labels=labels, centroids=centroids, scaler=scaler, eps=eps, method=method)
