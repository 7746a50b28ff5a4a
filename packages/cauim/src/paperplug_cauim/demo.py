"""Embedded default: Les Misérables with a heterogeneous, exposure-dependent (sometimes negative)
effect and 150 past random campaigns. Effects estimated by a T-learner; seeds by G-CauIM
(reverse samples, their number chosen by a held-out check), A-CauIM, CELF on plain spread, degree, ITE top-k and random; true causal gain and spread on
1000 held-out cascades; a drawing of the seeds. Under a minute."""

from __future__ import annotations

import numpy as np

from paperplug.harness import Timer, demo_parser, pyplot, save_figure, single_thread, table
from paperplug_cauim.baselines import celf_spread, random_seeds, top_degree, top_effect
from paperplug_cauim.embedded import K, les_miserables, past_campaigns
from paperplug_cauim.exposure import ExposureGrid
from paperplug_cauim.holdout import checked_greedy
from paperplug_cauim.ite import TLearner
from paperplug_cauim.objective import CausalObjective
from paperplug_cauim.proxy import a_cauim
from paperplug_cauim.worlds import LiveEdgeWorlds


def main(argv: list[str] | None = None) -> int:
    args = demo_parser("cauim", __doc__).parse_args(argv)
    single_thread()
    scenario = les_miserables(args.seed)
    network = scenario.network
    records = past_campaigns(scenario, seed=args.seed)
    with Timer() as fit:
        learner = TLearner(random_state=args.seed).fit(
            records["covariates"], records["exposure"], records["treated"], records["y"]
        )
        grid = learner.grid(scenario.covariates)
    truth = ExposureGrid.from_function(scenario.true_tau, network.n)
    nodes = np.arange(network.n)
    rmse = np.sqrt(
        np.mean((grid(nodes, np.full(network.n, 0.3)) - truth(nodes, np.full(network.n, 0.3))) ** 2)
    )
    print(
        f"T-learner on {len(records['y'])} records ({fit.seconds:.1f} s): RMSE of τ̂ at exposure 0.3 = {rmse:.3f}"
    )

    worlds = LiveEdgeWorlds(network, 100, seed=args.seed + 1)  # CELF's Monte Carlo
    held_out = LiveEdgeWorlds(network, 1000, seed=args.seed + 99)
    true_gain = CausalObjective(network, scenario.true_tau, held_out)
    spread = CausalObjective(network, lambda n, e: np.ones(len(n)), held_out, exclude_seeds=False)
    methods = {
        "G-CauIM": lambda: checked_greedy(network, grid, K, seed=args.seed + 1)[0],
        "A-CauIM": lambda: a_cauim(network, grid, K, seed=args.seed),
        "CELF on spread": lambda: celf_spread(network, worlds, K),
        "degree": lambda: top_degree(network, K),
        "ITE top-k": lambda: top_effect(grid, K),
        "random": lambda: random_seeds(network, K, args.seed),
    }
    rows, chosen = [], {}
    for name, run in methods.items():
        with Timer() as t:
            selection = run()
        seeds = np.array(selection.seeds)
        gain, se = true_gain.value(seeds)
        chosen[name] = selection.seeds
        rows.append([name, f"{gain:.2f} ± {se:.2f}", spread.value(seeds)[0], t.seconds,
                     ", ".join(str(network.labels[s]) for s in seeds)])  # fmt: skip
    print(f"\nk = {K} seeds, IC p = 0.15; true causal gain and spread on 1000 held-out cascades:")
    print(table(rows, ["method", "true causal gain", "spread", "seconds", "seeds"], digits=2))
    _draw(scenario, chosen, args.out / "seeds.png")
    return 0


def _draw(scenario, chosen: dict, path) -> None:
    import networkx as nx

    network = scenario.network
    graph = nx.Graph()
    graph.add_nodes_from(range(network.n))
    graph.add_edges_from(zip(network.source.tolist(), network.target.tolist(), strict=True))
    position = nx.spring_layout(graph, seed=0)
    effect = np.tanh(scenario.covariates @ scenario.weights)
    fig, axes = pyplot().subplots(1, 2, figsize=(12, 5))
    for ax, name in zip(axes, ("G-CauIM", "CELF on spread"), strict=True):
        nx.draw_networkx_edges(graph, position, ax=ax, alpha=0.2)
        nodes = nx.draw_networkx_nodes(
            graph, position, ax=ax, node_size=40, node_color=effect, cmap="coolwarm"
        )
        nx.draw_networkx_nodes(graph, position, nodelist=chosen[name], ax=ax, node_size=180,
                               node_color="none", edgecolors="k", linewidths=2)  # fmt: skip
        ax.set_title(f"{name} seeds (ringed); colour: baseline effect tanh(x·w)")
        ax.axis("off")
    fig.colorbar(nodes, ax=axes, shrink=0.7)
    save_figure(fig, path)


if __name__ == "__main__":
    raise SystemExit(main())
