"""The fast paths equal the definitions: span, circuit and incremental greedy of each matroid
type against rank calls; matroid intersection against brute force and against the former
exchange-graph search (an independence test per edge); the column-generation lottery against
the former enumeration of all C!·C greedy vertices."""

import itertools
import math
from collections import deque

import networkx as nx
import numpy as np
import pytest
from paperplug_matroid import (
    GraphicMatroid,
    Matroid,
    PartitionMatroid,
    RankOracleMatroid,
    UniformMatroid,
    as_groups,
    fair_lottery,
    fair_point,
    integral_allocation,
    random_market,
)
from paperplug_matroid.integral import _intersection
from scipy.optimize import linprog

KINDS = ("graphic", "partition", "transversal", "uniform", "oracle")


def small_matroid(kind, rng, n_max=12):
    if kind == "graphic":
        vertices = int(rng.integers(2, 8))
        edges = rng.integers(0, vertices, size=(int(rng.integers(1, n_max)), 2))
        return GraphicMatroid([tuple(e) for e in edges.tolist()])  # loops and parallels too
    if kind == "partition":
        blocks = int(rng.integers(1, 5))
        n = int(rng.integers(1, n_max))
        return PartitionMatroid(rng.integers(0, blocks, n), rng.integers(0, 4, blocks))
    if kind == "uniform":
        n = int(rng.integers(1, n_max))
        return UniformMatroid(n, int(rng.integers(0, n + 1)))
    market = random_market(int(rng.integers(1, n_max)), int(rng.integers(1, 7)), 0.3, rng)
    if kind == "transversal":
        return market
    return RankOracleMatroid(market.n, market.rank, check_up_to=0)


def rank_greedy(matroid, order):
    chosen = []
    for e in order:
        if matroid.rank([*chosen, e]) > len(chosen):
            chosen.append(e)
    return chosen


@pytest.mark.parametrize("kind", KINDS)
def test_span_circuit_and_greedy_equal_their_rank_definitions(kind):
    rng = np.random.default_rng(KINDS.index(kind))
    for _ in range(40):
        matroid = small_matroid(kind, rng)
        order = rng.permutation(matroid.n).tolist()
        assert matroid.greedy(order) == rank_greedy(matroid, order)
        subset = [e for e in range(matroid.n) if rng.random() < 0.5]
        assert np.array_equal(matroid.span(subset), Matroid.span(matroid, subset))
        independent = matroid.greedy(rng.permutation(matroid.n).tolist())
        for e in range(matroid.n):
            if e not in independent:
                assert matroid.circuit(independent, e) == Matroid.circuit(matroid, independent, e)


def brute_intersection(matroid, of, caps):
    for size in range(matroid.n, -1, -1):
        for subset in itertools.combinations(range(matroid.n), size):
            fits = all(np.sum(of[list(subset)] == c) <= cap for c, cap in enumerate(caps))
            if fits and matroid.is_independent(subset):
                return size
    return 0


def exchange_graph_intersection(matroid, of, caps):
    """The former implementation: Edmonds' shortest augmenting paths, one independence test
    per edge of the exchange graph."""
    chosen = set()

    def fits(candidate):
        counts = np.bincount(of[sorted(candidate)], minlength=len(caps)) if candidate else 0
        return bool(np.all(counts <= np.asarray(caps)))

    while True:
        outside = [x for x in range(matroid.n) if x not in chosen]
        sources = {x for x in outside if matroid.is_independent(chosen | {x})}
        sinks = {x for x in outside if fits(chosen | {x})}
        parent = {x: None for x in sorted(sources)}
        queue, end = deque(sorted(sources)), None
        while queue:
            u = queue.popleft()
            if u in sinks and u not in chosen:
                end = u
                break
            if u in chosen:
                nexts = [x for x in outside
                         if x not in parent and matroid.is_independent(chosen - {u} | {x})]  # fmt: skip
            else:
                nexts = [y for y in sorted(chosen) if y not in parent and fits(chosen - {y} | {u})]
            for v in nexts:
                parent[v] = u
                queue.append(v)
        if end is None:
            return len(chosen)
        node = end
        while node is not None:
            chosen ^= {node}
            node = parent[node]


@pytest.mark.parametrize("kind", KINDS)
def test_intersection_equals_brute_force_and_the_exchange_graph_search(kind):
    rng = np.random.default_rng(10 + KINDS.index(kind))
    for trial in range(60):
        matroid = small_matroid(kind, rng, n_max=10 if trial < 30 else 20)
        groups = as_groups(rng.integers(0, int(rng.integers(1, 5)), matroid.n), matroid)
        caps = rng.integers(0, 5, groups.C).tolist()
        fast = _intersection(matroid, groups, caps)
        assert matroid.is_independent(fast)
        assert all(np.sum(groups.of[fast] == c) <= cap for c, cap in enumerate(caps))
        reference = (brute_intersection if trial < 30 else exchange_graph_intersection)(
            matroid, groups.of, caps
        )
        assert len(fast) == reference


def enumerated_lottery_marginals(matroid, groups, target):
    """The former lottery: an LP over all C!·C greedy vertices; its marginals (or None)."""
    vertices = {(0,) * groups.C}
    for size in range(1, groups.C + 1):
        for order in itertools.permutations(range(groups.C), size):
            chosen = rank_greedy(matroid, [e for c in order for e in groups.members[c]])
            vertices.add(tuple(np.bincount(groups.of[chosen], minlength=groups.C).tolist()))
    counts = np.array(sorted(vertices), dtype=float).T
    result = linprog(np.zeros(counts.shape[1]), A_eq=np.vstack([counts, np.ones(counts.shape[1])]),
                     b_eq=np.append(target, 1.0), bounds=(0, None), method="highs")  # fmt: skip
    return None if result.status != 0 else counts @ result.x


@pytest.mark.parametrize("kind", KINDS)
def test_column_generation_lottery_equals_the_enumerated_one(kind):
    rng = np.random.default_rng(20 + KINDS.index(kind))
    for _ in range(25):
        matroid = small_matroid(kind, rng)
        groups = as_groups(rng.integers(0, int(rng.integers(1, 6)), matroid.n), matroid)
        point = fair_point(matroid, groups)
        target = np.array([point.quotas[lab] for lab in groups.labels])
        lottery = fair_lottery(matroid, groups, point)
        reference = enumerated_lottery_marginals(matroid, groups, target)
        assert reference is not None
        ours = np.array([lottery.marginals[lab] for lab in groups.labels])
        assert np.allclose(ours, reference, atol=1e-7) and np.allclose(ours, target, atol=1e-7)
        assert len(lottery.allocations) <= groups.C + 1
        assert all(matroid.is_independent(a) for a in lottery.allocations)


def test_large_graphic_and_partition_allocations_meet_every_floor_quota():
    rng = np.random.default_rng(3)
    graph = nx.gnm_random_graph(1000, 2000, seed=3)
    partition = PartitionMatroid(rng.integers(0, 200, 2000), rng.integers(0, 6, 200))
    for matroid in (GraphicMatroid(graph), partition):
        groups = rng.choice(3, size=matroid.n, p=[0.6, 0.3, 0.1])
        point = fair_point(matroid, groups)
        alloc = integral_allocation(matroid, groups, point)
        assert matroid.is_independent(alloc.agents)
        assert alloc.counts == {
            c: math.floor(point.exact["lambda_star"] * r) for c, r in point.group_ranks.items()
        }


def test_an_eight_group_lottery_reaches_the_quotas():
    rng = np.random.default_rng(4)
    market = random_market(300, 300, 2 / 300, rng)
    groups = rng.integers(0, 8, size=300)
    point = fair_point(market, groups)
    lottery = fair_lottery(market, groups, point)
    assert lottery.marginals == pytest.approx(point.quotas, abs=1e-7)
    assert len(lottery.allocations) <= 9
