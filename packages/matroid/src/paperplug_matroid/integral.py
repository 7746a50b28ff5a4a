"""An integral allocation with group capacities, and its rounding gap to the fair point.

Exact opportunity fairness (y_c = λ·r(G_c)) is a fractional notion: a single allocation can
rarely meet it. The integral allocation serves as many agents as possible with at most
⌊y*_c⌋ from each group c. Since ⌊y*⌋ is an integer point of the group polymatroid it is
reachable, so the allocation serves exactly ⌊y*_c⌋ per group; the rounding gap
Σ_c (y*_c − ⌊y*_c⌋) < C is reported apart from the price of fairness.

Transversal matroids: a maximum flow source → group (capacity) → agent → resource → sink.
Other matroids: matroid intersection with the partition matroid of the group capacities
(augmenting paths in the exchange graph, independence oracles).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from paperplug_matroid.characterisation import FairPoint, Groups, as_groups, fair_point
from paperplug_matroid.matroids import Matroid, TransversalMatroid, as_matroid


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
    (Edmonds' matroid intersection: shortest augmenting paths in the exchange graph)."""
    chosen: set[int] = set()

    def fits(candidate: set[int]) -> bool:  # the partition matroid of the capacities
        counts = np.bincount(groups.of[sorted(candidate)], minlength=groups.C) if candidate else 0
        return bool(np.all(counts <= np.asarray(caps)))

    while True:
        outside = [x for x in range(matroid.n) if x not in chosen]
        sources = {x for x in outside if matroid.is_independent(chosen | {x})}
        sinks = {x for x in outside if fits(chosen | {x})}
        parent: dict[int, int | None] = {x: None for x in sorted(sources)}
        queue, end = deque(sorted(sources)), None
        while queue:
            u = queue.popleft()
            if u in sinks and u not in chosen:
                end = u
                break
            if u in chosen:  # y -> x when I − y + x is independent in the matroid
                nexts = [
                    x
                    for x in outside
                    if x not in parent and matroid.is_independent(chosen - {u} | {x})
                ]
            else:  # x -> y when I − y + x fits the capacities
                nexts = [y for y in sorted(chosen) if y not in parent and fits(chosen - {y} | {u})]
            for v in nexts:
                parent[v] = u
                queue.append(v)
        if end is None:
            return sorted(chosen)
        node: int | None = end
        while node is not None:
            chosen ^= {node}
            node = parent[node]


def integral_allocation(
    matroid: Any, groups: Any, point: FairPoint | None = None
) -> IntegralAllocation:
    """The largest allocation with at most ⌊y*_c⌋ agents of each group c."""
    matroid = as_matroid(matroid)
    groups = groups if isinstance(groups, Groups) else as_groups(groups, matroid)
    point = point or fair_point(matroid, groups)
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
