"""Reverse exposure samples: the causal objective estimated from random roots, as reverse
influence sampling (RIS, the sampling behind IMM) estimates spread, extended to exposures.

A sample is a live-edge world of its own and a root node i drawn uniformly. For each distinct
in-neighbour u of i (a *slot*) it keeps RR(u), the nodes that reach u over live arcs, and
whether an arc u → i is live. A seed set S then activates u iff S ∩ RR(u) ≠ ∅, so i's exposure
is the share of its slots S touches, and i is active iff i ∈ S or S touches a live slot:
    σ_τ(S) = n · E_sample[1{i active, i ∉ S} · τ_i(e_i)]          (unbiased)
A sample costs about in-degree × reverse-reach nodes, not a whole world's closure, and the
samples are independent: on a large graph far less work than forward worlds for the same
error. A world's coins are drawn lazily, only for the arcs a reverse search meets, from a
hash of (sample key, arc), so every slot of a sample sees the same world.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from paperplug.checks import check_callable, check_scalar, check_seed, check_type
from paperplug_cauim.exposure import TauFn
from paperplug_cauim.indexing import concat_ranges, sorted_member, unique_counts
from paperplug_cauim.network import DiffusionNetwork, check_network, check_nodes

BATCH = 5_000  # samples searched together


class ReverseSamples:
    """`n_samples` reverse samples of `network` drawn from `seed`; `extend` draws more from
    the same stream (the first ones unchanged)."""

    def __init__(
        self, network: DiffusionNetwork, n_samples: int, seed: int | np.random.SeedSequence = 0
    ) -> None:
        check_network(network)
        check_scalar(n_samples, "n_samples", "int", low=1)
        check_seed(seed, allow_none=False)
        self.network = network
        self._rng = np.random.default_rng(seed)
        order = np.argsort(network.target, kind="stable")  # arcs grouped by head
        self._in_arc = order
        self._in_ptr = np.concatenate(
            [[0], np.cumsum(np.bincount(network.target, minlength=network.n))]
        )
        self.root = np.empty(0, dtype=np.int64)  # (samples,)
        self.key = np.empty(0, dtype=np.uint64)  # (samples,) the hash key of each world
        self.slot_sample = np.empty(0, dtype=np.int64)  # (slots,) the sample of each slot
        self.slot_live = np.empty(0, dtype=bool)  # (slots,) an arc u → root is live
        self._entry_slot: list[np.ndarray] = []  # per batch: slot of each (slot, node) entry
        self._entry_node: list[np.ndarray] = []
        self._by_node: sparse.csr_matrix | None = None
        self.extend(n_samples)

    @property
    def n_samples(self) -> int:
        return len(self.root)

    def extend(self, n_samples: int) -> ReverseSamples:
        """Draw `n_samples` more samples."""
        check_scalar(n_samples, "n_samples", "int", low=0)
        done = 0
        while done < n_samples:
            size = min(BATCH, n_samples - done)
            self._batch(size)
            done += size
        self._by_node = None
        return self

    def _live(self, sample: np.ndarray, arc: np.ndarray) -> np.ndarray:
        """Whether `arc` is live in the world of `sample`, elementwise (a hashed coin)."""
        return (
            _uniform(self.key[sample] ^ (arc.astype(np.uint64) * _GOLDEN)) < self.network.prob[arc]
        )

    def _in_arcs(self, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(arc ids, index into `nodes` of each) for all arcs entering `nodes`."""
        counts = self._in_ptr[nodes + 1] - self._in_ptr[nodes]
        return self._in_arc[concat_ranges(self._in_ptr[nodes], counts)], np.repeat(
            np.arange(len(nodes)), counts
        )

    def _batch(self, size: int) -> None:
        net, rng, n = self.network, self._rng, self.network.n
        first_sample, first_slot = len(self.root), len(self.slot_sample)
        roots = rng.integers(n, size=size)
        self.root = np.concatenate([self.root, roots])
        self.key = np.concatenate([self.key, rng.integers(0, 2**63, size=size, dtype=np.uint64)])
        samples = first_sample + np.arange(size)
        inn = net.in_neighbours
        degree = net.in_degree[roots]
        slot_sample = np.repeat(samples, degree)
        slot_node = inn.indices[concat_ranges(inn.indptr[roots], degree)]
        # a slot is live when one of its arcs u → root is live in the sample's world
        arcs, which = self._in_arcs(roots)
        on = self._live(samples[which], arcs)
        live_key = unique_counts(samples[which][on] * n + net.source[arcs][on])[0]
        self.slot_sample = np.concatenate([self.slot_sample, slot_sample])
        self.slot_live = np.concatenate(
            [self.slot_live, sorted_member(slot_sample * n + slot_node, live_key)]
        )
        # reverse search from every slot at once over (slot, node) pairs
        frontier_slot = first_slot + np.arange(len(slot_node))
        frontier_node = slot_node
        seen = _SortedRuns(np.sort(frontier_slot * n + frontier_node))
        slots, nodes = [frontier_slot], [frontier_node]
        while len(frontier_node):
            arcs, which = self._in_arcs(frontier_node)
            slot = frontier_slot[which]
            on = self._live(self.slot_sample[slot], arcs)
            keys = unique_counts(slot[on] * n + net.source[arcs[on]])[0]
            keys = keys[~seen.contains(keys)]
            seen.add(keys)
            frontier_slot, frontier_node = keys // n, keys % n
            slots.append(frontier_slot)
            nodes.append(frontier_node)
        self._entry_slot.append(np.concatenate(slots))
        self._entry_node.append(np.concatenate(nodes))

    def by_node(self) -> sparse.csr_matrix:
        """(n, slots) boolean: row v holds the slots whose reverse-reach set contains v."""
        if self._by_node is None:
            slot = np.concatenate(self._entry_slot)
            node = np.concatenate(self._entry_node)
            self._by_node = sparse.csr_matrix(
                (np.ones(len(slot), dtype=bool), (node, slot)),
                shape=(self.network.n, len(self.slot_sample)),
            )
            self._by_node.sort_indices()
        return self._by_node


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _uniform(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser: a uniform [0, 1) number from each 64-bit key."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    x = x ^ (x >> np.uint64(31))
    return (x >> np.uint64(11)).astype(np.float64) * 2.0**-53


class _SortedRuns:
    """A set of int64 keys as sorted runs of doubling size (a log-structured merge): a
    membership test is a binary search per run, an insertion merges O(log) runs."""

    def __init__(self, keys: np.ndarray) -> None:
        self.runs = [keys]

    def contains(self, keys: np.ndarray) -> np.ndarray:
        found = np.zeros(len(keys), dtype=bool)
        for run in self.runs:
            found |= sorted_member(keys, run)
        return found

    def add(self, keys: np.ndarray) -> None:
        self.runs.append(keys)
        while len(self.runs) > 1 and len(self.runs[-2]) <= 2 * len(self.runs[-1]):
            last = self.runs.pop()
            self.runs[-1] = np.sort(np.concatenate([self.runs[-1], last]), kind="stable")


class ReverseObjective:
    """σ_τ(S) estimated on reverse samples: the same interface as `CausalObjective`
    (`value`, `singleton_values`, `start` for G-CauIM's incremental gains)."""

    def __init__(
        self,
        network: DiffusionNetwork,
        tau: TauFn,
        samples: ReverseSamples,
        *,
        exclude_seeds: bool = True,
    ) -> None:
        check_network(network)
        check_callable(tau, "tau", what="function tau(nodes, exposures)")
        check_type(samples, "samples", ReverseSamples)
        check_type(exclude_seeds, "exclude_seeds", (bool, np.bool_), what="True or False")
        if samples.network is not network:
            raise ValueError("samples were drawn on another network")
        self.network, self.tau, self.samples, self.exclude_seeds = (
            network,
            tau,
            samples,
            exclude_seeds,
        )
        self.degree = network.in_degree[samples.root]
        self.scale = network.n / samples.n_samples
        order = np.argsort(samples.root, kind="stable")  # samples grouped by their root
        self.rooted = sparse.csr_matrix(
            (np.ones(len(order), dtype=bool), (samples.root[order], order)),
            shape=(network.n, samples.n_samples),
        )

    def _sample_values(
        self, samples: np.ndarray, active: np.ndarray, seed_root: np.ndarray, count: np.ndarray
    ) -> np.ndarray:
        """Each sample's term 1{root active, root not an excluded seed}·τ_root(count/degree)."""
        scored = active & ~(seed_root & self.exclude_seeds)
        out = np.zeros(len(samples))
        if scored.any():
            chosen = samples[scored]
            degree = self.degree[chosen]
            e = np.divide(count[scored], degree, out=np.zeros(len(chosen)), where=degree > 0)
            out[scored] = self.tau(self.samples.root[chosen], e)
        return out

    def singleton_values(self) -> np.ndarray:
        """σ̂({v}) for every node v (n,), in one pass over the (node, slot) entries."""
        s, n, total = self.samples, self.network.n, self.samples.n_samples
        by_node = s.by_node()  # rows sorted by slot, so by sample: the keys below are sorted
        row = np.repeat(np.arange(n, dtype=np.int64), np.diff(by_node.indptr))
        keys = row * total + s.slot_sample[by_node.indices]
        touched, count = unique_counts(keys, presorted=True)
        live = (
            np.logical_or.reduceat(s.slot_live[by_node.indices], np.cumsum(count) - count)
            if len(keys)
            else np.zeros(0, dtype=bool)
        )
        as_root = np.sort(s.root * total + np.arange(total))  # a seed that is the root itself
        keys = unique_counts(
            np.sort(np.concatenate([touched, as_root]), kind="stable"), presorted=True
        )[0]
        position = np.searchsorted(keys, touched)
        counts = np.zeros(len(keys), dtype=np.int64)
        counts[position] = count
        active = np.zeros(len(keys), dtype=bool)
        active[position] = live
        is_root = sorted_member(keys, as_root)
        values = self._sample_values(keys % total, active | is_root, is_root, counts)
        return np.bincount(keys // total, weights=values, minlength=n) * self.scale

    def start(self) -> ReverseState:
        return ReverseState(self)

    def value(self, seeds: np.ndarray) -> tuple[float, float]:
        """(estimate, standard error) of the causal gain of `seeds` (node indices)."""
        seeds = check_nodes(seeds, self.network.n, "seeds", min_len=0)
        state = self.start()
        for v in np.unique(seeds):
            state.add(int(v))
        return state.estimate()


class ReverseState:
    """A growing seed set on the samples: which slots it touches, each sample's count of
    touched slots, whether its root is active and whether the root is a seed."""

    def __init__(self, objective: ReverseObjective) -> None:
        s = objective.samples
        self.objective, self.seeds = objective, []
        self.slot_active = np.zeros(len(s.slot_sample), dtype=bool)
        self.count = np.zeros(s.n_samples, dtype=np.int64)
        self.active = np.zeros(s.n_samples, dtype=bool)
        self.seed_root = np.zeros(s.n_samples, dtype=bool)
        self.by_node = s.by_node()

    def _delta(self, v: int) -> tuple[float, tuple]:
        obj, s = self.objective, self.objective.samples
        row = self.by_node
        slots = row.indices[row.indptr[v] : row.indptr[v + 1]]
        slots = np.sort(slots[~self.slot_active[slots]])
        hit, bump = unique_counts(s.slot_sample[slots])  # slots sorted: samples sorted too
        first = np.cumsum(bump) - bump
        lit = np.logical_or.reduceat(s.slot_live[slots], first) if len(slots) else np.zeros(0, bool)
        rooted = obj.rooted.indices[obj.rooted.indptr[v] : obj.rooted.indptr[v + 1]]
        affected = unique_counts(np.concatenate([hit, rooted]))[0]
        where = np.searchsorted(affected, hit)
        bumps = np.zeros(len(affected), dtype=np.int64)
        bumps[where] = bump
        is_root = np.zeros(len(affected), dtype=bool)
        is_root[np.searchsorted(affected, rooted)] = True
        new_active = self.active[affected] | is_root
        new_active[where] |= lit
        new_seed_root = self.seed_root[affected] | is_root
        new_count = self.count[affected] + bumps
        before = obj._sample_values(
            affected, self.active[affected], self.seed_root[affected], self.count[affected]
        )
        after = obj._sample_values(affected, new_active, new_seed_root, new_count)
        gain = float((after - before).sum()) * obj.scale
        return gain, (slots, affected, new_active, new_seed_root, new_count)

    def gain(self, v: int) -> float:
        """σ̂(S + v) − σ̂(S)."""
        return self._delta(int(v))[0]

    def add(self, v: int) -> float:
        """Add seed v; returns its gain."""
        gain, (slots, affected, active, seed_root, count) = self._delta(int(v))
        self.slot_active[slots] = True
        self.active[affected], self.seed_root[affected], self.count[affected] = (
            active,
            seed_root,
            count,
        )
        self.seeds.append(int(v))
        return gain

    def estimate(self) -> tuple[float, float]:
        """(σ̂(S), its standard error: the samples are independent)."""
        obj, s = self.objective, self.objective.samples
        values = obj._sample_values(np.arange(s.n_samples), self.active, self.seed_root, self.count)
        n, size = obj.network.n, len(values)
        se = n * values.std(ddof=1) / np.sqrt(size) if size > 1 else np.nan
        return float(n * values.mean()), float(se)
