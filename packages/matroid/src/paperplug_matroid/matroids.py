"""Matroids on a ground set of agents 0..n-1, given by their rank function (paper §2).

An allocation is an independent set: the agents served. Transversal matroids (agents matched
to resources in a bipartite graph; rank = maximum matching) are the paper's running example;
graphic, uniform and partition matroids and any user rank oracle work the same way.
"""

from __future__ import annotations

import itertools
import numbers
from collections import deque
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any

import numpy as np

from paperplug.checks import check_graph, check_scalar, check_sequence, check_type


class Matroid:
    """A matroid on elements 0..n-1 known by its rank oracle `rank(set of elements)`.

    `labels[i]` names element i (an agent, an edge). Subclasses override `rank` and, where
    a faster one exists, `greedy` (a maximal independent set built in a given order)."""

    size_name = "n"  # what sets the ground set's size, for messages

    def __init__(self, n: int, labels: Sequence[Hashable] | None = None) -> None:
        self.n = check_scalar(n, "n", "int", low=0)
        if labels is None:
            self.labels: list[Hashable] = list(range(self.n))
        else:
            self.labels = check_sequence(labels, "labels", min_len=0)
            if len(self.labels) != self.n:
                raise ValueError(
                    f"labels has {len(self.labels)} entries for {self.n} elements "
                    f"({self.size_name})"
                )

    def rank(self, elements: Iterable[int]) -> int:
        raise NotImplementedError

    def _elements(self, elements: Iterable[int], name: str = "elements") -> list[int]:
        if isinstance(elements, (str, bytes)) or not isinstance(elements, Iterable):
            raise TypeError(
                f"{name} must be an iterable of element indices, got {type(elements).__name__}"
            )
        items = list(elements)
        wrong = [e for e in items if isinstance(e, bool) or not isinstance(e, numbers.Integral)]
        if wrong:
            raise TypeError(f"{name} must hold int element indices, got {wrong[0]!r}")
        out = sorted({int(e) for e in items})
        if out and not 0 <= out[0] <= out[-1] < self.n:
            raise ValueError(f"{name} must lie in 0..{self.n - 1}, got {out[0]}..{out[-1]}")
        return out

    def _circuit_args(self, independent: Sequence[int], e: int) -> tuple[list[int], int]:
        """`circuit`'s arguments checked: an independent set of elements and one element."""
        items = self._elements(independent, "independent")
        if isinstance(e, bool) or not isinstance(e, numbers.Integral):
            raise TypeError(f"e must be an int element index, got {type(e).__name__}")
        if not 0 <= e < self.n:
            raise ValueError(f"e must lie in 0..{self.n - 1}, got {e}")
        if self.rank(items) != len(items):
            raise ValueError("independent must be an independent set of the matroid")
        return items, int(e)

    def is_independent(self, elements: Iterable[int]) -> bool:
        items = self._elements(elements)
        return self.rank(items) == len(items)

    def extension(self) -> Extension:
        """An empty independent set that grows one element at a time (`add(e) -> bool`): the
        incremental independence oracle behind greedy and matroid intersection."""
        return Extension(self)

    def greedy(self, order: Iterable[int]) -> list[int]:
        """The greedy independent set: each element in `order` kept if it raises the rank.
        It is a maximal independent set of the elements visited (matroid greedy)."""
        if isinstance(order, (str, bytes)) or not isinstance(order, Iterable):
            raise TypeError(
                f"order must be an iterable of element indices, got {type(order).__name__}"
            )
        visits = list(order)
        self._elements(visits, "order")  # ints in range (a repeat is visited, and kept once)
        grown = self.extension()
        return [int(e) for e in visits if grown.add(int(e))]

    def span(self, elements: Iterable[int]) -> np.ndarray:
        """Boolean mask of the closure of `elements`: e is in it when r(J + e) = r(J)."""
        items = self._elements(elements)
        base = self.rank(items)
        mask = np.zeros(self.n, dtype=bool)
        mask[items] = True
        for e in np.flatnonzero(~mask):
            mask[e] = self.rank([*items, int(e)]) == base
        return mask

    def circuit(self, independent: Sequence[int], e: int) -> list[int]:
        """The elements y of the independent set with I − y + e independent: the fundamental
        circuit of e less e (empty when I + e is independent)."""
        items, e = self._circuit_args(independent, e)
        if self.rank([*items, e]) > len(items):
            return []
        return [y for y in items if self.rank([x for x in items if x != y] + [e]) == len(items)]

    def __repr__(self) -> str:
        return f"{type(self).__name__}(n={self.n})"


class Extension:
    """An independent set grown element by element through rank calls (any matroid)."""

    def __init__(self, matroid: Matroid) -> None:
        self.matroid = matroid
        self.elements: list[int] = []

    def add(self, e: int) -> bool:
        """Keep e when the set stays independent; say whether it was kept."""
        if self.matroid.rank([*self.elements, e]) > len(self.elements):
            self.elements.append(e)
            return True
        return False


class _MatchingExtension(Extension):
    """Agents kept while an augmenting path from each new one exists (Kuhn)."""

    def __init__(self, matroid: TransversalMatroid) -> None:
        super().__init__(matroid)
        self.owner = np.full(matroid.n_resources, -1)  # resource -> agent holding it

    def add(self, e: int) -> bool:
        if self.matroid._augment(e, self.owner, set()):
            self.elements.append(e)
            return True
        return False


class TransversalMatroid(Matroid):
    """Agents (rows) matched to resources (columns) of a bipartite biadjacency matrix: a set of
    agents is independent when all of them can be matched at once (rank = maximum matching)."""

    size_name = "the rows of biadjacency"

    def __init__(self, biadjacency: Any, labels: Sequence[Hashable] | None = None) -> None:
        from scipy import sparse

        if sparse.issparse(biadjacency):
            matrix = sparse.csr_matrix(biadjacency, dtype=np.int8, copy=True)
        else:
            dense = np.asarray(biadjacency)
            if dense.ndim != 2:
                raise ValueError(
                    f"biadjacency must be 2-D (agents × resources), got shape {dense.shape}"
                )
            if dense.dtype.kind not in "biuf" or (
                dense.dtype.kind == "f" and np.isnan(dense).any()
            ):
                raise TypeError(
                    "biadjacency must hold numbers (non-zero = agent may take resource)"
                )
            matrix = sparse.csr_matrix(dense != 0, dtype=np.int8)
        matrix.eliminate_zeros()
        matrix.data[:] = 1
        super().__init__(matrix.shape[0], labels)
        self.biadjacency = matrix
        self.n_resources = matrix.shape[1]
        self._neighbours = [
            matrix.indices[matrix.indptr[i] : matrix.indptr[i + 1]] for i in range(self.n)
        ]

    def rank(self, elements: Iterable[int]) -> int:
        """Maximum matching of the agents `elements` (scipy's Hopcroft–Karp)."""
        from scipy.sparse.csgraph import maximum_bipartite_matching

        items = self._elements(elements)
        if not items or self.n_resources == 0:
            return 0
        sub = self.biadjacency[items]
        if sub.nnz == 0:
            return 0
        match = maximum_bipartite_matching(sub, perm_type="column")
        return int((match >= 0).sum())

    def extension(self) -> Extension:
        """Kuhn's augmenting paths, one agent at a time: an agent is kept when an augmenting
        path from it exists, which is exactly the matroid greedy step."""
        return _MatchingExtension(self)

    def span(self, elements: Iterable[int]) -> np.ndarray:
        """Agents with no augmenting path to a free resource once `elements` are matched: a
        resource is reachable when free or held by an agent adjacent to a reachable one."""
        grown = self.extension()
        items = self._elements(elements)
        for agent in items:  # a maximal independent subset has the same closure
            grown.add(agent)
        owner, columns = grown.owner, self.biadjacency.tocsc()
        held = np.full(self.n, -1)  # agent -> its resource
        held[owner[owner >= 0]] = np.flatnonzero(owner >= 0)
        reachable = owner < 0
        queue = deque(np.flatnonzero(reachable).tolist())
        while queue:
            r = queue.popleft()
            for agent in columns.indices[columns.indptr[r] : columns.indptr[r + 1]]:
                r_held = held[agent]
                if r_held >= 0 and not reachable[r_held]:
                    reachable[r_held] = True
                    queue.append(int(r_held))
        free = np.asarray(self.biadjacency[:, reachable].sum(axis=1)).ravel() > 0
        mask = ~free
        mask[items] = True
        return mask

    def matching(self, agents: Iterable[int]) -> dict[int, int]:
        """A matching {agent: resource} covering `agents` (they must be independent)."""
        owner = np.full(self.n_resources, -1)
        for agent in self._elements(agents, "agents"):
            if not self._augment(agent, owner, set()):
                raise ValueError(f"agents are not independent: agent {agent} cannot be matched")
        return {int(a): int(r) for r, a in enumerate(owner) if a >= 0}

    def _augment(self, agent: int, owner: np.ndarray, seen: set[int]) -> bool:
        stack = [(agent, iter(self._neighbours[agent]))]
        path: list[tuple[int, int]] = []  # (agent, resource) edges of the current path
        while stack:
            current, neighbours = stack[-1]
            for r in neighbours:
                r = int(r)
                if r in seen:
                    continue
                seen.add(r)
                path.append((current, r))
                if owner[r] < 0:
                    for a, res in path:
                        owner[res] = a
                    return True
                stack.append((int(owner[r]), iter(self._neighbours[int(owner[r])])))
                break
            else:
                stack.pop()
                if path:
                    path.pop()
        return False

    @classmethod
    def from_graph(cls, graph: Any, agents: Iterable[Hashable] | None = None) -> TransversalMatroid:
        """From a networkx bipartite graph: agents are the nodes with `bipartite == 0` (or the
        `agents` given), resources the others; node order is the graph's insertion order."""
        check_graph(graph, "graph", min_nodes=0)
        if agents is None:
            agents = [v for v, side in graph.nodes(data="bipartite") if side == 0]
            if not agents:
                raise ValueError(
                    "no agent nodes: mark agents with bipartite=0 or pass agents=[...]"
                )
        agents = check_sequence(agents, "agents")
        try:
            missing = [a for a in agents if a not in graph]
        except TypeError as exc:  # an unhashable node
            raise TypeError(f"agents must hold graph nodes: {exc}") from exc
        if missing:
            raise ValueError(f"agents not in the graph: {missing[:5]}")
        agent_set = set(agents)
        resources = [v for v in graph.nodes if v not in agent_set]
        col = {v: j for j, v in enumerate(resources)}
        matrix = np.zeros((len(agents), len(resources)), dtype=np.int8)
        for i, a in enumerate(agents):
            for v in graph.neighbors(a):
                if v in agent_set:
                    raise ValueError(
                        f"agents {a!r} and {v!r} are adjacent: the graph is not bipartite as given"
                    )
                matrix[i, col[v]] = 1
        return cls(matrix, labels=agents)


class _ForestExtension(Extension):
    """Edges kept while they join two trees (union-find with path halving)."""

    def __init__(self, matroid: GraphicMatroid) -> None:
        super().__init__(matroid)
        self.parent = list(range(matroid.n_vertices))

    def _find(self, x: int) -> int:
        parent = self.parent
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def add(self, e: int) -> bool:
        ru, rv = self._find(self.matroid.tails[e]), self._find(self.matroid.heads[e])
        if ru == rv:
            return False
        self.parent[ru] = rv
        self.elements.append(e)
        return True


class GraphicMatroid(Matroid):
    """Edges of a graph; a set of edges is independent when it has no cycle (rank = vertices
    spanned minus connected components)."""

    def __init__(self, edges: Any) -> None:
        if hasattr(edges, "edges"):
            pairs = list(edges.edges())
        else:
            items = check_sequence(edges, "edges", min_len=0, what="pairs (u, v)")
            if any(isinstance(e, (str, bytes)) or not isinstance(e, Iterable) for e in items):
                raise TypeError("edges must be pairs (u, v)")
            pairs = [tuple(e) for e in items]
        if any(len(p) != 2 for p in pairs):
            raise ValueError("edges must be pairs (u, v)")
        try:
            {x for p in pairs for x in p}  # vertices must be hashable
        except TypeError as exc:
            raise TypeError(f"edges must join hashable vertices: {exc}") from exc
        super().__init__(len(pairs), labels=pairs)
        self.endpoints = pairs
        index: dict[Hashable, int] = {}
        ends = np.array(
            [[index.setdefault(x, len(index)) for x in p] for p in pairs], dtype=np.intp
        )
        ends = ends.reshape(-1, 2)
        self.n_vertices = len(index)
        self.tails, self.heads = ends[:, 0].tolist(), ends[:, 1].tolist()
        self._ends = ends

    def rank(self, elements: Iterable[int]) -> int:
        grown = self.extension()
        return sum(grown.add(e) for e in self._elements(elements))

    def extension(self) -> Extension:
        """Union-find: an edge is kept when its ends lie in different trees."""
        return _ForestExtension(self)

    def _components(self, elements: list[int]) -> np.ndarray:
        from scipy.sparse import coo_matrix
        from scipy.sparse.csgraph import connected_components

        ends = self._ends[elements]
        graph = coo_matrix(
            (np.ones(len(elements)), (ends[:, 0], ends[:, 1])),
            shape=(self.n_vertices, self.n_vertices),
        )
        return connected_components(graph, directed=False)[1]

    def span(self, elements: Iterable[int]) -> np.ndarray:
        """Edges whose ends the forest of `elements` already connects (scipy components)."""
        items = self._elements(elements)
        component = self._components(items)
        mask = component[self._ends[:, 0]] == component[self._ends[:, 1]]
        mask[items] = True
        return mask

    def circuit(self, independent: Sequence[int], e: int) -> list[int]:
        """The path of the forest between the ends of e (breadth-first search in the forest)."""
        items, e = self._circuit_args(independent, e)
        adjacent: dict[int, list[tuple[int, int]]] = {}
        for y in items:
            u, v = self.tails[y], self.heads[y]
            adjacent.setdefault(u, []).append((v, y))
            adjacent.setdefault(v, []).append((u, y))
        start, goal = self.tails[e], self.heads[e]
        if start == goal:
            return []
        via: dict[int, tuple[int, int] | None] = {start: None}
        queue = deque([start])
        while queue and goal not in via:
            u = queue.popleft()
            for v, y in adjacent.get(u, ()):
                if v not in via:
                    via[v] = (u, y)
                    queue.append(v)
        path, node = [], goal
        while node in via and via[node] is not None:
            node, y = via[node]
            path.append(y)
        return sorted(path) if goal in via else []


class UniformMatroid(Matroid):
    """Any set of at most `k` elements is independent (k identical resources)."""

    def __init__(self, n: int, k: int) -> None:
        super().__init__(n)
        self.k = check_scalar(k, "k", "int", low=0)

    def rank(self, elements: Iterable[int]) -> int:
        return min(len(self._elements(elements)), self.k)

    def extension(self) -> Extension:
        """A counter: elements kept until there are k."""
        return _CountExtension(self)

    def span(self, elements: Iterable[int]) -> np.ndarray:
        items = self._elements(elements)
        mask = np.full(self.n, len(items) >= self.k)
        mask[items] = True
        return mask

    def circuit(self, independent: Sequence[int], e: int) -> list[int]:
        items, e = self._circuit_args(independent, e)
        return items if len(items) >= self.k else []


class _CountExtension(Extension):
    """Elements kept until there are k of them."""

    def add(self, e: int) -> bool:
        if len(self.elements) >= self.matroid.k:
            return False
        self.elements.append(e)
        return True


class PartitionMatroid(Matroid):
    """Elements in blocks, at most `capacities[b]` from block b (resources of types)."""

    def __init__(self, blocks: Sequence[int], capacities: Sequence[int]) -> None:
        blocks = np.asarray(blocks)
        caps = np.asarray(capacities)
        if blocks.ndim != 1 or blocks.dtype.kind not in "iu":
            raise ValueError("blocks must be a 1-D array of block indices")
        if caps.ndim != 1 or caps.dtype.kind not in "iu" or (caps < 0).any():
            raise ValueError("capacities must be non-negative integers")
        if blocks.size and not 0 <= blocks.min() <= blocks.max() < len(caps):
            raise ValueError(f"blocks must lie in 0..{len(caps) - 1} (indices of capacities)")
        super().__init__(len(blocks))
        self.blocks, self.capacities = blocks.copy(), caps.copy()

    def rank(self, elements: Iterable[int]) -> int:
        counts = np.bincount(self.blocks[self._elements(elements)], minlength=len(self.capacities))
        return int(np.minimum(counts, self.capacities).sum())

    def extension(self) -> Extension:
        """Block counters: an element is kept while its block has room."""
        return _BlockExtension(self)

    def span(self, elements: Iterable[int]) -> np.ndarray:
        """Every element of a block `elements` fill to capacity, and `elements` themselves."""
        items = self._elements(elements)
        counts = np.bincount(self.blocks[items], minlength=len(self.capacities))
        mask = (counts >= self.capacities)[self.blocks]
        mask[items] = True
        return mask

    def circuit(self, independent: Sequence[int], e: int) -> list[int]:
        items, e = self._circuit_args(independent, e)
        same = [y for y in items if self.blocks[y] == self.blocks[e]]
        return same if len(same) >= self.capacities[self.blocks[e]] else []


class _BlockExtension(Extension):
    """Elements kept while their block has room."""

    def __init__(self, matroid: PartitionMatroid) -> None:
        super().__init__(matroid)
        self.room = matroid.capacities.astype(int).tolist()

    def add(self, e: int) -> bool:
        block = int(self.matroid.blocks[e])
        if self.room[block] <= 0:
            return False
        self.room[block] -= 1
        self.elements.append(e)
        return True


class RankOracleMatroid(Matroid):
    """A user's matroid: `rank_fn(frozenset of elements) -> int`. On ground sets of at most
    `check_up_to` elements the matroid rank axioms are checked at construction."""

    def __init__(
        self,
        n: int,
        rank_fn: Callable[[frozenset[int]], int],
        *,
        labels: Sequence[Hashable] | None = None,
        check_up_to: int = 10,
    ) -> None:
        if not callable(rank_fn):
            raise TypeError(f"rank_fn must be callable, got {type(rank_fn).__name__}")
        check_up_to = check_scalar(check_up_to, "check_up_to", "int", low=0)
        super().__init__(n, labels)
        self.rank_fn = rank_fn
        if self.n <= check_up_to:
            check_matroid_axioms(self)

    def rank(self, elements: Iterable[int]) -> int:
        value = self.rank_fn(frozenset(self._elements(elements)))
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"rank_fn must return an int, got {type(value).__name__}")
        return int(value)


def check_matroid_axioms(matroid: Matroid) -> None:
    """Raise ValueError unless r(∅) = 0, r(A) ≤ |A|, r(A + e) − r(A) ∈ {0, 1} and
    r(A + e) + r(A + f) ≥ r(A + e + f) + r(A) for every A and e, f (exhaustive: 2^n sets)."""
    n = check_type(matroid, "matroid", Matroid).n
    if n > 16:
        raise ValueError(f"an exhaustive check needs n ≤ 16, got {n}")
    rank = {}
    for size in range(n + 1):
        for subset in itertools.combinations(range(n), size):
            rank[frozenset(subset)] = matroid.rank(subset)
    if rank[frozenset()] != 0:
        raise ValueError(f"not a matroid rank: r(∅) = {rank[frozenset()]}, not 0")
    for subset, r in rank.items():
        if not 0 <= r <= len(subset):
            raise ValueError(f"not a matroid rank: r({sorted(subset)}) = {r} outside [0, |A|]")
        outside = [e for e in range(n) if e not in subset]
        for e in outside:
            step = rank[subset | {e}] - r
            if step not in (0, 1):
                raise ValueError(
                    f"not a matroid rank: adding {e} to {sorted(subset)} changes the rank by {step}"
                )
        for e, f in itertools.combinations(outside, 2):
            if rank[subset | {e}] + rank[subset | {f}] < rank[subset | {e, f}] + r:
                raise ValueError(
                    f"not a matroid rank: submodularity fails at A={sorted(subset)}, e={e}, f={f}"
                )


def as_matroid(obj: Any) -> Matroid:
    """A Matroid from what users bring: a Matroid; a networkx bipartite graph (agents marked
    bipartite=0); a scipy sparse or numpy agents × resources biadjacency matrix."""
    return matroid_argument(obj, "obj")


def matroid_argument(obj: Any, name: str) -> Matroid:
    """`as_matroid` for the argument `name`: its errors name it as the caller wrote it."""
    import networkx as nx
    from scipy import sparse

    if isinstance(obj, Matroid):
        return obj
    if not (
        isinstance(obj, nx.Graph) or sparse.issparse(obj) or isinstance(obj, (np.ndarray, list))
    ):
        raise TypeError(
            f"{name} must be a Matroid, a networkx bipartite graph or an agents × resources "
            f"biadjacency matrix, got {type(obj).__name__}"
        )
    try:
        if isinstance(obj, nx.Graph):
            return TransversalMatroid.from_graph(obj)
        return TransversalMatroid(obj)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"{name}: {exc}") from exc
