"""The diffusion network: nodes 0..n−1, directed arcs with activation probabilities (an
undirected edge is two arcs), and each node's in-neighbours (whose activation is its exposure)."""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass
from typing import Any

import networkx as nx
import numpy as np
from scipy import sparse

from paperplug.checks import (
    check_array,
    check_graph,
    check_scalar,
    check_sequence,
    check_type,
)


@dataclass
class DiffusionNetwork:
    """Arcs `source[a] → target[a]` with probability `prob[a]` (kept sorted by source, then
    target); `labels[i]` names node i."""

    n: int
    source: np.ndarray  # (arcs,)
    target: np.ndarray  # (arcs,)
    prob: np.ndarray  # (arcs,)
    labels: list[Hashable]

    def __post_init__(self) -> None:
        self.n = check_scalar(self.n, "n", "int", low=0)
        self.source = check_nodes(self.source, self.n, "source", min_len=0)
        self.target = check_nodes(self.target, self.n, "target", min_len=0)
        self.prob = check_array(self.prob, "prob", ndim=1, min_samples=0)
        if self.source.shape != self.target.shape or self.source.shape != self.prob.shape:
            raise ValueError("source, target and prob must have one entry per arc")
        _check_range(self.prob, "prob")
        self.labels = check_sequence(self.labels, "labels", min_len=0)
        if len(self.labels) != self.n:
            raise ValueError(f"labels has {len(self.labels)} entries for n={self.n} nodes")
        # arcs in (source, target) order: the same arcs from any input (networkx, sparse, in
        # any order) give the same network, so the same seed draws the same worlds
        order = np.lexsort((self.target, self.source))
        self.source, self.target, self.prob = (
            self.source[order],
            self.target[order],
            self.prob[order],
        )
        # adjacency (n, n): A[u, v] = 1 when some arc u → v exists. Parallel arcs (a
        # multigraph) each get their own chance to activate, but a neighbour is counted once
        # in the exposure: e_v = distinct active in-neighbours / distinct in-neighbours.
        self.adjacency = sparse.csr_matrix(
            (np.ones(len(self.source), dtype=np.int32), (self.source, self.target)),
            shape=(self.n, self.n),
        )
        self.adjacency.sum_duplicates()
        self.adjacency.data[:] = 1
        self.in_neighbours = self.adjacency.tocsc()  # column v: v's distinct in-neighbours
        self.in_degree = np.diff(self.in_neighbours.indptr)

    @property
    def n_arcs(self) -> int:
        return len(self.source)

    def index(self, nodes: Any) -> np.ndarray:
        """Node labels → indices (raises naming an unknown node)."""
        if isinstance(nodes, (str, bytes)) or not isinstance(nodes, Iterable):
            raise TypeError(f"nodes must be a list of node labels, got {type(nodes).__name__}")
        lookup = {label: i for i, label in enumerate(self.labels)}
        try:
            return np.array([lookup[v] for v in nodes], dtype=np.int64)
        except KeyError as exc:
            raise ValueError(f"nodes: node {exc.args[0]!r} is not in the network") from exc
        except TypeError as exc:  # an unhashable label
            raise TypeError(f"nodes must hold node labels (hashable): {exc}") from exc


def check_network(value: Any, name: str = "network") -> DiffusionNetwork:
    """`value` if it is a DiffusionNetwork, else a TypeError naming `name`."""
    return check_type(
        value, name, DiffusionNetwork, what="a DiffusionNetwork (see from_networkx, to_network)"
    )


def check_nodes(value: Any, n: int, name: str, *, min_len: int = 1) -> np.ndarray:
    """`value` as node indices (a 1-D int array in 0..n-1, at least `min_len` of them); errors
    name `name`."""
    nodes = check_array(value, name, dtype="int", ndim=1, min_samples=min_len)
    if nodes.size and (nodes.min() < 0 or nodes.max() >= n):
        raise ValueError(
            f"{name} must hold node indices in 0..{n - 1} (of n={n} nodes), got values in "
            f"[{nodes.min()}, {nodes.max()}]"
        )
    return nodes


def check_name(name: Any) -> str:
    """How errors call the caller's argument: a non-empty string."""
    if not isinstance(name, str) or not name:
        raise TypeError(f"name must be a non-empty string (the argument's name), got {name!r}")
    return name


def _probabilities(p: Any, target: np.ndarray, n: int, name: str = "p") -> np.ndarray | None:
    """Each arc's probability for a constant `p` or "weighted_cascade" (None: read per arc)."""
    if p == "weighted_cascade":
        indeg = np.bincount(target, minlength=n)
        return 1.0 / indeg[target]
    if isinstance(p, str):
        return None
    check_scalar(p, name, "real", low=0.0, high=1.0)
    return np.full(len(target), float(p))


def from_networkx(graph: Any, p: float | str = 0.1, *, name: str = "graph") -> DiffusionNetwork:
    """A networkx Graph (each edge both ways), DiGraph or multigraph (each parallel edge an arc
    of its own). `p`: one probability for every arc, the name of an edge attribute holding
    it, or "weighted_cascade" (1 / in-degree of the target, the usual IC weighting)."""
    check_graph(graph, check_name(name))
    check_type(
        p,
        "p",
        (int, float, str),
        what="a probability, an edge attribute name or 'weighted_cascade'",
    )
    labels = list(graph.nodes)
    index = {v: i for i, v in enumerate(labels)}
    src, dst, attr = [], [], []
    for u, v, data in graph.edges(data=True):
        if u == v:
            continue  # a self-loop activates nothing
        pairs = [(u, v)] if graph.is_directed() else [(u, v), (v, u)]
        for a, b in pairs:
            src.append(index[a])
            dst.append(index[b])
            if isinstance(p, str) and p != "weighted_cascade":
                if p not in data:
                    raise ValueError(f"{name}: edge ({u!r}, {v!r}) has no attribute p={p!r}")
                attr.append(data[p])
    source, target = np.array(src, dtype=np.int64), np.array(dst, dtype=np.int64)
    prob = _probabilities(p, target, len(labels))
    if prob is None:
        prob = check_array(
            np.array(attr, dtype=object).astype(float) if attr else np.zeros(0),
            f"{name}'s edge attribute {p!r}",
            ndim=1,
            min_samples=0,
        )
        _check_range(prob, f"{name}'s edge attribute {p!r} (p)")
    return DiffusionNetwork(len(labels), source, target, prob, labels)


def from_scipy(
    adjacency: Any, p: float | str = 0.1, *, name: str = "adjacency"
) -> DiffusionNetwork:
    """A scipy sparse (n, n) adjacency: a stored entry (u, v) is an arc u → v (store both
    entries for an undirected edge; a duplicate entry is a parallel arc). `p`: one probability
    for every arc, "weight" (the stored values are the probabilities) or "weighted_cascade".
    Nodes are labelled 0..n−1. The matrix is read, never modified."""
    check_name(name)
    if not sparse.issparse(adjacency):
        raise TypeError(f"{name} must be a scipy sparse matrix, got {type(adjacency).__name__}")
    rows, cols = adjacency.shape
    if rows != cols or rows == 0:
        raise ValueError(
            f"{name} must be a non-empty square (n, n) adjacency, got shape {adjacency.shape}"
        )
    check_type(p, "p", (int, float, str), what="a probability, 'weight' or 'weighted_cascade'")
    coo = sparse.coo_matrix(adjacency, copy=True)
    values = check_array(coo.data, f"{name}'s stored values", ndim=1, min_samples=0)
    keep = (values != 0) & (coo.row != coo.col)  # explicit zeros and self-loops carry nothing
    source, target = coo.row[keep].astype(np.int64), coo.col[keep].astype(np.int64)
    prob = _probabilities(p, target, rows)
    if prob is None:
        if p != "weight":
            raise ValueError(
                f"p must be a probability, 'weight' or 'weighted_cascade' for a sparse {name}, got {p!r}"
            )
        prob = values[keep]
        _check_range(prob, f"{name}'s stored values (p='weight')")
    return DiffusionNetwork(rows, source, target, prob, list(range(rows)))


def to_network(graph: Any, p: float | str = 0.1, *, name: str = "graph") -> DiffusionNetwork:
    """A DiffusionNetwork from a networkx graph or a scipy sparse adjacency."""
    check_name(name)
    if sparse.issparse(graph):
        return from_scipy(graph, p, name=name)
    if not isinstance(graph, nx.Graph):
        raise TypeError(
            f"{name} must be a networkx graph or a scipy sparse adjacency, got {type(graph).__name__}"
        )
    return from_networkx(graph, p, name=name)


def _check_range(prob: np.ndarray, name: str) -> None:
    if prob.size and not ((prob >= 0) & (prob <= 1)).all():  # NaN fails too
        raise ValueError(
            f"{name} must be activation probabilities in [0, 1], got values in [{np.nanmin(prob):.3g}, {np.nanmax(prob):.3g}]{' and NaN' if np.isnan(prob).any() else ''}"
        )
