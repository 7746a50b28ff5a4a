"""The diffusion network: nodes 0..n−1, directed arcs with activation probabilities (an
undirected edge is two arcs), and each node's in-neighbours (whose activation is its exposure)."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

import networkx as nx
import numpy as np
from scipy import sparse


@dataclass
class DiffusionNetwork:
    """Arcs `source[a] → target[a]` with probability `prob[a]`; `labels[i]` names node i."""

    n: int
    source: np.ndarray  # (arcs,)
    target: np.ndarray  # (arcs,)
    prob: np.ndarray  # (arcs,)
    labels: list[Hashable]

    def __post_init__(self) -> None:
        if self.source.shape != self.target.shape or self.source.shape != self.prob.shape:
            raise ValueError("source, target and prob must have one entry per arc")
        if self.prob.size and (
            np.isnan(self.prob).any() or self.prob.min() < 0 or self.prob.max() > 1
        ):
            raise ValueError("activation probabilities must lie in [0, 1]")
        self.in_degree = np.bincount(self.target, minlength=self.n)
        # adjacency (n, n): A[u, v] = 1 for an arc u → v (exposure counts active in-neighbours)
        self.adjacency = sparse.csr_matrix(
            (np.ones(len(self.source), dtype=np.int32), (self.source, self.target)),
            shape=(self.n, self.n),
        )
        self.adjacency.sum_duplicates()
        self.adjacency.data[:] = 1

    @property
    def n_arcs(self) -> int:
        return len(self.source)

    def index(self, nodes: Any) -> np.ndarray:
        """Node labels → indices (raises naming an unknown node)."""
        lookup = {label: i for i, label in enumerate(self.labels)}
        try:
            return np.array([lookup[v] for v in nodes], dtype=np.int64)
        except KeyError as exc:
            raise ValueError(f"node {exc.args[0]!r} is not in the network") from exc


def from_networkx(graph: Any, p: float | str = 0.1) -> DiffusionNetwork:
    """A networkx Graph (each edge both ways) or DiGraph. `p`: one probability for every arc,
    the name of an edge attribute holding it, or "weighted_cascade" (1 / in-degree of the
    target, the usual IC weighting)."""
    if not isinstance(graph, nx.Graph):
        raise TypeError(f"graph must be a networkx graph, got {type(graph).__name__}")
    labels = list(graph.nodes)
    if not labels:
        raise ValueError("the graph has no nodes")
    index = {v: i for i, v in enumerate(labels)}
    edges = list(graph.edges(data=True))
    src, dst, attr = [], [], []
    for u, v, data in edges:
        if u == v:
            continue  # a self-loop activates nothing
        pairs = [(u, v)] if graph.is_directed() else [(u, v), (v, u)]
        for a, b in pairs:
            src.append(index[a])
            dst.append(index[b])
            if isinstance(p, str) and p != "weighted_cascade":
                if p not in data:
                    raise ValueError(f"edge ({u!r}, {v!r}) has no attribute {p!r}")
                attr.append(float(data[p]))
    source, target = np.array(src, dtype=np.int64), np.array(dst, dtype=np.int64)
    if p == "weighted_cascade":
        indeg = np.bincount(target, minlength=len(labels))
        prob = 1.0 / indeg[target]
    elif isinstance(p, str):
        prob = np.array(attr)
    else:
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 <= p <= 1:
            raise ValueError(
                f"p must be a probability, an edge attribute name or 'weighted_cascade', got {p!r}"
            )
        prob = np.full(len(source), float(p))
    return DiffusionNetwork(len(labels), source, target, prob, labels)
