"""CauIM beside IMM (our implementation of Tang, Shi & Xiao 2015, `imm.py`: no IM library
installs as a wheel here without pinning an old networkx or building C++ for 20+ minutes),
CELF and degree: the true causal gain of each seed set on held-out cascades, paired with
G-CauIM's, and wall time; A-CauIM against G-CauIM on five graphs; then the scale run
(G(10,000, 50,000), p = 0.1, k = 20).

make bench PKG=cauim [ARGS="--skip-scale"]
make bench PKG=cauim ARGS="--paper-regime"   # the paper's: hypergraph contact process, in-sample
"""

from __future__ import annotations

import argparse
import warnings

import networkx as nx
import numpy as np
from imm import imm
from paperplug_cauim import (
    CausalObjective,
    ExposureGrid,
    LiveEdgeWorlds,
    TLearner,
    a_cauim,
    celf_spread,
    checked_greedy,
    from_networkx,
    top_degree,
)
from paperplug_cauim.embedded import K, les_miserables, past_campaigns, scale_graph

from paperplug.harness import Timer, single_thread, table


def paired(values: dict[str, np.ndarray], reference: str) -> dict[str, str]:
    """mean ± SE of each method's held-out gain, and `reference` minus it in paired SEs."""
    out = {}
    for name, v in values.items():
        d = values[reference] - v
        z = d.mean() / (d.std(ddof=1) / np.sqrt(len(d))) if name != reference else float("nan")
        out[name] = f"{v.mean():.2f} ± {v.std(ddof=1) / np.sqrt(len(v)):.2f}" + (
            "" if name == reference else f" ({z:+.1f} SE)"
        )
    return out


def compare(network, tau_grid, true_tau, k, n_eval, seed, *, max_samples, celf=True):
    held_out = LiveEdgeWorlds(network, n_eval, seed=seed + 99)
    truth = CausalObjective(network, true_tau, held_out)
    spread = CausalObjective(network, lambda n, e: np.ones(len(n)), held_out, exclude_seeds=False)
    runs, notes = {}, {}
    with Timer() as t, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        selection, checked, _ = checked_greedy(
            network, tau_grid, k, seed=seed, start=8192, max_samples=max_samples
        )
    runs["G-CauIM"] = (selection.seeds, t.seconds)
    notes["G-CauIM"] = (
        f"in-sample {checked.in_sample:.2f}, held-out samples {checked.held_out:.2f} ± "
        f"{checked.standard_error:.2f} on {checked.samples} samples"
        + (" (check not passed at max_samples)" if caught else "")
    )
    with Timer() as t:
        seeds = a_cauim(network, tau_grid, k, seed=seed).seeds
    runs["A-CauIM"] = (seeds, t.seconds)
    if celf:
        with Timer() as t:
            seeds = celf_spread(network, LiveEdgeWorlds(network, 100, seed=seed + 1), k).seeds
        runs["CELF on spread (100 worlds)"] = (seeds, t.seconds)
    with Timer() as t:
        seeds = imm(network, k, epsilon=0.5, seed=seed)
    runs["IMM (ε = 0.5)"] = (seeds, t.seconds)
    runs["degree"] = (top_degree(network, k).seeds, 0.0)
    gains = {
        name: np.array([truth.world_value(np.array(s), r) for r in range(n_eval)])
        for name, (s, _) in runs.items()
    }
    shown = paired(gains, "G-CauIM")
    rows = [
        [name, shown[name], spread.value(np.array(s))[0], seconds]
        for name, (s, seconds) in runs.items()
    ]
    return rows, notes["G-CauIM"]


def five_graphs(seed: int) -> None:
    """A-CauIM / G-CauIM on true causal gain (2000 held-out cascades), k = 5."""
    lesmis = nx.les_miserables_graph()
    graphs = {
        "karate": nx.karate_club_graph(),
        "florentine": nx.florentine_families_graph(),
        "Les Misérables": lesmis,
        "Watts–Strogatz (150, 4, 0.1)": nx.watts_strogatz_graph(150, 4, 0.1, seed=0),
        "scale-free directed (150)": nx.scale_free_graph(150, seed=0),
    }
    rows = []
    for p in (0.15, 0.3):
        for name, graph in graphs.items():
            graph = graph.copy()
            for *_, data in graph.edges(data=True):
                data.pop("weight", None)
            network = from_networkx(graph, p=p)
            rng = np.random.default_rng(seed)
            x, w = rng.normal(size=(network.n, 3)), np.array([1.0, -1.0, 0.5])

            def tau(nodes, e, x=x, w=w):
                return np.tanh(x[nodes] @ w) + 1.5 * (np.asarray(e) - 0.3)

            grid = ExposureGrid.from_function(tau, network.n)
            truth = CausalObjective(network, tau, LiveEdgeWorlds(network, 2000, seed=seed + 7))
            with Timer() as tg, warnings.catch_warnings():
                warnings.simplefilter("ignore")
                greedy = checked_greedy(network, grid, 5, seed=seed)[0].seeds
            with Timer() as ta:
                gradient = a_cauim(network, grid, 5, seed=seed).seeds
            g = truth.value(np.array(greedy))[0]
            a = truth.value(np.array(gradient))[0]
            d = truth.value(np.array(top_degree(network, 5).seeds))[0]
            rows.append([f"{name}, p = {p}", g, a, a / g, d, tg.seconds, ta.seconds])
    print("\nA-CauIM against G-CauIM, k = 5, true causal gain on 2000 held-out cascades")
    header = ["graph", "G-CauIM", "A-CauIM", "A / G", "degree", "G s", "A s"]
    print(table(rows, header, digits=3), flush=True)


def paper_regime(seeds: list[int], n: int = 300, edges: int = 400, k: int = 10,
                 beta: float = 0.01, steps: int = 25) -> None:  # fmt: skip
    """The paper's regime beside ours: the authors' contact process on a hypergraph of a few
    hundred nodes, seeds chosen on 100 simulated worlds and valued on those same worlds
    (in-sample, as the paper reports) and on 2000 fresh ones (held out)."""
    from paperplug_cauim import Hypergraph, HypergraphObjective, g_cauim

    rows = []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        groups = [rng.choice(n, size=rng.integers(2, 9), replace=False) for _ in range(edges)]
        hyper = Hypergraph(groups, n=n)
        x, w = rng.normal(size=(n, 3)), np.array([1.0, -1.0, 0.5])

        def tau(nodes, e, x=x, w=w):
            return np.tanh(x[nodes] @ w) + 1.5 * (np.asarray(e) - 0.3)

        def ones(nodes, e):
            return np.ones(len(nodes))

        def objective(fn, worlds, world_seed, exclude=True, hyper=hyper):
            return HypergraphObjective(hyper, fn, beta=beta, steps=steps, n_worlds=worlds,
                                       seed=world_seed, exclude_seeds=exclude)  # fmt: skip

        with Timer() as t:
            chosen = {"G-CauIM (100 worlds)": g_cauim(objective(tau, 100, seed), k).seeds}
        spent = {"G-CauIM (100 worlds)": t.seconds}
        with Timer() as t:
            chosen["greedy on spread (100 worlds)"] = g_cauim(
                objective(ones, 100, seed, exclude=False), k
            ).seeds
        spent["greedy on spread (100 worlds)"] = t.seconds
        chosen["degree"] = list(np.argsort(-hyper.degree, kind="stable")[:k])
        chosen["random"] = list(rng.choice(n, size=k, replace=False))
        spent["degree"] = spent["random"] = 0.0
        inside, held = objective(tau, 100, seed), objective(tau, 2000, seed + 1000)
        for name, chosen_seeds in chosen.items():
            a, b = inside.value(np.array(chosen_seeds)), held.value(np.array(chosen_seeds))
            rows.append([seed, name, a[0], a[1], b[0], b[1], spent[name]])
    print(f"\npaper's regime: contact process on a random hypergraph (n = {n}, {edges} hyperedges "
          f"of 2-8 members), β = {beta}, T = {steps}, k = {k}, known effects")  # fmt: skip
    header = ["seed", "method", "in-sample gain", "± SE", "held-out gain (2000 worlds)", "± SE",
              "seconds"]  # fmt: skip
    print(table(rows, header, digits=2), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--skip-scale", action="store_true")
    parser.add_argument("--scale-max-samples", type=int, default=32768)
    parser.add_argument("--paper-regime", action="store_true", help="only the paper's regime")
    parser.add_argument("--regime-seeds", type=int, nargs="+", default=[0, 1, 2])
    args = parser.parse_args()
    single_thread()
    if args.paper_regime:
        paper_regime(args.regime_seeds)
        return
    header = ["method", "true causal gain (G-CauIM minus it, paired SE)", "spread", "seconds"]

    scenario = les_miserables(args.seed)
    records = past_campaigns(scenario, seed=args.seed)
    grid = TLearner(random_state=args.seed).fit(records["covariates"], records["exposure"], records["treated"],
                                               records["y"]).grid(scenario.covariates)  # fmt: skip
    rows, note = compare(scenario.network, grid, scenario.true_tau, K, 1000, args.seed,
                         max_samples=65536)  # fmt: skip
    print(
        f"Les Misérables (77 nodes), IC p = 0.15, k = {K}, effects estimated from 150 campaigns, 1000 held-out cascades"
    )
    print(table(rows, header, digits=2))
    print(f"G-CauIM: {note}", flush=True)
    five_graphs(args.seed)

    if args.skip_scale:
        return
    network = from_networkx(scale_graph(seed=args.seed), p=0.1)
    rng = np.random.default_rng(args.seed)
    covariates, weights = rng.normal(size=(network.n, 3)), np.array([1.0, -1.0, 0.5])

    def scale_tau(nodes: np.ndarray, e: np.ndarray) -> np.ndarray:
        return np.tanh(covariates[nodes] @ weights) + 1.5 * (np.asarray(e) - 0.1)

    rows, note = compare(network, ExposureGrid.from_function(scale_tau, network.n), scale_tau,
                         20, 150, args.seed, max_samples=args.scale_max_samples, celf=False)  # fmt: skip
    print(
        "\nscale: G(n = 10,000, m = 50,000), IC p = 0.1, k = 20, known effects, 150 held-out cascades"
    )
    print(table(rows, header, digits=2))
    print(f"G-CauIM: {note}")


if __name__ == "__main__":
    main()
