"""The lottery reaches the fair quotas exactly; the integral allocation meets ⌊quotas⌋."""

import math

import networkx as nx
import numpy as np
import pytest
from paperplug_matroid import (
    GraphicMatroid,
    PartitionMatroid,
    RankOracleMatroid,
    TransversalMatroid,
    fair_lottery,
    fair_point,
    integral_allocation,
    random_colouring,
    random_market,
)


def instances(rng):
    for _ in range(15):
        n = int(rng.integers(4, 40))
        yield (
            random_market(n, int(rng.integers(2, n + 1)), 0.15, rng),
            random_colouring(n, [0.5, 0.3, 0.2], rng),
        )
    g = nx.gnm_random_graph(12, 25, seed=1)
    yield GraphicMatroid(g), rng.integers(0, 3, size=g.number_of_edges())
    yield PartitionMatroid(rng.integers(0, 4, 30), [2, 5, 1, 3]), rng.integers(0, 3, 30)


def test_lottery_marginals_equal_the_quotas_and_every_allocation_is_independent():
    rng = np.random.default_rng(0)
    for matroid, groups in instances(rng):
        point = fair_point(matroid, groups)
        lottery = fair_lottery(matroid, groups, point)
        assert sum(lottery.probabilities) == pytest.approx(1.0)
        assert all(p > 0 for p in lottery.probabilities)
        assert len(lottery.allocations) <= len(point.quotas) + 1  # a basic LP solution
        for label, quota in point.quotas.items():
            assert lottery.marginals[label] == pytest.approx(quota, abs=1e-7)
        assert all(matroid.is_independent(a) for a in lottery.allocations)
        assert max(lottery.agent_probabilities) <= 1 + 1e-9


def test_integral_allocation_serves_the_floor_of_every_quota():
    rng = np.random.default_rng(1)
    for matroid, groups in instances(rng):
        point = fair_point(matroid, groups)
        alloc = integral_allocation(matroid, groups, point)
        assert matroid.is_independent(alloc.agents)
        assert alloc.counts == {
            c: math.floor(point.exact["lambda_star"] * r) for c, r in point.group_ranks.items()
        }
        assert alloc.rounding_gap == pytest.approx(point.fair_size - len(alloc.agents))
        assert 0 <= alloc.rounding_gap < len(point.quotas)
        if alloc.matching is not None:
            assert sorted(alloc.matching) == alloc.agents
            assert len(set(alloc.matching.values())) == len(alloc.agents)
            assert all(matroid.biadjacency[a, r] for a, r in alloc.matching.items())


def test_matroid_intersection_agrees_with_the_flow():
    rng = np.random.default_rng(2)
    for _ in range(10):
        market = random_market(14, 9, 0.25, rng)
        groups = random_colouring(14, [0.4, 0.4, 0.2], rng)
        oracle = RankOracleMatroid(14, lambda s, m=market: m.rank(s), check_up_to=0)
        by_flow = integral_allocation(market, groups)
        by_intersection = integral_allocation(oracle, groups)
        assert by_flow.counts == by_intersection.counts
        assert oracle.is_independent(by_intersection.agents)


def test_transversal_from_a_networkx_bipartite_graph():
    g = nx.Graph()
    g.add_nodes_from(["ann", "bob", "cy"], bipartite=0)
    g.add_nodes_from(["job1", "job2"], bipartite=1)
    g.add_edges_from([("ann", "job1"), ("bob", "job1"), ("cy", "job2")])
    point = fair_point(g, {"ann": "f", "bob": "m", "cy": "m"})
    assert point.group_ranks == {"f": 1, "m": 2} and point.max_size == 2 and point.pof == 1.0
    assert TransversalMatroid.from_graph(g).labels == ["ann", "bob", "cy"]
