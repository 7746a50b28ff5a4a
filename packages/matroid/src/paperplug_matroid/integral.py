"""An integral allocation with group capacities, and its rounding gap to the fair point.

Exact opportunity fairness (y_c = λ·r(G_c)) is a fractional notion: a single allocation can
rarely meet it. The integral allocation serves as many agents as possible with at most
⌊y*_c⌋ from each group c. Since ⌊y*⌋ is an integer point of the group polymatroid it is
reachable, so the allocation serves exactly ⌊y*_c⌋ per group; the rounding gap
Σ_c (y*_c − ⌊y*_c⌋) < C is reported apart from the price of fairness.

Transversal matroids: a maximum flow source → group (capacity) → agent → resource → sink.
Other matroids: matroid intersection with the partition matroid of the group capacities,
from a capped greedy start (the matroid's incremental independence oracle: union-find for
graphic matroids, block counters for partition matroids), then shortest augmenting paths
found layer by layer with one span call per layer.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from paperplug_matroid.characterisation import (
    FairPoint,
    Groups,
    fair_point,
    point_argument,
    problem_arguments,
)
from paperplug_matroid.matroids import Matroid, TransversalMatroid


@dataclass
class IntegralAllocation:
    """The agents served, per-group counts, capacities, and the gap to the fair point."""

    agents: list[int]
    counts: dict[Hashable, int]
    capacities: dict[Hashable, int]
    rounding_gap: float  # fair size − |agents|
    matching: dict[int, int] | None = None  # agent -> resource, for transversal matroids

    def to_dict(self) -> dict[str, Any]:
        return {
            "agents": self.agents,
            "counts": {str(k): v for k, v in self.counts.items()},
            "capacities": {str(k): v for k, v in self.capacities.items()},
            "rounding_gap": self.rounding_gap,
        }


def _flow_allocation(
    matroid: TransversalMatroid, groups: Groups, caps: Sequence[int]
) -> tuple[list[int], dict[int, int]]:
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import maximum_flow

    C, n, m = groups.C, matroid.n, matroid.n_resources
    source, sink = 0, 1 + C + n + m  # nodes: source, groups, agents, resources, sink
    rows, cols, cap = [], [], []
    for c in range(C):
        rows.append(source), cols.append(1 + c), cap.append(int(caps[c]))
    for i in range(n):
        rows.append(1 + int(groups.of[i])), cols.append(1 + C + i), cap.append(1)
    bi = matroid.biadjacency.tocoo()
    rows += (1 + C + bi.row).tolist()
    cols += (1 + C + n + bi.col).tolist()
    cap += [1] * bi.nnz
    for j in range(m):
        rows.append(1 + C + n + j), cols.append(sink), cap.append(1)
    graph = csr_matrix((np.array(cap, dtype=np.int32), (rows, cols)), shape=(sink + 1, sink + 1))
    flow = maximum_flow(graph, source, sink, method="dinic").flow.tocoo()
    served, match = [], {}
    for u, v, f in zip(flow.row, flow.col, flow.data, strict=True):
        if f > 0 and 1 + C <= u < 1 + C + n and 1 + C + n <= v < sink:
            served.append(int(u - 1 - C))
            match[int(u - 1 - C)] = int(v - 1 - C - n)
    return sorted(served), match


def _intersection(matroid: Matroid, groups: Groups, caps: Sequence[int]) -> list[int]:
    """Largest set independent in `matroid` with at most caps[c] elements of group c
    (Edmonds' matroid intersection, from a capped greedy start, one shortest augmenting path
    at a time)."""
    caps_arr = np.asarray(caps, dtype=int)
    counts = np.zeros(groups.C, dtype=int)
    grown = matroid.extension()
    for e in _round_robin(groups):
        if counts[groups.of[e]] < caps_arr[groups.of[e]] and grown.add(e):
            counts[groups.of[e]] += 1
    chosen = np.zeros(matroid.n, dtype=bool)
    chosen[grown.elements] = True
    while (path := _augmenting_path(matroid, groups, chosen, counts >= caps_arr)) is not None:
        chosen[path] = ~chosen[path]
        counts = np.bincount(groups.of[chosen], minlength=groups.C)
    return np.flatnonzero(chosen).tolist()


def _round_robin(groups: Groups) -> list[int]:
    """The elements with the groups interleaved, so the greedy start spreads over groups."""
    longest = max(len(m) for m in groups.members)
    return [m[i] for i in range(longest) for m in groups.members if i < len(m)]


def _augmenting_path(
    matroid: Matroid, groups: Groups, chosen: np.ndarray, full: np.ndarray
) -> list[int] | None:
    """A shortest augmenting path in the exchange graph of I = `chosen`, or None.

    Edges x → y (x ∉ I, y ∈ I) when I − y + x fits the group capacities: y is in x's group
    and that group is full; y → x when I − y + x is independent: y is on x's fundamental
    circuit. Sources are x ∉ span(I), sinks x in a group with room. Since a group's members of
    I enter the search together, x is at distance 2k exactly when x ∉ span(I − Y_k) but
    x ∈ span(I − Y_{k−1}), Y_k the members of I of the groups reached by then: one span call
    per layer (at most C + 1) instead of an independence test per edge."""
    of = groups.of
    reached = chosen.copy()  # the elements of I are never path starts
    frontier = ~matroid.span(np.flatnonzero(chosen)) & ~reached
    removed = np.zeros_like(chosen)  # Y: members of I of the groups reached so far
    layer = np.full(matroid.n, -1)
    entry: dict[int, int] = {}  # group -> the element x that first reached it
    depth = 0
    while frontier.any():
        layer[frontier] = depth
        sinks = np.flatnonzero(frontier & ~full[of])
        if sinks.size:
            return _trace(matroid, groups, chosen, layer, entry, int(sinks[0]))
        reached |= frontier
        new_groups = [int(c) for c in np.unique(of[frontier]) if int(c) not in entry]
        for c in new_groups:
            entry[c] = int(np.flatnonzero(frontier & (of == c))[0])
        members = chosen & np.isin(of, new_groups) & ~removed
        if not members.any():
            return None
        layer[members] = depth + 1
        removed |= members
        frontier = ~matroid.span(np.flatnonzero(chosen & ~removed)) & ~reached
        depth += 2
    return None


def _trace(
    matroid: Matroid,
    groups: Groups,
    chosen: np.ndarray,
    layer: np.ndarray,
    entry: dict[int, int],
    sink: int,
) -> list[int]:
    """The path back from `sink` to a source, one layer down at each step."""
    independent = np.flatnonzero(chosen).tolist()
    path, x = [sink], sink
    while layer[x] > 0:
        y = min(y for y in matroid.circuit(independent, x) if layer[y] == layer[x] - 1)
        x = entry[int(groups.of[y])]
        path += [y, x]
    return path


def integral_allocation(
    matroid: Any, groups: Any, point: FairPoint | None = None
) -> IntegralAllocation:
    """The largest allocation with at most ⌊y*_c⌋ agents of each group c."""
    matroid, groups = problem_arguments(matroid, groups)
    point = point_argument(point, groups) or fair_point(matroid, groups)
    caps = [
        math.floor(point.exact["lambda_star"] * point.group_ranks[lab]) for lab in groups.labels
    ]
    if isinstance(matroid, TransversalMatroid):
        agents, match = _flow_allocation(matroid, groups, caps)
    else:
        agents, match = _intersection(matroid, groups, caps), None
    counts = (
        np.bincount(groups.of[agents], minlength=groups.C) if agents else np.zeros(groups.C, int)
    )
    return IntegralAllocation(
        agents=agents,
        counts={lab: int(counts[c]) for c, lab in enumerate(groups.labels)},
        capacities={lab: caps[c] for c, lab in enumerate(groups.labels)},
        rounding_gap=float(point.exact["fair_size"] - len(agents)),
        matching=match,
    )
