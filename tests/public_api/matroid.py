"""The matroid package's public API: one valid call of each callable, for the battery (the
adversarial market with M = 2, a triangle's graphic matroid, tiny uniform and partition
matroids)."""

from __future__ import annotations

import networkx as nx
import numpy as np
import paperplug_matroid as m

from paperplug.testing import Sweep

REASONS = {
    "FairPoint": "a result type (what fair_point returns)",
    "Groups": "a result type (what as_groups returns)",
    "IntegralAllocation": "a result type (what integral_allocation returns)",
    "Lottery": "a result type (what fair_lottery returns)",
    "OpportunityFairAllocation": (
        "the Solver role's contract sweeps it (packages/matroid/tests/test_contract.py)"
    ),
}
BIADJACENCY = np.array([[1, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], dtype=np.int8)
GROUPS = [0, 1, 2, 2]


def _uniform_rank(elements: frozenset[int]) -> int:
    return min(len(elements), 2)


def sweeps() -> dict[str, Sweep]:
    market = m.TransversalMatroid(BIADJACENCY)
    graph = nx.Graph()
    graph.add_nodes_from(["a", "b"], bipartite=0)
    graph.add_nodes_from(["r"], bipartite=1)
    graph.add_edges_from([("a", "r"), ("b", "r")])
    groups = m.as_groups(GROUPS, market)
    point = m.fair_point(market, GROUPS)
    return {
        "Matroid": Sweep(
            m.Matroid, (3,), {"labels": ["x", "y", "z"]}, bad_params={"n": [-1], "labels": [["x"]]}
        ),
        "TransversalMatroid": Sweep(
            m.TransversalMatroid,
            (BIADJACENCY,),
            {"labels": list("abcd")},
            bad_params={"labels": [["a"]]},
            accepts={"biadjacency:dtype": "any non-zero entry is an edge (as documented)"},
            width=False,  # any number of resources
        ),
        "TransversalMatroid.rank": Sweep(
            market.rank, ([0, 1, 2],), bad_params={"elements": [[4], [-1], ["0"]]}
        ),
        "TransversalMatroid.circuit": Sweep(
            market.circuit,
            ([0, 2], 1),
            bad_params={"independent": [[4], [-1], [0, 1]], "e": [4, -1]},
        ),
        "TransversalMatroid.greedy": Sweep(
            market.greedy, ([3, 2, 1, 0],), bad_params={"order": [[4], [-1], ["0"]]}
        ),
        "TransversalMatroid.matching": Sweep(
            market.matching, ([0, 2],), bad_params={"agents": [[4], [-1], [0, 1]]}
        ),
        "GraphicMatroid.circuit": Sweep(
            m.GraphicMatroid([(0, 1), (1, 2), (0, 2)]).circuit,
            ([0, 1], 2),
            bad_params={"independent": [[3], [-1], [0, 1, 2]], "e": [3, -1]},
        ),
        "UniformMatroid.circuit": Sweep(
            m.UniformMatroid(4, 2).circuit,
            ([0, 1], 2),
            bad_params={"independent": [[4], [-1], [0, 1, 2]], "e": [4, -1]},
        ),
        "PartitionMatroid.circuit": Sweep(
            m.PartitionMatroid([0, 0, 1], [1, 1]).circuit,
            ([0], 1),
            bad_params={"independent": [[3], [-1], [0, 1]], "e": [3, -1]},
        ),
        "TransversalMatroid.from_graph": Sweep(
            m.TransversalMatroid.from_graph,
            (graph,),
            {"agents": ["a", "b"]},
            bad_params={"agents": [["z"], ["a", "r"]]},
        ),
        "GraphicMatroid": Sweep(
            m.GraphicMatroid,
            ([(0, 1), (1, 2), (0, 2)],),
            bad_params={"edges": [[(0, 1, 2)], [(0,)], [0, 1], [([0], 1)]]},
        ),
        "UniformMatroid": Sweep(m.UniformMatroid, (4, 2), bad_params={"n": [-1], "k": [-1]}),
        "PartitionMatroid": Sweep(
            m.PartitionMatroid,
            ([0, 0, 1], [1, 1]),
            bad_params={"blocks": [[0, 2]], "capacities": [[-1, 1]]},
        ),
        "RankOracleMatroid": Sweep(
            m.RankOracleMatroid,
            (3, _uniform_rank),
            {"labels": ["x", "y", "z"], "check_up_to": 10},
            bad_params={"n": [-1], "labels": [["x"]], "check_up_to": [-1]},
        ),
        "as_matroid": Sweep(
            m.as_matroid,
            (BIADJACENCY,),
            accepts={
                "obj:dtype": "any non-zero biadjacency entry is an edge (as documented)",
                "obj:empty": "no agents: the matroid on the empty set",
            },
            width=False,  # any number of resources
        ),
        "check_matroid_axioms": Sweep(m.check_matroid_axioms, (market,)),
        "as_groups": Sweep(m.as_groups, (GROUPS, market), bad_params={"groups": [[0, 1]]}),
        "fair_point": Sweep(
            m.fair_point,
            (market, GROUPS),
            bad_params={"groups": [[0, 1], [0, None, 1, 1]], "max_groups": [0, 2]},
            width=False,
        ),
        "union_ranks": Sweep(m.union_ranks, (market, groups)),
        "fair_lottery": Sweep(
            m.fair_lottery,
            (market, GROUPS),
            {"point": point},
            bad_params={"groups": [[0, 1]], "max_groups": [0, 2], "max_rounds": [0]},
            width=False,
        ),
        "integral_allocation": Sweep(
            m.integral_allocation,
            (market, GROUPS),
            {"point": point},
            bad_params={"groups": [[0, 1], [1, 1, 1, 1]]},
            width=False,
        ),
        "random_colouring": Sweep(
            m.random_colouring,
            (5, [0.5, 0.5], np.random.default_rng(0)),
            bad_params={"n": [-1], "shares": [[0.5, 0.6], [-0.5, 1.5], []]},
            width=False,
        ),
        "random_colouring_trend": Sweep(
            m.random_colouring_trend,
            ([4, 6], [0.5, 0.5]),
            {"trials": 2, "seed": 0},
            bad_params={
                "sizes": [[0], []],
                "shares": [[0.5, 0.6]],
                "resources_per_agent": [0.0, -1.0],
                "degree": [-1.0],
                "trials": [0],
                "seed": [-1],
            },
        ),
        "random_market": Sweep(
            m.random_market,
            (4, 3, 0.5, np.random.default_rng(0)),
            bad_params={"n_agents": [0], "n_resources": [0], "p": [-0.1, 1.5]},
        ),
        "worst_case_market": Sweep(m.worst_case_market, (2,), bad_params={"M": [-1]}),
    }
