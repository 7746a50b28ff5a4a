"""The causal objective σ_τ(S) = E_worlds[Σ_{i ∈ A(S) \\ S} τ_i(e_i(A(S)))] (paper §3): the
summed individual effects of the nodes a campaign activates, each at its final exposure,
seeds excluded as the authors do (`exclude_seeds=False` counts them: the monotone
submodular case when τ ≥ 0 is constant).

Estimated on shared live-edge worlds (common random numbers), so every candidate set is
compared on the same cascades. Singletons are valued for all nodes at once from each world's
reach matrix; a growing seed set is valued incrementally, world by world.
"""

from __future__ import annotations

import numpy as np
from scipy.sparse import vstack as sparse_vstack

from paperplug.checks import check_callable, check_type
from paperplug_cauim.exposure import TauFn
from paperplug_cauim.indexing import concat_ranges
from paperplug_cauim.network import DiffusionNetwork, check_network, check_nodes
from paperplug_cauim.worlds import LiveEdgeWorlds


def _exposures(network: DiffusionNetwork, nodes: np.ndarray, counts: np.ndarray) -> np.ndarray:
    degree = network.in_degree[nodes]
    return np.divide(counts, degree, out=np.zeros(len(nodes)), where=degree > 0)


class CausalObjective:
    """σ_τ on fixed worlds; `tau(nodes, exposures)` is vectorised (an ExposureGrid or the truth)."""

    def __init__(
        self,
        network: DiffusionNetwork,
        tau: TauFn,
        worlds: LiveEdgeWorlds,
        *,
        exclude_seeds: bool = True,
    ) -> None:
        check_network(network)
        check_callable(tau, "tau", what="function tau(nodes, exposures)")
        check_type(worlds, "worlds", LiveEdgeWorlds)
        check_type(exclude_seeds, "exclude_seeds", (bool, np.bool_), what="True or False")
        if worlds.network is not network:
            raise ValueError("worlds were drawn on another network")
        self.network, self.tau, self.worlds, self.exclude_seeds = (
            network,
            tau,
            worlds,
            exclude_seeds,
        )

    def world_value(self, seeds: np.ndarray, world: int) -> float:
        """The causal gain of `seeds` (node indices) in one world (0..n_worlds-1)."""
        seeds = np.unique(check_nodes(seeds, self.network.n, "seeds", min_len=0))
        return self._world_value(seeds, self.worlds.check_world(world))

    def _world_value(self, seeds: np.ndarray, world: int) -> float:
        active = self.worlds._activated(seeds, world)
        nodes = np.flatnonzero(active)
        counts = np.asarray(self.network.adjacency[nodes][:, nodes].sum(0)).ravel()
        values = self.tau(nodes, _exposures(self.network, nodes, counts))
        if self.exclude_seeds:
            values = values[~np.isin(nodes, seeds)]
        return float(values.sum())

    def value(self, seeds: np.ndarray) -> tuple[float, float]:
        """(mean over worlds, standard error) of the causal gain of `seeds` (node indices)."""
        seeds = np.unique(check_nodes(seeds, self.network.n, "seeds", min_len=0))
        per_world = np.array([self._world_value(seeds, r) for r in range(self.worlds.n_worlds)])
        se = per_world.std(ddof=1) / np.sqrt(len(per_world)) if len(per_world) > 1 else np.nan
        return float(per_world.mean()), float(se)

    def singleton_values(self) -> np.ndarray:
        """σ_τ({v}) for every node v (n,), from each world's reach matrix in sparse algebra.

        Every node that v reaches, v excepted, has an active in-neighbour (the live arc that
        reached it), so its count of active in-neighbours is the entry of reach ⊙ (reach·A)."""
        n, total, adjacency = self.network.n, np.zeros(self.network.n), self.network.adjacency
        for r in range(self.worlds.n_worlds):
            reach = self.worlds.reach_matrix(r).astype(np.int32)
            counts = reach.multiply(reach @ adjacency).tocoo()  # (v, i) → active in-neighbours
            values = self.tau(counts.col, _exposures(self.network, counts.col, counts.data))
            if self.exclude_seeds:
                values = np.where(counts.row == counts.col, 0.0, values)
            total += np.bincount(counts.row, weights=values, minlength=n)
            # v itself when no in-neighbour of v is in its reach (count 0, absent above)
            seen = np.zeros(n, dtype=bool)
            seen[counts.row[counts.row == counts.col]] = True
            if not self.exclude_seeds:
                alone = np.flatnonzero(~seen)
                total[alone] += self.tau(alone, np.zeros(len(alone)))
        return total / self.worlds.n_worlds

    def start(self) -> IncrementalValue:
        return IncrementalValue(self)


class IncrementalValue:
    """The value of a growing seed set across all worlds at once: each world keeps its active
    mask and every node's count of active in-neighbours; a candidate's gain touches only the
    (world, node) pairs it newly activates and their out-neighbours, in one vectorised pass."""

    def __init__(self, objective: CausalObjective) -> None:
        self.objective = objective
        worlds, n = objective.worlds, objective.network.n
        self.R, self.n = worlds.n_worlds, n
        self.reach = sparse_vstack(
            [worlds.reach_matrix(r) for r in range(self.R)]
        ).tocsr()  # (R·n, n)
        self.active = np.zeros(self.R * n, dtype=bool)  # index r·n + i
        self.counts = np.zeros(self.R * n, dtype=np.int64)
        self.seeds: list[int] = []
        self.is_seed = np.zeros(n, dtype=bool)

    def _delta(self, v: int) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
        """(summed gain over worlds, new (world·n + node) keys, bumped keys, their bumps)."""
        obj, net, n, R = self.objective, self.objective.network, self.n, self.R
        tau, adj = obj.tau, net.adjacency
        rows = np.arange(R) * n + v
        starts, ends = self.reach.indptr[rows], self.reach.indptr[rows + 1]
        lengths = ends - starts
        world = np.repeat(np.arange(R), lengths)
        node = self.reach.indices[concat_ranges(starts, lengths)]
        keys = world * n + node
        new = keys[~self.active[keys]]
        gain = 0.0
        was_active = self.active[rows]
        if obj.exclude_seeds and was_active.any():  # v already reached there: drop its own term
            keys_v = rows[was_active]
            gain -= float(
                tau(
                    np.full(len(keys_v), v),
                    _exposures(net, np.full(len(keys_v), v), self.counts[keys_v]),
                ).sum()
            )
        if not len(new):
            return gain, new, new, new
        new_node = new % n
        out_len = adj.indptr[new_node + 1] - adj.indptr[new_node]
        targets = adj.indices[concat_ranges(adj.indptr[new_node], out_len)]
        target_keys = np.repeat(new - new_node, out_len) + targets
        bumped, bumps = np.unique(target_keys, return_counts=True)
        old = bumped[self.active[bumped]]
        old_bump = bumps[self.active[bumped]]
        old_node = old % n
        if obj.exclude_seeds:
            keep = ~self.is_seed[old_node]
            old, old_bump, old_node = old[keep], old_bump[keep], old_node[keep]
        if len(old):
            before = tau(old_node, _exposures(net, old_node, self.counts[old]))
            after = tau(old_node, _exposures(net, old_node, self.counts[old] + old_bump))
            gain += float((after - before).sum())
        new_counts = self.counts[new].copy()
        if len(bumped):
            position = np.searchsorted(bumped, new)
            hit = (position < len(bumped)) & (bumped[np.minimum(position, len(bumped) - 1)] == new)
            new_counts[hit] += bumps[position[hit]]
        scored = new_node != v if obj.exclude_seeds else np.ones(len(new), dtype=bool)
        gain += float(
            tau(new_node[scored], _exposures(net, new_node[scored], new_counts[scored])).sum()
        )
        return gain, new, bumped, bumps

    def gain(self, v: int) -> float:
        """σ(S + v) − σ(S), averaged over worlds."""
        return self._delta(int(v))[0] / self.R

    def add(self, v: int) -> float:
        """Add seed v; returns its gain."""
        gain, new, bumped, bumps = self._delta(int(v))
        self.active[new] = True
        self.counts[bumped] += bumps
        self.seeds.append(int(v))
        self.is_seed[int(v)] = True
        return gain / self.R
