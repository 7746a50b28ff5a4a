"""The causal objective against exact enumeration of every live-edge world (forward worlds and
reverse samples both agree with it), our cascades against cynetdiff's, singletons and
incremental gains against direct evaluation, and the greedy against the brute-force best
k-set of the exact objective."""

import itertools
import math

import networkx as nx
import numpy as np
import pytest
from paperplug_cauim import (
    CausalObjective,
    LiveEdgeWorlds,
    ReverseObjective,
    ReverseSamples,
    celf_spread,
    from_networkx,
    g_cauim,
)


def tau_exposure(nodes, e):
    return np.sin(nodes) + 2.0 * (np.asarray(e) - 0.4)  # heterogeneous, negative for some


def exact(network, tau, seeds, exclude_seeds=True):
    """σ_τ(S) over all 2^arcs live-edge worlds, each weighted by its probability: reach by
    boolean matrix squaring, exposure = active distinct in-neighbours / distinct ones."""
    n, arcs = network.n, network.n_arcs
    masks = np.array(list(itertools.product([False, True], repeat=arcs)))  # (worlds, arcs)
    weight = np.prod(np.where(masks, network.prob, 1 - network.prob), axis=1)
    reach = np.zeros((len(masks), n, n), dtype=bool)
    reach[:, np.arange(n), np.arange(n)] = True
    for a in range(arcs):
        reach[masks[:, a], network.source[a], network.target[a]] = True
    for _ in range(math.ceil(math.log2(n)) + 1):
        reach = (reach.astype(np.int32) @ reach.astype(np.int32)) > 0
    active = reach[:, list(seeds), :].any(axis=1)  # (worlds, n)
    adjacency = network.adjacency.toarray()
    degree = adjacency.sum(0)
    counts = active.astype(int) @ adjacency
    e = np.divide(counts, degree, out=np.zeros(counts.shape), where=degree > 0)
    values = tau(np.tile(np.arange(n), (len(masks), 1)).ravel(), e.ravel()).reshape(e.shape)
    scored = active.copy()
    if exclude_seeds:
        scored[:, list(seeds)] = False
    return float(weight @ (values * scored).sum(1))


def small_graphs():
    """Six small graphs of at most 12 arcs: directed, undirected, a cycle, a multigraph."""
    yield from_networkx(nx.gnp_random_graph(6, 0.3, seed=1, directed=True), p=0.4)
    yield from_networkx(nx.gnp_random_graph(6, 0.3, seed=9, directed=True), p=0.3)
    yield from_networkx(nx.path_graph(5), p=0.6)
    yield from_networkx(nx.cycle_graph(5, create_using=nx.DiGraph), p=0.7)
    yield from_networkx(nx.star_graph(4), p=0.5)
    yield from_networkx(nx.MultiDiGraph([(0, 1), (0, 1), (2, 1), (1, 3), (3, 4), (2, 4)]), p=0.5)


@pytest.mark.parametrize("exclude", [True, False])
def test_estimates_agree_with_exact_enumeration_of_live_edge_worlds(exclude):
    for g, network in enumerate(small_graphs()):
        assert network.n_arcs <= 12
        worlds = CausalObjective(
            network, tau_exposure, LiveEdgeWorlds(network, 400, seed=g), exclude_seeds=exclude
        )
        samples = ReverseObjective(
            network, tau_exposure, ReverseSamples(network, 4000, seed=g), exclude_seeds=exclude
        )
        for seeds in ([0], [1, 3], [0, 2, 4]):
            truth = exact(network, tau_exposure, seeds, exclude)
            for estimate, se in (worlds.value(np.array(seeds)), samples.value(np.array(seeds))):
                assert abs(estimate - truth) < 4 * se + 1e-9, (g, seeds, estimate, truth, se)


def test_our_cascades_agree_with_cynetdiff_on_spread():
    from cynetdiff.utils import networkx_to_ic_model

    graph = nx.les_miserables_graph()
    for _, _, d in graph.edges(data=True):
        d.pop("weight", None)
    network = from_networkx(graph, p=0.15)
    seeds = [network.labels.index(v) for v in ("Valjean", "Gavroche", "Marius")]
    worlds = LiveEdgeWorlds(network, 2000, seed=0)
    ours = np.array([worlds.activated(np.array(seeds), r).sum() for r in range(2000)])
    model, mapping = networkx_to_ic_model(graph, activation_prob=0.15, rng=1)
    model.set_seeds([mapping[network.labels[s]] for s in seeds])
    theirs = []
    for _ in range(2000):
        model.reset_model()
        model.advance_until_completion()
        theirs.append(model.get_num_activated_nodes())
    se = math.sqrt(ours.var() / len(ours) + np.var(theirs) / len(theirs))
    assert abs(ours.mean() - np.mean(theirs)) < 4 * se, (ours.mean(), np.mean(theirs), se)


def _small(seed, n=12, p=0.3):
    graph = nx.gnp_random_graph(n, 0.3, seed=seed, directed=True)
    return from_networkx(graph, p=p)


@pytest.mark.parametrize("exclude", [True, False])
def test_singletons_and_incremental_gains_equal_direct_evaluation(exclude):
    for seed in range(3):
        network = _small(seed)
        for objective in (
            CausalObjective(network, tau_exposure, LiveEdgeWorlds(network, 60, seed=seed),
                            exclude_seeds=exclude),
            ReverseObjective(network, tau_exposure, ReverseSamples(network, 800, seed=seed),
                             exclude_seeds=exclude),
        ):  # fmt: skip
            direct = [objective.value(np.array([v]))[0] for v in range(network.n)]
            assert np.allclose(objective.singleton_values(), direct, atol=1e-9)
            state, chosen = objective.start(), []
            for v in (3, 7, 4, 0):
                before = objective.value(np.array(chosen))[0] if chosen else 0.0
                expected = objective.value(np.array([*chosen, v]))[0] - before
                assert state.gain(v) == pytest.approx(expected, abs=1e-9)
                state.add(v)
                chosen.append(v)


def test_greedy_against_the_brute_force_best_k_set_of_the_exact_objective():
    """With a constant non-negative effect and seeds counted (monotone submodular), the
    greedy's seeds are within 1 − 1/e of the brute-force optimum; with exposure-dependent,
    sometimes negative effects and seeds excluded there is no guarantee: measured ≥ 0.86
    (k = 3 on the path), 0.98 on average over the 24 cases."""
    constant = lambda nodes, e: np.full(len(nodes), 0.7)  # noqa: E731
    ratios = []
    for g, network in enumerate(small_graphs()):
        for (tau, exclude, bound), k in itertools.product(
            ((constant, False, 1 - 1 / math.e), (tau_exposure, True, 0.85)), (2, 3)
        ):
            objective = ReverseObjective(
                network, tau, ReverseSamples(network, 20000, seed=g), exclude_seeds=exclude
            )
            best = max(
                exact(network, tau, s, exclude) for s in itertools.combinations(range(network.n), k)
            )
            greedy = exact(network, tau, g_cauim(objective, k).seeds, exclude)
            assert greedy >= bound * best - 1e-9, (g, exclude, greedy, best)
            ratios.append(greedy / best)
    assert len(ratios) == 24 and np.mean(ratios) > 0.97


def test_with_unit_effects_greedy_is_celf_on_spread():
    network = _small(1, n=30, p=0.2)
    worlds = LiveEdgeWorlds(network, 60, seed=1)
    ones = CausalObjective(
        network, lambda nodes, e: np.ones(len(nodes)), worlds, exclude_seeds=False
    )
    assert g_cauim(ones, 4).seeds == celf_spread(network, worlds, 4).seeds
    seeds = np.array(g_cauim(ones, 4).seeds)
    spread = np.mean([worlds.activated(seeds, r).sum() for r in range(worlds.n_worlds)])
    assert ones.value(seeds)[0] == pytest.approx(spread)
