"""CauIM beside pynetim (IMM and CELF) on the same graph and probabilities: the spread of their
seeds and ours (a sanity check), the true causal gain of each seed set on held-out cascades,
and wall time; then the scale run (10k nodes, 50k edges, k = 20).

make bench PKG=cauim [ARGS="--skip-scale"]
"""

from __future__ import annotations

import argparse
import contextlib
import io

import networkx as nx
import numpy as np
from paperplug_cauim import (
    CausalObjective,
    ExposureGrid,
    LiveEdgeWorlds,
    TLearner,
    a_cauim,
    celf_spread,
    from_networkx,
    g_cauim,
)
from paperplug_cauim.embedded import K, les_miserables, past_campaigns, scale_graph

from paperplug.harness import Timer, single_thread, table


def pynetim_seeds(network, k: int, algorithm: str) -> tuple[list[int], float]:
    """IMM (ε = 0.5) or CELF (1000 rounds) from pynetim on our arcs and probabilities."""
    import pynetim

    digraph = nx.DiGraph()
    digraph.add_nodes_from(range(network.n))
    for u, v, p in zip(
        network.source.tolist(), network.target.tolist(), network.prob.tolist(), strict=True
    ):
        digraph.add_edge(u, v, weight=p)
    graph = pynetim.from_networkx(digraph)
    with Timer() as t, contextlib.redirect_stderr(io.StringIO()):
        if algorithm == "IMM":
            internal = pynetim.IMMAlgorithm(graph, "IC", epsilon=0.5, random_seed=0).run(k)
        else:
            internal = pynetim.CELFAlgorithm(graph, "IC").run(k, mc_rounds=1000)
    return sorted(graph.internal_to_original[i] for i in internal), t.seconds


def paired(values: dict[str, np.ndarray], reference: str) -> dict[str, str]:
    """mean ± SE of each method's held-out gain, and its paired difference to `reference` in SEs."""
    out = {}
    for name, v in values.items():
        d = values[reference] - v
        z = d.mean() / (d.std(ddof=1) / np.sqrt(len(d))) if name != reference else float("nan")
        out[name] = f"{v.mean():.2f} ± {v.std(ddof=1) / np.sqrt(len(v)):.2f}" + (
            "" if name == reference else f" ({z:+.1f} SE)"
        )
    return out


def compare(network, tau_grid, true_tau, k: int, n_eval: int, seed: int) -> list[list]:
    worlds = LiveEdgeWorlds(network, 100, seed=seed + 1)
    held_out = LiveEdgeWorlds(network, n_eval, seed=seed + 99)
    truth = CausalObjective(network, true_tau, held_out)
    spread = CausalObjective(network, lambda n, e: np.ones(len(n)), held_out, exclude_seeds=False)
    runs = {}
    with Timer() as t:
        runs["G-CauIM"] = (g_cauim(CausalObjective(network, tau_grid, worlds), k).seeds, None)
    runs["G-CauIM"] = (runs["G-CauIM"][0], t.seconds)
    with Timer() as t:
        runs["A-CauIM"] = (a_cauim(network, tau_grid, k, seed=seed).seeds, None)
    runs["A-CauIM"] = (runs["A-CauIM"][0], t.seconds)
    with Timer() as t:
        runs["CELF on spread (ours)"] = (celf_spread(network, worlds, k).seeds, None)
    runs["CELF on spread (ours)"] = (runs["CELF on spread (ours)"][0], t.seconds)
    runs["pynetim IMM"] = pynetim_seeds(network, k, "IMM")
    if network.n <= 1000:
        runs["pynetim CELF"] = pynetim_seeds(network, k, "CELF")
    gains = {
        name: np.array([truth.world_value(np.array(s), r) for r in range(n_eval)])
        for name, (s, _) in runs.items()
    }
    shown = paired(gains, "G-CauIM")
    return [
        [name, shown[name], spread.value(np.array(s))[0], seconds]
        for name, (s, seconds) in runs.items()
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--skip-scale", action="store_true")
    args = parser.parse_args()
    single_thread()
    header = ["method", "true causal gain (paired Δ to G-CauIM)", "spread", "seconds"]

    scenario = les_miserables(args.seed)
    records = past_campaigns(scenario, seed=args.seed)
    grid = TLearner(random_state=args.seed).fit(records["covariates"], records["exposure"], records["treated"],
                                               records["y"]).grid(scenario.covariates)  # fmt: skip
    rows = compare(scenario.network, grid, scenario.true_tau, K, 1000, args.seed)
    print(
        f"Les Misérables (77 nodes), IC p = 0.15, k = {K}, effects estimated from 150 campaigns, 1000 held-out cascades"
    )
    print(table(rows, header, digits=2), flush=True)

    if args.skip_scale:
        return
    network = from_networkx(scale_graph(seed=args.seed), p=0.1)
    rng = np.random.default_rng(args.seed)
    covariates, weights = rng.normal(size=(network.n, 3)), np.array([1.0, -1.0, 0.5])

    def scale_tau(nodes: np.ndarray, e: np.ndarray) -> np.ndarray:
        return np.tanh(covariates[nodes] @ weights) + 1.5 * (np.asarray(e) - 0.1)

    rows = compare(
        network, ExposureGrid.from_function(scale_tau, network.n), scale_tau, 20, 200, args.seed
    )
    print(
        "\nscale: G(n = 10,000, m = 50,000), IC p = 0.1, k = 20, known effects, 200 held-out cascades"
    )
    print(table(rows, header, digits=2))


if __name__ == "__main__":
    main()
