"""The authors' contact process on hypergraphs: at each of `steps` rounds every active node
picks one of its hyperedges at random and activates each member with probability β. Its
causal objective is estimated by simulation with common random numbers (one random stream per
world, reused for every candidate set), for G-CauIM's greedy."""

from __future__ import annotations

import numpy as np
from scipy import sparse

from paperplug.checks import (
    check_array,
    check_callable,
    check_scalar,
    check_seed,
    check_sequence,
    check_type,
)
from paperplug_cauim.exposure import TauFn
from paperplug_cauim.network import check_nodes


class Hypergraph:
    """Nodes 0..n−1 and hyperedges given by an incidence matrix (n, m) or lists of members."""

    def __init__(self, incidence: object, n: int | None = None) -> None:
        check_scalar(n, "n", "int", low=1, allow_none=True)
        if sparse.issparse(incidence):
            H = sparse.csr_matrix(incidence, dtype=bool)
        elif isinstance(incidence, np.ndarray):
            H = sparse.csr_matrix(check_array(incidence, "incidence", ndim=2) != 0)
        else:
            edges = [
                sorted(
                    {
                        int(v)
                        for v in check_array(
                            e, f"incidence[{j}]", dtype="int", ndim=1, min_samples=0
                        )
                    }
                )
                for j, e in enumerate(check_sequence(incidence, "incidence", what="hyperedges"))
            ]
            largest = max((e[-1] for e in edges if e), default=-1)
            if min((e[0] for e in edges if e), default=0) < 0:
                raise ValueError("incidence must hold node indices >= 0")
            if n is not None and largest >= n:
                raise ValueError(f"incidence names node {largest}, but n={n}")
            size = n if n is not None else 1 + largest
            rows = [v for e in edges for v in e]
            cols = [j for j, e in enumerate(edges) for _ in e]
            H = sparse.csr_matrix(
                (np.ones(len(rows), bool), (rows, cols)), shape=(size, len(edges))
            )
        self.incidence, self.n = H, H.shape[0]
        self.members = sparse.csc_matrix(H)
        neighbours = (H.astype(np.int32) @ H.T.astype(np.int32)).tocsr()
        neighbours.setdiag(0)
        neighbours.eliminate_zeros()
        self.neighbours = neighbours.astype(bool).tocsr()
        self.degree = np.asarray(self.neighbours.sum(1)).ravel()

    def simulate(
        self, seeds: np.ndarray, beta: float, steps: int, rng: np.random.Generator
    ) -> np.ndarray:
        """Mask (n,) of the nodes active after `steps` rounds from `seeds`, drawn from `rng`."""
        seeds = check_nodes(seeds, self.n, "seeds", min_len=0)
        check_scalar(beta, "beta", "real", low=0.0, high=1.0, inclusive="right")
        check_scalar(steps, "steps", "int", low=1)
        check_type(
            rng, "rng", np.random.Generator, what="a numpy Generator (np.random.default_rng)"
        )
        return self._simulate(seeds, beta, steps, rng)

    def _simulate(
        self, seeds: np.ndarray, beta: float, steps: int, rng: np.random.Generator
    ) -> np.ndarray:
        active = np.zeros(self.n, dtype=bool)
        active[seeds] = True
        H, M = self.incidence, self.members
        for _ in range(steps):
            for v in np.flatnonzero(active):
                edges = H.indices[H.indptr[v] : H.indptr[v + 1]]
                if not len(edges):
                    continue
                e = edges[rng.integers(len(edges))]
                members = M.indices[M.indptr[e] : M.indptr[e + 1]]
                active[members[rng.random(len(members)) < beta]] = True
        return active


class HypergraphObjective:
    """σ_τ(S) on the contact process, averaged over `n_worlds` seeded simulations."""

    def __init__(self, hypergraph: Hypergraph, tau: TauFn, *, beta: float = 0.01, steps: int = 25,
                 n_worlds: int = 100, seed: int = 0, exclude_seeds: bool = True) -> None:  # fmt: skip
        check_type(hypergraph, "hypergraph", Hypergraph)
        check_callable(tau, "tau", what="function tau(nodes, exposures)")
        check_seed(seed, allow_none=False)
        check_type(exclude_seeds, "exclude_seeds", (bool, np.bool_), what="True or False")
        check_scalar(beta, "beta", "real", low=0.0, high=1.0, inclusive="right")
        check_scalar(steps, "steps", "int", low=1)
        check_scalar(n_worlds, "n_worlds", "int", low=1)
        self.hypergraph, self.tau, self.beta, self.steps = hypergraph, tau, beta, steps
        self.world_seeds = np.random.SeedSequence(seed).generate_state(n_worlds)
        self.exclude_seeds = exclude_seeds
        self.network = hypergraph  # g_cauim reads network.n

    def world_value(self, seeds: np.ndarray, world: int) -> float:
        """σ_τ(`seeds`) in one simulated world (0..n_worlds-1)."""
        seeds = np.unique(check_nodes(seeds, self.hypergraph.n, "seeds", min_len=0))
        high = len(self.world_seeds) - 1
        return self._world_value(seeds, check_scalar(world, "world", "int", low=0, high=high))

    def _world_value(self, seeds: np.ndarray, world: int) -> float:
        rng = np.random.default_rng(self.world_seeds[world])
        active = self.hypergraph._simulate(seeds, self.beta, self.steps, rng)
        nodes = np.flatnonzero(active)
        counts = np.asarray(self.hypergraph.neighbours[nodes][:, nodes].sum(0)).ravel()
        degree = self.hypergraph.degree[nodes]
        e = np.divide(counts, degree, out=np.zeros(len(nodes)), where=degree > 0)
        values = self.tau(nodes, e)
        if self.exclude_seeds:
            values = values[~np.isin(nodes, seeds)]
        return float(values.sum())

    def value(self, seeds: np.ndarray) -> tuple[float, float]:
        """(mean over worlds, standard error) of σ_τ(`seeds`) (node indices)."""
        seeds = np.unique(check_nodes(seeds, self.hypergraph.n, "seeds", min_len=0))
        per_world = np.array([self._world_value(seeds, r) for r in range(len(self.world_seeds))])
        return float(per_world.mean()), float(per_world.std(ddof=1) / np.sqrt(len(per_world)))

    def singleton_values(self) -> np.ndarray:
        return np.array([self.value(np.array([v]))[0] for v in range(self.hypergraph.n)])

    def start(self) -> _Recomputing:
        return _Recomputing(self)


class _Recomputing:
    """Gains by re-simulating S + v on the same random streams (no incremental shortcut)."""

    def __init__(self, objective: HypergraphObjective) -> None:
        self.objective, self.seeds, self.current = objective, [], 0.0

    def gain(self, v: int) -> float:
        return self.objective.value(np.array([*self.seeds, v]))[0] - self.current

    def add(self, v: int) -> float:
        gain = self.gain(v)
        self.seeds.append(int(v))
        self.current += gain
        return gain
