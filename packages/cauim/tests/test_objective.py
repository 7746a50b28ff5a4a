"""The causal objective: simulator against cynetdiff, singletons against direct evaluation, the
incremental value against recomputation, greedy against brute force."""

import itertools
import math

import networkx as nx
import numpy as np
import pytest
from paperplug_cauim import CausalObjective, LiveEdgeWorlds, from_networkx, g_cauim


def test_our_cascades_agree_with_cynetdiff_on_spread():
    from cynetdiff.utils import networkx_to_ic_model

    graph = nx.les_miserables_graph()
    for _, _, d in graph.edges(data=True):
        d.pop("weight", None)
    network = from_networkx(graph, p=0.15)
    seeds = [network.labels.index(v) for v in ("Valjean", "Gavroche", "Marius")]
    worlds = LiveEdgeWorlds(network, 4000, seed=0)
    ours = np.array([worlds.activated(np.array(seeds), r).sum() for r in range(4000)])
    model, mapping = networkx_to_ic_model(graph, activation_prob=0.15, rng=1)
    model.set_seeds([mapping[network.labels[s]] for s in seeds])
    theirs = []
    for _ in range(4000):
        model.reset_model()
        model.advance_until_completion()
        theirs.append(model.get_num_activated_nodes())
    se = math.sqrt(ours.var() / len(ours) + np.var(theirs) / len(theirs))
    assert abs(ours.mean() - np.mean(theirs)) < 4 * se, (ours.mean(), np.mean(theirs), se)


def _small(seed, n=12, p=0.3):
    graph = nx.gnp_random_graph(n, 0.3, seed=seed, directed=True)
    network = from_networkx(graph, p=p)
    return network, LiveEdgeWorlds(network, 60, seed=seed)


def tau_exposure(nodes, e):
    return np.sin(nodes) + 2.0 * (np.asarray(e) - 0.4)  # heterogeneous, negative for some


@pytest.mark.parametrize("exclude", [True, False])
def test_singletons_and_incremental_gains_equal_direct_evaluation(exclude):
    for seed in range(4):
        network, worlds = _small(seed)
        objective = CausalObjective(network, tau_exposure, worlds, exclude_seeds=exclude)
        direct = [objective.value(np.array([v]))[0] for v in range(network.n)]
        assert np.allclose(objective.singleton_values(), direct, atol=1e-9)
        state, chosen = objective.start(), []
        for v in (3, 7, 3 + 1, 0):
            before = objective.value(np.array(chosen))[0] if chosen else 0.0
            expected = objective.value(np.array([*chosen, v]))[0] - before
            assert state.gain(v) == pytest.approx(expected, abs=1e-9)
            state.add(v)
            chosen.append(v)


def test_greedy_is_within_1_minus_1_over_e_of_brute_force_for_constant_effects():
    for seed in range(5):
        network, worlds = _small(seed, n=10)
        objective = CausalObjective(
            network, lambda nodes, e: np.full(len(nodes), 0.7), worlds, exclude_seeds=False
        )
        for k in (2, 3):
            greedy = objective.value(np.array(g_cauim(objective, k).seeds))[0]
            best = max(
                objective.value(np.array(s))[0] for s in itertools.combinations(range(10), k)
            )
            assert greedy >= (1 - 1 / math.e) * best - 1e-9


def test_with_unit_effects_greedy_is_celf_on_spread():
    from paperplug_cauim import celf_spread

    network, worlds = _small(1, n=30, p=0.2)
    ones = CausalObjective(
        network, lambda nodes, e: np.ones(len(nodes)), worlds, exclude_seeds=False
    )
    assert g_cauim(ones, 4).seeds == celf_spread(network, worlds, 4).seeds
    # and its value is the spread: the mean number of activated nodes
    seeds = np.array(g_cauim(ones, 4).seeds)
    spread = np.mean([worlds.activated(seeds, r).sum() for r in range(worlds.n_worlds)])
    assert ones.value(seeds)[0] == pytest.approx(spread)
