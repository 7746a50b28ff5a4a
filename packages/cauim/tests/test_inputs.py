"""Inputs as users hold them (networkx graphs and multigraphs, scipy sparse adjacencies, dict
or DataFrame records) and bad ones, refused with a message naming the argument; nothing the
caller passed is mutated."""

import networkx as nx
import numpy as np
import pandas as pd
import pytest
from paperplug_cauim import (
    CausalInfluenceMaximization,
    CausalObjective,
    ExposureGrid,
    LiveEdgeWorlds,
    TLearner,
    from_networkx,
    from_scipy,
    g_cauim,
)
from paperplug_cauim.reverse import ReverseObjective, ReverseSamples
from scipy import sparse


def identity_tau(nodes, e):
    return np.asarray(e, dtype=float)


def test_a_multigraph_counts_each_in_neighbour_once_in_the_exposure():
    graph = nx.MultiDiGraph([(0, 1), (0, 1), (2, 1), (1, 3)])
    network = from_networkx(graph, p=1.0)
    assert network.n_arcs == 4 and network.in_degree.tolist() == [0, 2, 0, 1]
    seeds = np.array([0, 2])  # node 1: both in-neighbours active (e = 1); node 3: e = 1
    forward = CausalObjective(network, identity_tau, LiveEdgeWorlds(network, 3))
    assert forward.value(seeds) == (2.0, 0.0)
    reverse = ReverseObjective(network, identity_tau, ReverseSamples(network, 4000))
    value, se = reverse.value(seeds)
    assert abs(value - 2.0) < 4 * se


def test_parallel_arcs_each_get_a_chance():
    network = from_networkx(nx.MultiDiGraph([(0, 1), (0, 1)]), p=0.5)
    worlds = LiveEdgeWorlds(network, 4000, seed=0)
    share = np.mean([worlds.activated(np.array([0]), r)[1] for r in range(4000)])
    assert abs(share - 0.75) < 0.03  # 1 − (1 − ½)²


def test_a_scipy_sparse_adjacency_gives_the_networkx_result():
    graph = nx.gnp_random_graph(40, 0.1, seed=3, directed=True)
    nx.set_edge_attributes(
        graph, {e: 0.1 + 0.01 * (i % 30) for i, e in enumerate(graph.edges)}, "p"
    )
    adjacency = nx.to_scipy_sparse_array(graph, weight="p", format="csr")
    before = adjacency.copy()
    a, b = from_networkx(graph, p="p"), from_scipy(adjacency, p="weight")

    def arcs(net):
        return sorted(zip(net.source.tolist(), net.target.tolist(), net.prob.tolist(), strict=True))

    assert arcs(a) == arcs(b)
    solver = CausalInfluenceMaximization(k=3, samples=3000)
    tau = lambda nodes, e: np.cos(nodes) + np.asarray(e)  # noqa: E731
    from_graph = CausalInfluenceMaximization(k=3, p="p", samples=3000).solve(
        {"graph": graph, "tau": tau}
    )
    from_matrix = CausalInfluenceMaximization(k=3, p="weight", samples=3000).solve(
        {"graph": adjacency, "tau": tau}
    )
    assert from_graph.value == from_matrix.value
    assert from_graph.objective == from_matrix.objective
    assert (adjacency != before).nnz == 0  # read, never modified
    assert solver.solve({"graph": adjacency, "tau": tau}).value  # a constant p works too


def test_records_as_a_dataframe_equal_records_as_a_dict():
    rng = np.random.default_rng(0)
    graph = nx.karate_club_graph()
    X = rng.normal(size=(34, 2))
    rows = np.repeat(X, 12, axis=0)
    records = {
        "covariates": rows,
        "exposure": rng.random(len(rows)),
        "treated": rng.random(len(rows)) < 0.5,
        "y": rows[:, 0] + rng.normal(size=len(rows)),
    }
    frame = pd.DataFrame({"x0": rows[:, 0], "x1": rows[:, 1], "exposure": records["exposure"],
                          "treated": records["treated"], "y": records["y"]})  # fmt: skip
    solver = CausalInfluenceMaximization(k=2, samples=2000, p=0.2)
    a = solver.solve({"graph": graph, "covariates": X, "records": records})
    b = solver.solve({"graph": graph, "covariates": X, "records": frame})
    assert a.value == b.value and a.objective == b.objective


def test_bad_inputs_name_the_argument():
    g = nx.path_graph(4)
    solver = CausalInfluenceMaximization(k=2, samples=500)
    with pytest.raises(ValueError, match=r"problem\['tau'\] must return one effect per"):
        solver.solve({"graph": g, "tau": lambda nodes, e: np.zeros(3)})  # wrong length
    with pytest.raises(TypeError, match=r"problem\['tau'\] must be a function"):
        solver.solve({"graph": g, "tau": 3.0})
    with pytest.raises(ValueError, match=r"the values problem\['tau'\] returned holds NaN"):
        solver.solve({"graph": g, "tau": lambda nodes, e: np.full(len(nodes), np.nan)})
    with pytest.raises(ValueError, match=r"problem\['graph'\] must have at least 1 node"):
        solver.solve({"graph": nx.Graph(), "tau": identity_tau})
    with pytest.raises(TypeError, match=r"problem\['graph'\] must be a networkx graph"):
        solver.solve({"graph": [[0, 1]], "tau": identity_tau})
    with pytest.raises(ValueError, match=r"problem\['graph'\] must be a non-empty square"):
        solver.solve({"graph": sparse.csr_matrix((3, 4)), "tau": identity_tau})
    with pytest.raises(ValueError, match=r"stored values \(p='weight'\) must be activation"):
        CausalInfluenceMaximization(p="weight").solve(
            {"graph": sparse.csr_matrix(np.array([[0, 2.0], [0, 0]])), "tau": identity_tau}
        )
    with pytest.raises(ValueError, match="k must be at most the number of nodes"):
        CausalInfluenceMaximization(k=5).solve({"graph": g, "tau": identity_tau})
    with pytest.raises(ValueError, match=r"'tau', or 'covariates' and 'records'"):
        solver.solve({"graph": g})
    X = np.zeros((4, 2))
    good = {"covariates": np.zeros((8, 2)), "exposure": np.full(8, 0.5),
            "treated": np.arange(8) % 2 == 0, "y": np.ones(8)}  # fmt: skip
    nan_records = {**good, "y": np.r_[np.ones(7), np.nan]}
    with pytest.raises(ValueError, match=r"problem\['records'\]\['y'\] holds NaN"):
        solver.solve({"graph": g, "covariates": X, "records": nan_records})
    with pytest.raises(ValueError, match=r"problem\['covariates'\] holds NaN"):
        solver.solve({"graph": g, "covariates": np.full((4, 2), np.nan), "records": good})
    with pytest.raises(ValueError, match=r"problem\['covariates'\] must have shape \(4, 2\)"):
        solver.solve({"graph": g, "covariates": np.zeros((3, 2)), "records": good})
    with pytest.raises(ValueError, match="must have the same number of rows"):
        solver.solve({"graph": g, "covariates": X, "records": {**good, "y": np.ones(7)}})
    with pytest.raises(ValueError, match="exposure must lie in"):
        TLearner().fit(np.zeros((4, 1)), [0, 2, 0, 0], [0, 1, 0, 1], [0, 1, 0, 1])
    with pytest.raises(ValueError, match="both activated and non-activated"):
        TLearner().fit(np.zeros((4, 1)), [0, 0, 0, 0], [1, 1, 1, 1], [0, 1, 0, 1])
    with pytest.raises(ValueError, match="values holds NaN"):
        ExposureGrid(np.array([[0.0, np.nan]]))
    network = from_networkx(g)
    with pytest.raises(ValueError, match=r"k must lie in \[1, 4\]"):
        g_cauim(CausalObjective(network, identity_tau, LiveEdgeWorlds(network, 2)), 5)
    with pytest.raises(ValueError, match="n_worlds"):
        LiveEdgeWorlds(network, 0)


def test_t_learner_before_fit_is_not_fitted():
    from paperplug.checks import NotFittedError

    with pytest.raises(NotFittedError):
        TLearner().predict(np.zeros((2, 1)), [0.1, 0.2])


def test_graph_is_not_mutated_and_runs_reproduce_in_a_new_process():
    import json
    import subprocess
    import sys

    g = nx.karate_club_graph()
    nx.set_edge_attributes(g, 0.2, "p")
    before = nx.to_dict_of_dicts(g)
    solver = CausalInfluenceMaximization(k=3, p="p", samples=3000)
    tau = lambda nodes, e: 1.0 - np.asarray(e)  # noqa: E731
    a = solver.solve({"graph": g, "tau": tau}, seed=4)
    assert nx.to_dict_of_dicts(g) == before
    code = (
        "import json, networkx as nx, numpy as np\n"
        "from paperplug_cauim import CausalInfluenceMaximization\n"
        "g = nx.karate_club_graph(); nx.set_edge_attributes(g, 0.2, 'p')\n"
        "s = CausalInfluenceMaximization(k=3, p='p', samples=3000).solve(\n"
        "    {'graph': g, 'tau': lambda n, e: 1.0 - np.asarray(e)}, seed=4)\n"
        "print(json.dumps([s.value, s.objective]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == [a.value, a.objective]
