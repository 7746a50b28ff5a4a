"""The Solver contract from paperplug.testing, on a small graph with a known effect."""

import networkx as nx
import numpy as np
import pytest

from paperplug.testing import SolverContract


def tau(nodes, e):
    return 0.5 + np.cos(nodes) - np.asarray(e)


class TestContract(SolverContract):
    component = "cauim"
    params = {"k": 2, "n_worlds": 20, "p": 0.2}

    @pytest.fixture
    def solve_case(self):
        return {"graph": nx.karate_club_graph(), "tau": tau}, {}


def test_gradient_method_through_the_component():
    import paperplug

    solver = paperplug.load("solver", "cauim", k=3, method="gradient", n_worlds=20, p=0.2)
    solution = solver.solve({"graph": nx.karate_club_graph(), "tau": tau}, seed=0)
    assert len(solution.value) == 3 and np.isfinite(solution.objective["causal_gain"])
