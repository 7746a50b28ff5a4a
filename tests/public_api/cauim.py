"""CauIM's public API: one valid call of each callable, for the battery (a 6-node path at
p = 0.5, an effect of node and exposure on a 3-point grid, a few worlds and reverse samples,
a T-learner on 20 records)."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pandas as pd
import paperplug_cauim as c
from scipy import sparse
from sklearn.linear_model import LinearRegression

from paperplug.testing import Sweep

REASONS = {
    "CheckedValue": "a result type (what checked_greedy returns)",
    "SeedSelection": "a result type (what the seed selections return)",
}
GRAPH = nx.path_graph(6)
ADJACENCY = sparse.csr_matrix(nx.to_scipy_sparse_array(GRAPH))
EMPTY_SEEDS = {"seeds:empty": "the empty seed set is a campaign too: its gain is 0"}
P = {"p": [1.5, -0.1, "no-such-attribute"]}


def tau(nodes: np.ndarray, e: np.ndarray) -> np.ndarray:
    return 0.5 + 0.1 * np.asarray(nodes) - np.asarray(e)


def _records(n: int = 20) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(0)
    x, e = rng.normal(size=(n, 2)), rng.random(n)
    t = np.arange(n) % 2 == 0
    return x, e, t, x[:, 0] + t * (1 + e)


#: why a valid call changes an argument it is given (Sweep.mutates)
MEMO = "the live-edge worlds memoise each seed's reach set (a cache: the values are unchanged)"


def sweeps() -> dict[str, Sweep]:
    network = c.from_networkx(GRAPH, p=0.5)
    grid = c.ExposureGrid.from_function(tau, network.n, points=3)
    worlds = c.LiveEdgeWorlds(network, 4, seed=0)
    samples = c.ReverseSamples(network, 50, seed=0)
    objective = c.CausalObjective(network, grid, worlds)
    reverse = c.ReverseObjective(network, grid, samples)
    x, e, t, y = _records()
    learner = c.TLearner(LinearRegression()).fit(x, e, t, y)
    frame = pd.DataFrame({"a": x[:, 0], "b": x[:, 1], "exposure": e, "treated": t, "y": y})
    seeds, k = np.array([0, 3]), {"k": [0, 7]}
    hyper = c.Hypergraph([[0, 1, 2], [2, 3, 4]])
    hyper_objective = c.HypergraphObjective(hyper, tau, steps=2, n_worlds=2, seed=0)
    labelled = c.DiffusionNetwork(
        3, np.array([0, 1]), np.array([1, 2]), np.full(2, 0.5), list("abc")
    )
    return {
        "DiffusionNetwork": Sweep(
            c.DiffusionNetwork,
            (3, np.array([0, 1]), np.array([1, 2]), np.array([0.5, 0.5]), ["a", "b", "c"]),
            bad_params={
                "n": [-1, 2],
                "source": [np.array([0, 3])],
                "target": [np.array([1, -1])],
                "prob": [np.array([0.5, 1.5])],
                "labels": [["a"]],
            },
        ),
        "from_networkx": Sweep(
            c.from_networkx, (GRAPH,), {"p": 0.5}, bad_params={**P, "name": [""]}
        ),
        "from_scipy": Sweep(c.from_scipy, (ADJACENCY,), {"p": 0.5}, bad_params={**P, "name": [""]}),
        "to_network": Sweep(c.to_network, (GRAPH,), {"p": 0.5}, bad_params={**P, "name": [""]}),
        "ReverseSamples": Sweep(
            c.ReverseSamples,
            (network, 20),
            {"seed": 0},
            bad_params={"n_samples": [0], "seed": [-1]},
        ),
        "ReverseSamples.extend": Sweep(
            c.ReverseSamples(network, 10).extend, (5,), bad_params={"n_samples": [-1]}
        ),
        "ReverseObjective": Sweep(c.ReverseObjective, (network, grid, samples)),
        "ReverseObjective.value": Sweep(
            reverse.value, (seeds,), bad_params={"seeds": [[6], [-1]]}, accepts=EMPTY_SEEDS
        ),
        "checked_greedy": Sweep(
            c.checked_greedy,
            (network, grid, 2),
            {"seed": 0, "start": 16, "max_samples": 32, "tolerance": 10.0},
            bad_params={
                **k,
                "seed": [-1],
                "start": [1],
                "max_samples": [1],
                "tolerance": [-0.1],
            },
        ),
        "proxy_objective": Sweep(
            c.proxy_objective,
            (network, grid.values, 2, np.zeros(6), 3),
            bad_params={
                **k,
                "grid": [grid.values[:5]],
                "theta": [np.zeros(5)],
                "cascade_steps": [0],
            },
            width=False,  # grid: any number of exposure points
        ),
        "LiveEdgeWorlds": Sweep(
            c.LiveEdgeWorlds, (network, 3), {"seed": 0}, bad_params={"n_worlds": [0], "seed": [-1]}
        ),
        "ExposureGrid": Sweep(
            c.ExposureGrid, (grid.values,), bad_params={"values": [grid.values[:, :1]]}, width=False
        ),
        "ExposureGrid.from_function": Sweep(
            c.ExposureGrid.from_function,
            (tau, 6),
            {"points": 3},
            bad_params={"n": [0], "points": [1], "name": [""]},
        ),
        "ExposureGrid.__call__": Sweep(
            grid,
            (np.arange(6), np.full(6, 0.5)),
            bad_params={"nodes": [[6]], "e": [np.full(5, 0.5)]},
        ),
        "active_exposure": Sweep(
            c.active_exposure,
            (network, np.array([True, False, False, True, False, False])),
            bad_params={"active": [np.ones(5, dtype=bool)]},
        ),
        "TLearner": Sweep(
            c.TLearner,
            (LinearRegression(),),
            {"random_state": 0},
            bad_params={"random_state": [-1]},
        ),
        "TLearner.fit": Sweep(
            c.TLearner(LinearRegression()).fit,
            (x, e, t, y),
            bad_params={"exposure": [e + 1], "treated": [np.ones(20, dtype=bool)]},
            width=False,
        ),
        "TLearner.predict": Sweep(learner.predict, (x, e), bad_params={"exposure": [e - 1]}),
        "TLearner.grid": Sweep(learner.grid, (x[:4],), {"points": 3}, bad_params={"points": [1]}),
        "records_from_frame": Sweep(
            c.records_from_frame,
            (frame, ["a", "b"]),
            bad_params={
                "covariates": [["z"], []],
                "exposure": ["z"],
                "treated": ["z"],
                "outcome": ["z"],
            },
        ),
        "CausalObjective": Sweep(c.CausalObjective, (network, grid, worlds)),
        "CausalObjective.value": Sweep(
            objective.value, (seeds,), bad_params={"seeds": [[6], [-1]]}, accepts=EMPTY_SEEDS
        ),
        "g_cauim": Sweep(
            c.g_cauim,
            (objective, 2),
            {"candidates": np.array([0, 2, 4])},
            bad_params={**k, "candidates": [[6]]},
            mutates={"objective": MEMO},
        ),
        "a_cauim": Sweep(
            c.a_cauim,
            (network, grid, 2),
            {"steps": 3, "cascade_steps": 2, "seed": 0},
            bad_params={**k, "steps": [0], "lr": [0.0], "cascade_steps": [0], "seed": [-1]},
        ),
        "message_passing": Sweep(
            c.message_passing,
            (network, np.full(6, 0.2), 3),
            bad_params={"x": [np.full(6, 1.5), np.full(5, 0.2)], "steps": [0]},
        ),
        "Hypergraph": Sweep(
            c.Hypergraph,
            ([[0, 1, 2], [2, 3]],),
            {"n": 5},
            bad_params={"incidence": [[[0, -1]], [["a"]]], "n": [0, 3]},
        ),
        "HypergraphObjective": Sweep(
            c.HypergraphObjective,
            (c.Hypergraph([[0, 1, 2], [2, 3]]), tau),
            {"beta": 0.5, "steps": 2, "n_worlds": 2, "seed": 0},
            bad_params={"beta": [0.0, 1.5], "steps": [0], "n_worlds": [0], "seed": [-1]},
        ),
        "celf_spread": Sweep(
            c.celf_spread,
            (network, worlds, 2),
            bad_params=k,
            mutates={"worlds": MEMO},
        ),
        "top_degree": Sweep(c.top_degree, (network, 2), bad_params=k),
        "top_effect": Sweep(
            c.top_effect, (grid, 2), {"exposure": 0.3}, bad_params={**k, "exposure": [-0.1, 1.5]}
        ),
        "random_seeds": Sweep(c.random_seeds, (network, 2, 0), bad_params={**k, "seed": [-1]}),
        "CausalInfluenceMaximization.effects": Sweep(
            c.CausalInfluenceMaximization(grid_points=3).effects,
            (network, {"tau": tau}),
            bad_params={"problem": [{}, {"tau": 3}, {"covariates": np.zeros((6, 2))}]},
        ),
        "Hypergraph.simulate": Sweep(
            hyper.simulate,
            (np.array([0]), 0.5, 2, np.random.default_rng(0)),
            bad_params={
                "seeds": [[5], [-1]],
                "beta": [0.0, 1.5],
                "steps": [0],
                "rng": [0],
            },
            accepts={"seeds:empty": "no seeds activate no node: an all-False mask"},
        ),
        "HypergraphObjective.value": Sweep(
            hyper_objective.value, (seeds,), bad_params={"seeds": [[5], [-1]]}, accepts=EMPTY_SEEDS
        ),
        "HypergraphObjective.world_value": Sweep(
            hyper_objective.world_value,
            (seeds, 1),
            bad_params={"seeds": [[5], [-1]], "world": [-1, 2]},
            accepts=EMPTY_SEEDS,
        ),
        "CausalObjective.world_value": Sweep(
            objective.world_value,
            (seeds, 1),
            bad_params={"seeds": [[6], [-1]], "world": [-1, 4]},
            accepts=EMPTY_SEEDS,
        ),
        "LiveEdgeWorlds.activated": Sweep(
            worlds.activated,
            (seeds, 1),
            bad_params={"seeds": [[6], [-1]], "world": [-1, 4]},
            accepts={"seeds:empty": "no seeds reach no node: an all-False mask"},
        ),
        "LiveEdgeWorlds.reach_matrix": Sweep(
            worlds.reach_matrix, (1,), bad_params={"world": [-1, 4]}
        ),
        "DiffusionNetwork.index": Sweep(
            labelled.index,
            (["a", "c"],),
            bad_params={"nodes": [["z"], "ac", [["a"]]]},
        ),
    }
