"""Bad inputs are refused with a message naming the argument; nothing is mutated."""

import networkx as nx
import numpy as np
import pytest
from paperplug_cauim import (
    CausalInfluenceMaximization,
    ExposureGrid,
    LiveEdgeWorlds,
    TLearner,
    from_networkx,
    g_cauim,
)


def test_bad_inputs():
    g = nx.path_graph(4)
    with pytest.raises(ValueError, match="p must be a probability"):
        from_networkx(g, p=1.5)
    with pytest.raises(ValueError, match="no attribute 'w'"):
        from_networkx(g, p="w")
    with pytest.raises(TypeError, match="networkx graph"):
        from_networkx([[0, 1]])
    with pytest.raises(ValueError, match="n_worlds"):
        LiveEdgeWorlds(from_networkx(g), 0)
    with pytest.raises(ValueError, match="exposure must lie in"):
        TLearner().fit(np.zeros((4, 1)), [0, 2, 0, 0], [0, 1, 0, 1], [0, 1, 0, 1])
    with pytest.raises(ValueError, match="both activated and non-activated"):
        TLearner().fit(np.zeros((4, 1)), [0, 0, 0, 0], [1, 1, 1, 1], [0, 1, 0, 1])
    with pytest.raises(ValueError, match="finite"):
        ExposureGrid(np.array([[0.0, np.nan]]))
    with pytest.raises(ValueError, match="method"):
        CausalInfluenceMaximization(method="best").solve({"graph": g, "tau": lambda n, e: e})
    with pytest.raises(ValueError, match="'tau', or 'covariates' and 'records'"):
        CausalInfluenceMaximization().solve({"graph": g})
    from paperplug_cauim import CausalObjective

    network = from_networkx(g)
    with pytest.raises(ValueError, match=r"k must be an int in 1\.\.4"):
        g_cauim(CausalObjective(network, lambda n, e: e, LiveEdgeWorlds(network, 2)), 5)


def test_graph_is_not_mutated_and_runs_reproduce():
    g = nx.karate_club_graph()
    nx.set_edge_attributes(g, 0.2, "p")
    before = nx.to_dict_of_dicts(g)
    solver = CausalInfluenceMaximization(k=3, p="p", n_worlds=30)
    tau = lambda nodes, e: 1.0 - np.asarray(e)  # noqa: E731
    a = solver.solve({"graph": g, "tau": tau}, seed=4)
    b = solver.solve({"graph": g, "tau": tau}, seed=4)
    assert a.value == b.value and a.objective == b.objective
    assert nx.to_dict_of_dicts(g) == before
