"""Stage 3, server clustering (§3.2): group the clients from their descriptors, with no number
of clusters given; noise points become singleton clusters. Two methods:

- "calibrated" (default, our addition): average linkage on the noise-calibrated distances of
  `calibration.py`, cut where groups lie `threshold` times farther apart than sampling noise
  alone would put them. The cut has a meaning whatever the clients' sizes and numbers, so
  structureless clients form one cluster and it needs no fallback for few clients.
- "knee" (the paper's): min-max scaling per descriptor block, DBSCAN(min_samples=2) with eps at
  the Kneedle knee of a sorted distance curve. The paper reads the knee off the sorted 1-NN
  distances (`eps_curve="nearest"`); when every cluster has two or more members those are all
  within-cluster distances and the knee falls mid-curve, so the default curve is the sorted
  edge lengths of the minimum spanning tree, whose jump is where DBSCAN with min_samples=2
  (single linkage) must cut. A knee weaker than `min_knee` means no structure: one cluster.
  Below `min_clients_for_knee` clients it falls back to silhouette k-means, logged.

Either way the decision's statistic, value and threshold are kept (`Clustering.decision`) and a
close call warns. The knee method reads min-max scaled descriptors, whose distances ignore
sampling noise: on unequal clients (40-220 samples) its knee strength sits near its threshold
and the answer flips with the seed (README, "Choices").
"""

from __future__ import annotations

import itertools
import logging
from dataclasses import dataclass

import numpy as np
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.spatial.distance import cdist, squareform
from sklearn.cluster import DBSCAN, KMeans
from sklearn.metrics import silhouette_score
from sklearn.neighbors import NearestNeighbors

from paperplug.checks import check_array, check_choice, check_scalar
from paperplug_flux.calibration import noise_ratios
from paperplug_flux.decisions import Decision

log = logging.getLogger("paperplug_flux")
METHODS = ("calibrated", "knee")


def _points(value: np.ndarray, name: str = "descriptors") -> np.ndarray:
    return check_array(value, name, ndim=2)


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
        d = _points(descriptors)
        marginal_size = check_scalar(marginal_size, "marginal_size", "int", low=1, high=d.shape[1])
        edges = (0, marginal_size, d.shape[1]) if marginal_size < d.shape[1] else (0, marginal_size)
        lo = tuple(float(d[:, a:b].min()) for a, b in itertools.pairwise(edges))
        hi = tuple(float(d[:, a:b].max()) for a, b in itertools.pairwise(edges))
        return cls(edges=edges, lo=lo, hi=hi)

    def transform(self, descriptors: np.ndarray) -> np.ndarray:
        """Scale full descriptors, or marginal blocks alone (unseen clients) when narrower."""
        d = _points(descriptors)
        if d.shape[1] not in self.edges[1:]:
            raise ValueError(
                f"descriptors have {d.shape[1]} columns; expected one of {self.edges[1:]}"
            )
        out = np.empty_like(d)
        for (a, b), lo, hi in zip(itertools.pairwise(self.edges), self.lo, self.hi, strict=True):
            if a >= d.shape[1]:
                break
            out[:, a:b] = (d[:, a:b] - lo) / (hi - lo if hi > lo else 1.0)
        return out


def nearest_neighbour_distances(points: np.ndarray, min_samples: int = 2) -> np.ndarray:
    """Each point's distance to its (min_samples - 1)-th nearest other point, sorted ascending:
    the k-distance curve DBSCAN's eps is read from."""
    pts = _points(points, "points")
    min_samples = check_scalar(min_samples, "min_samples", "int", low=2, high=len(pts))
    dist, _ = NearestNeighbors(n_neighbors=min_samples).fit(pts).kneighbors(pts)
    return np.sort(dist[:, -1])


def spanning_tree_distances(points: np.ndarray) -> np.ndarray:
    """The edge lengths of the points' Euclidean minimum spanning tree, sorted ascending
    (n - 1 values; coincident points give zero-length edges)."""
    pts = check_array(points, "points", ndim=2, min_samples=2)
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
    d = check_array(sorted_distances, "sorted_distances", ndim=1, min_samples=2)
    if np.any(np.diff(d) < 0):
        raise ValueError("sorted_distances must be sorted in ascending order")
    span = d[-1] - d[0]
    if span <= 0:
        return float(d[-1]), 0.0
    gap = np.linspace(0.0, 1.0, len(d)) - (d - d[0]) / span
    i = int(np.argmax(gap))
    return float(d[i]), float(gap[i])


def _first_appearance(labels: np.ndarray) -> np.ndarray:
    order: dict[object, int] = {}
    return np.array([order.setdefault(k, len(order)) for k in labels.tolist()], dtype=np.int64)


def dbscan_with_singletons(points: np.ndarray, eps: float, min_samples: int = 2) -> np.ndarray:
    """DBSCAN labels where every noise point becomes its own cluster, numbered in order of
    first appearance (so the result does not depend on DBSCAN's internal numbering)."""
    pts = _points(points, "points")
    eps = check_scalar(eps, "eps", "real", low=0, inclusive="neither")
    check_scalar(min_samples, "min_samples", "int", low=1)
    # the same distance matrix as the spanning tree: an edge equal to eps stays inside
    raw = DBSCAN(eps=max(eps, 1e-12), min_samples=min_samples, metric="precomputed").fit_predict(
        cdist(pts, pts)
    )
    keys = np.array([f"c{r}" if r >= 0 else f"n{i}" for i, r in enumerate(raw)])
    return _first_appearance(keys)


def average_linkage(distances: np.ndarray, threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """(labels, merge heights) of average linkage (UPGMA) on a symmetric distance matrix, cut
    where the average distance between two groups exceeds `threshold`; labels numbered in order
    of first appearance, a client far from all is a singleton."""
    dist = check_array(distances, "distances", ndim=2, min_samples=2)
    check_scalar(threshold, "threshold", low=0)
    if dist.shape[0] != dist.shape[1] or not np.allclose(dist, dist.T):
        raise ValueError(f"distances must be a symmetric square matrix, got shape {dist.shape}")
    tree = linkage(squareform(dist, checks=False), method="average")
    return _first_appearance(fcluster(tree, threshold, criterion="distance")), tree[:, 2]


def silhouette_kmeans(
    points: np.ndarray, *, min_silhouette: float = 0.5, seed: int = 0
) -> np.ndarray:
    """The fallback for few clients: k-means for k = 2..n-1, keeping the k of best silhouette;
    one cluster when n < 3 or no k reaches `min_silhouette`."""
    pts = _points(points, "points")
    check_scalar(min_silhouette, "min_silhouette", low=-1.0, high=1.0)
    check_scalar(seed, "seed", "int", low=0)
    best, labels = min_silhouette, np.zeros(len(pts), dtype=np.int64)
    for k in range(2, len(pts)):
        cand = KMeans(n_clusters=k, n_init=10, random_state=seed).fit_predict(pts)
        if len(set(cand.tolist())) < 2:
            continue
        score = silhouette_score(pts, cand)
        if score > best:
            best, labels = score, cand
    return _first_appearance(labels)


def _centroids(scaled: np.ndarray, labels: np.ndarray) -> np.ndarray:
    return np.stack([scaled[labels == k].mean(axis=0) for k in range(int(labels.max()) + 1)])


@dataclass(frozen=True)
class Clustering:
    """What the server keeps: labels per training client, centroids in the scaled space, the
    scaler (for unseen clients), eps (knee method), which method ran and the `decision` it
    took (statistic, value, threshold)."""

    labels: np.ndarray
    centroids: np.ndarray
    scaler: BlockScaler
    eps: float | None
    method: str
    decision: Decision | None = None

    @property
    def n_clusters(self) -> int:
        return int(self.labels.max()) + 1

    @classmethod
    def from_labels(
        cls, descriptors: np.ndarray, marginal_size: int, labels: np.ndarray, method: str = "given"
    ) -> Clustering:
        """A clustering given by its labels (0..K-1, each used): the oracle, or a saved run."""
        d = _points(descriptors)
        labels = check_array(labels, "labels", dtype="int", shape=(len(d),))
        if labels.min() < 0 or set(labels.tolist()) != set(range(int(labels.max()) + 1)):
            raise ValueError("labels must number the clusters 0..K-1, each used")
        scaler = BlockScaler.fit(d, marginal_size)
        return cls(labels, _centroids(scaler.transform(d), labels), scaler, None, method)


def closest_height(heights: np.ndarray, threshold: float) -> float:
    """The merge height nearest the cut in ratio terms: the merge or split that came closest
    to going the other way."""
    h = np.maximum(np.asarray(heights, dtype=np.float64), 1e-12)
    return float(h[np.argmin(np.abs(np.log(h / threshold)))])


def _calibrated(
    d: np.ndarray, counts: np.ndarray, threshold: float, min_count: int, noise_scale: float
) -> tuple[np.ndarray, Decision]:
    ratios = noise_ratios(d, counts, min_count=min_count, noise_scale=noise_scale)
    labels, heights = average_linkage(ratios, threshold)
    k = int(labels.max()) + 1
    outcome = f"{k} cluster{'s' * (k > 1)}"
    return labels, Decision("noise ratio", closest_height(heights, threshold), threshold, outcome)


def _knee(
    scaled: np.ndarray, *, min_samples: int, eps_curve: str, min_knee: float
) -> tuple[np.ndarray, float, Decision]:
    curve = (
        spanning_tree_distances(scaled)
        if eps_curve == "mst"
        else nearest_neighbour_distances(scaled, min_samples)
    )
    value, strength = knee(curve)
    found = strength >= min_knee
    eps = value if found else float(curve[-1])
    labels = dbscan_with_singletons(scaled, eps, min_samples)
    outcome = "cut at the knee" if found else "no knee: one cluster"
    return labels, eps, Decision("knee strength", strength, min_knee, outcome)


def cluster_clients(
    descriptors: np.ndarray,
    marginal_size: int,
    *,
    counts: np.ndarray | None = None,
    method: str = "calibrated",
    threshold: float = 2.5,
    min_count: int = 3,
    noise_scale: float = 0.0,
    min_samples: int = 2,
    eps_curve: str = "mst",
    min_knee: float = 0.5,
    min_clients_for_knee: int = 8,
    seed: int = 0,
) -> Clustering:
    """Stage 3 in full. "calibrated": average linkage on `noise_ratios(descriptors, counts)`
    cut at `threshold` (needs `counts`, each client's samples per label). "knee": block
    scaling, eps at the knee of the sorted distances (`eps_curve` "mst" or the paper's
    "nearest"), DBSCAN with singleton noise; below `min_clients_for_knee` clients the logged
    silhouette k-means fallback. A close decision warns (`decisions.NEAR`)."""
    d = check_array(descriptors, "descriptors", ndim=2, min_samples=2)
    check_choice(method, "method", METHODS)
    check_choice(eps_curve, "eps_curve", ("mst", "nearest"))
    threshold = check_scalar(threshold, "threshold", "real", low=0, inclusive="neither")
    min_knee = check_scalar(min_knee, "min_knee", "real", low=0, high=1, inclusive="left")
    min_samples = check_scalar(min_samples, "min_samples", "int", low=2)
    min_clients_for_knee = check_scalar(min_clients_for_knee, "min_clients_for_knee", "int", low=2)
    check_scalar(seed, "seed", "int", low=0)
    scaler = BlockScaler.fit(d, marginal_size)
    scaled = scaler.transform(d)
    eps: float | None = None
    decision: Decision | None = None
    if method == "calibrated":
        if counts is None:
            raise ValueError("method='calibrated' needs counts: each client's samples per label")
        labels, decision = _calibrated(d, counts, threshold, min_count, noise_scale)
    elif len(d) >= max(min_clients_for_knee, min_samples + 1):
        labels, eps, decision = _knee(
            scaled, min_samples=min_samples, eps_curve=eps_curve, min_knee=min_knee
        )
    else:
        log.warning(
            "FLUX: %d clients are too few for a knee (< %d); clustering with silhouette k-means",
            len(d),
            min_clients_for_knee,
        )
        method, labels = "silhouette-kmeans", silhouette_kmeans(scaled, seed=seed)
    if decision is not None:
        decision.warn_if_close("clustering")
    return Clustering(labels, _centroids(scaled, labels), scaler, eps, method, decision)
