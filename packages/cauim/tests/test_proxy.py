"""A-CauIM's differentiable proxy: its hand-derived gradient against central finite
differences, its value against hand computation on tiny graphs, and message passing exact
where the plain mean field double-counts (activation flowing back along its own arc)."""

import networkx as nx
import numpy as np
import pytest
from paperplug_cauim import from_networkx, message_passing, proxy_objective


@pytest.mark.parametrize("steps", [1, 2, 4])
def test_gradient_equals_central_finite_differences(steps):
    graphs = [
        nx.watts_strogatz_graph(16, 4, 0.2, seed=0),  # undirected: reciprocal arcs
        nx.MultiDiGraph(nx.scale_free_graph(16, seed=1)),  # parallel arcs and self-loops
        nx.gnp_random_graph(12, 0.3, seed=2, directed=True),
    ]
    for g, graph in enumerate(graphs):
        network = from_networkx(graph, p=0.3)
        rng = np.random.default_rng(g)
        grid = rng.normal(size=(network.n, 11))
        theta = rng.normal(size=network.n)
        _, gradient = proxy_objective(network, grid, 3, theta, steps)
        eps, eye = 1e-6, np.eye(network.n)
        numeric = np.array([
            (proxy_objective(network, grid, 3, theta + eps * eye[i], steps)[0]
             - proxy_objective(network, grid, 3, theta - eps * eye[i], steps)[0]) / (2 * eps)
            for i in range(network.n)
        ])  # fmt: skip
        assert np.abs(numeric - gradient).max() < 1e-6 * max(1.0, np.abs(gradient).max())


def test_value_by_hand_on_one_arc():
    """0 → 1 with p = ½, k = 1, θ = 0: x = (½, ½); P_0 = ½, P_1 = 1 − ½·(1 − ½·½) = 5/8;
    P(0 ∧ 1) = ½·(1 − ½·½) = 3/8, so node 1's exposure given it is active is (3/8)/(5/8) = 0.6;
    τ_0 = 1, τ_1(e) = 1 + 2e: F = (½ − ½)·1 + (5/8 − ½)·(1 + 1.2) = 0.275."""
    network = from_networkx(nx.DiGraph([(0, 1)]), p=0.5)
    e = np.linspace(0, 1, 11)
    grid = np.stack([np.ones(11), 1 + 2 * e])
    value, _ = proxy_objective(network, grid, 1, np.zeros(2), 1)
    assert value == pytest.approx(0.275, abs=1e-12)
    assert message_passing(network, np.array([0.5, 0.5]), 1) == pytest.approx([0.5, 0.625])


def test_activation_does_not_flow_back_along_its_own_arc():
    """An undirected pair with p = ½ and x = (½, ½): each is active with probability
    1 − ½·(1 − ½·½) = 5/8 after any number of rounds (the plain mean field climbs to 0.656
    at the second round by letting 0 re-activate itself through 1)."""
    network = from_networkx(nx.Graph([(0, 1)]), p=0.5)
    for steps in range(1, 6):
        assert message_passing(network, np.array([0.5, 0.5]), steps) == pytest.approx([0.625] * 2)


def test_message_passing_is_exact_on_a_directed_tree():
    """On a tree every node's parents are independent: P_v = 1 − (1 − x_v)(1 − p·P_parent)."""
    tree = nx.bfs_tree(nx.balanced_tree(2, 3), 0)
    network = from_networkx(tree, p=0.4)
    x = np.linspace(0.05, 0.5, network.n)
    exact = np.zeros(network.n)
    for v in nx.topological_sort(tree):
        i = network.labels.index(v)
        parents = [network.labels.index(u) for u in tree.predecessors(v)]
        miss = np.prod([1 - 0.4 * exact[u] for u in parents])
        exact[i] = 1 - (1 - x[i]) * miss
    assert message_passing(network, x, 4) == pytest.approx(exact, abs=1e-12)
