"""Rank oracles against brute force, greedy against the oracle, the axiom check."""

import itertools

import networkx as nx
import numpy as np
import pytest
from paperplug_matroid import (
    GraphicMatroid,
    RankOracleMatroid,
    TransversalMatroid,
    UniformMatroid,
    check_matroid_axioms,
)
from scipy import sparse


def brute_matching(bi, agents):
    agents = list(agents)
    m = bi.shape[1]
    for k in range(len(agents), 0, -1):
        for subset in itertools.combinations(agents, k):
            for resources in itertools.permutations(range(m), k):
                if all(bi[a, r] for a, r in zip(subset, resources, strict=True)):
                    return k
    return 0


def test_transversal_rank_is_the_maximum_matching_and_greedy_matches_the_oracle():
    rng = np.random.default_rng(0)
    for _ in range(30):
        bi = rng.random((6, 4)) < 0.4
        matroid = TransversalMatroid(sparse.csr_matrix(bi))
        for subset in itertools.chain.from_iterable(
            itertools.combinations(range(6), k) for k in range(7)
        ):
            assert matroid.rank(subset) == brute_matching(bi, subset)
        order = rng.permutation(6).tolist()
        by_rank = RankOracleMatroid(6, matroid.rank, check_up_to=0)  # greedy by rank calls
        assert matroid.greedy(order) == by_rank.greedy(order)


def test_kuhn_greedy_on_long_augmenting_paths_needs_no_recursion():
    n = 3000  # a chain: agent i may take resources i and i+1
    bi = sparse.diags([np.ones(n), np.ones(n - 1)], [0, 1], shape=(n, n), format="csr")
    matroid = TransversalMatroid(bi)
    assert len(matroid.greedy(range(n - 1, -1, -1))) == n


def test_graphic_and_uniform_ranks():
    g = nx.cycle_graph(5)
    graphic = GraphicMatroid(g)
    assert graphic.rank(range(5)) == 4 and graphic.rank(range(4)) == 4 and graphic.rank([]) == 0
    assert UniformMatroid(6, 2).rank([0, 3, 5]) == 2
    check_matroid_axioms(graphic)


def test_a_non_matroid_oracle_is_rejected_with_the_failing_axiom():
    with pytest.raises(ValueError, match="submodularity"):
        RankOracleMatroid(3, lambda s: {0: 0, 1: 1, 2: 1, 3: 2}[len(s)])
    with pytest.raises(ValueError, match="changes the rank by 2"):
        RankOracleMatroid(2, lambda s: 2 * len(s) if len(s) < 2 else 2)
    with pytest.raises(ValueError, match=r"r\(∅\)"):
        RankOracleMatroid(2, lambda s: 1)
    with pytest.raises(TypeError, match="return an int"):
        RankOracleMatroid(2, lambda s: float(len(s)))
