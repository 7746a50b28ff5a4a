"""The Solver contract from paperplug.testing (with its bad-input battery), on a small graph
with a known effect; what the component returns is what the lower-level API computes."""

import networkx as nx
import numpy as np
import pytest
from paperplug_cauim import ExposureGrid, a_cauim, from_networkx
from paperplug_cauim.holdout import checked_greedy
from paperplug_cauim.reverse import ReverseObjective, ReverseSamples

import paperplug
from paperplug.testing import SolverContract


def tau(nodes, e):
    return 0.5 + np.cos(nodes) - np.asarray(e)


class TestContract(SolverContract):
    component = "cauim"
    params = {"k": 2, "samples": 2000, "p": 0.2}
    bad_params = {
        "k": [0, 2.5, 35],  # 35 > the karate club's 34 nodes
        "samples": [0, 1.5],
        "max_samples": [1],
        "p": [1.5, -0.1, float("nan"), "no-such-attribute"],
        "method": ["best"],
        "tolerance": [-0.1],
        "grid_points": [1],
        "seed": [-1, 1.5],
    }
    reasons = {"estimator": "a scikit-learn regressor (None: the default); no value to list"}

    @pytest.fixture
    def solve_case(self):
        return {"graph": nx.karate_club_graph(), "tau": tau}, {}


@pytest.mark.parametrize("method", ["greedy", "gradient"])
def test_the_component_returns_what_the_lower_level_api_computes(method):
    graph = nx.karate_club_graph()
    solver = paperplug.load("solver", "cauim", k=3, method=method, samples=3000, p=0.2)
    solution = solver.solve({"graph": graph, "tau": tau}, seed=5)
    network = from_networkx(graph, p=0.2)
    grid = ExposureGrid.from_function(tau, network.n)
    if method == "greedy":
        selection, checked, _ = checked_greedy(
            network, grid, 3, seed=5, start=3000, max_samples=3000, tolerance=np.inf
        )
        expected = (checked.held_out, checked.standard_error)
    else:
        selection = a_cauim(network, grid, 3, seed=5)
        check = ReverseSamples(network, 3000, np.random.SeedSequence(5).spawn(2)[1])
        expected = ReverseObjective(network, grid, check).value(np.array(selection.seeds))
    assert solution.value == [network.labels[i] for i in selection.seeds]
    got = (solution.objective["causal_gain"], solution.objective["standard_error"])
    assert got == pytest.approx(expected, rel=1e-12)
    assert solution.certificate["held_out_samples"] == 3000
