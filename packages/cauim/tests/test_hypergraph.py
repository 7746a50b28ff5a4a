"""The contact process on hypergraphs: its objective and G-CauIM on it."""

import numpy as np
from paperplug_cauim import Hypergraph, HypergraphObjective, g_cauim


def test_contact_process_spreads_within_hyperedges_and_greedy_runs_on_it():
    hyper = Hypergraph([[0, 1, 2], [2, 3], [4, 5], [5, 6, 7]], n=8)
    assert hyper.degree.tolist() == [2, 2, 3, 1, 1, 3, 2, 2]
    objective = HypergraphObjective(
        hyper, lambda n, e: np.ones(len(n)), beta=1.0, steps=3, n_worlds=20
    )
    active = hyper.simulate(np.array([4]), 1.0, 1, np.random.default_rng(0))
    assert active[[4, 5]].all() and not active[[0, 1, 2, 3]].any()  # β = 1: the one hyperedge of 4
    selection = g_cauim(objective, 2)
    assert sorted(selection.seeds) != [0, 1] and len(set(selection.seeds)) == 2
    # with β = 1 over 3 rounds a seed in each component reaches far: the two picks split the components
    components = {0: 0, 1: 0, 2: 0, 3: 0, 4: 1, 5: 1, 6: 1, 7: 1}
    assert {components[s] for s in selection.seeds} == {0, 1}
    again = HypergraphObjective(hyper, lambda n, e: np.ones(len(n)), beta=1.0, steps=3, n_worlds=20)
    assert (
        objective.value(np.array([0]))[0] == again.value(np.array([0]))[0]
    )  # common random numbers
