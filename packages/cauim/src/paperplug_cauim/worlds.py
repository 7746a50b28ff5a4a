"""Live-edge worlds of the independent cascade, drawn once and shared by every evaluation
(common random numbers): an arc is live in world r when U[r, arc] < p(arc). The nodes a seed
set activates in world r are those it reaches over live arcs."""

from __future__ import annotations

import numpy as np
from scipy import sparse
from scipy.sparse.csgraph import connected_components

from paperplug.checks import check_scalar, check_seed
from paperplug_cauim.network import DiffusionNetwork, check_network, check_nodes


class LiveEdgeWorlds:
    """`n_worlds` live-edge graphs of `network`, drawn from `seed`."""

    def __init__(self, network: DiffusionNetwork, n_worlds: int = 100, seed: int = 0) -> None:
        check_network(network)
        n_worlds = check_scalar(n_worlds, "n_worlds", "int", low=1)
        check_seed(seed, allow_none=False)
        self.network, self.n_worlds, self.seed = network, n_worlds, seed
        rng = np.random.default_rng(seed)
        n = network.n
        self.live: list[sparse.csr_matrix] = []
        for _ in range(n_worlds):
            keep = rng.random(network.n_arcs) < network.prob
            data = np.ones(int(keep.sum()), dtype=bool)
            graph = sparse.csr_matrix(
                (data, (network.source[keep], network.target[keep])), shape=(n, n)
            )
            graph.sum_duplicates()
            self.live.append(graph)
        self._reach: dict[int, sparse.csr_matrix] = {}

    def activated(self, seeds: np.ndarray, world: int) -> np.ndarray:
        """Boolean mask (n,) of the nodes `seeds` reach in `world` (seeds included)."""
        seeds = check_nodes(seeds, self.network.n, "seeds", min_len=0)
        return self._activated(seeds, self.check_world(world))

    def check_world(self, world: object) -> int:
        """`world` if it indexes one of the worlds (0..n_worlds-1), else an error naming it."""
        return check_scalar(world, "world", "int", low=0, high=self.n_worlds - 1)

    def _activated(self, seeds: np.ndarray, world: int) -> np.ndarray:
        graph = self.live[world]
        active = np.zeros(self.network.n, dtype=bool)
        frontier = np.unique(np.asarray(seeds, dtype=np.int64))
        active[frontier] = True
        while frontier.size:
            starts, ends = graph.indptr[frontier], graph.indptr[frontier + 1]
            if not (ends > starts).any():
                break
            nxt = np.concatenate([graph.indices[s:e] for s, e in zip(starts, ends, strict=True)])
            nxt = np.unique(nxt[~active[nxt]])
            active[nxt] = True
            frontier = nxt
        return active

    def reach_matrix(self, world: int) -> sparse.csr_matrix:
        """(n, n) boolean: row v holds the nodes v alone activates in `world` (v included).

        Strongly connected components share their reach, so the transitive closure is taken
        on the condensation (a DAG) by frontier expansion, then mapped back to nodes."""
        world = self.check_world(world)
        if world in self._reach:
            return self._reach[world]
        graph, n = self.live[world], self.network.n
        n_scc, label = connected_components(graph, directed=True, connection="strong")
        member = sparse.csr_matrix(
            (np.ones(n, dtype=bool), (np.arange(n), label)), shape=(n, n_scc)
        )
        dag = (member.T @ graph @ member).astype(bool).tocsr()
        dag.setdiag(False)
        dag.eliminate_zeros()
        closure = sparse.identity(n_scc, dtype=bool, format="csr")
        frontier = closure
        while frontier.nnz:
            frontier = (frontier @ dag).astype(bool)
            frontier = (frontier > closure).tocsr()  # newly reached only
            frontier.eliminate_zeros()
            closure = (closure + frontier).astype(bool).tocsr()
        reach = (member @ closure @ member.T).astype(bool).tocsr()
        self._reach[world] = reach
        return reach
