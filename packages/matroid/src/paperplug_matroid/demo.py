"""Embedded default: a contested market's fair point, lottery and integral allocation; the
adversarial family against the C − 1 bound; the random-colouring trend (plot). Seconds."""

from __future__ import annotations

from paperplug.harness import Timer, demo_parser, pyplot, save_figure, table
from paperplug_matroid.characterisation import fair_point
from paperplug_matroid.embedded import contested_market, worst_case_market
from paperplug_matroid.integral import integral_allocation
from paperplug_matroid.lottery import fair_lottery
from paperplug_matroid.markets import random_colouring_trend

SIZES = (10, 30, 100, 300, 1000)
REGIMES = {
    "balanced (1/3 each)": (1 / 3, 1 / 3, 1 / 3),
    "dominant (0.8, 0.1, 0.1)": (0.8, 0.1, 0.1),
}


def main(argv: list[str] | None = None) -> int:
    parser = demo_parser("matroid", __doc__)
    parser.add_argument("--trials", type=int, default=40, help="random markets per size")
    args = parser.parse_args(argv)

    biadjacency, groups = contested_market(60, args.seed)
    with Timer() as timer:
        point = fair_point(biadjacency, groups)
        lottery = fair_lottery(biadjacency, groups, point)
        integral = integral_allocation(biadjacency, groups, point)
    print(
        f"contested market: 60 agents, {biadjacency.shape[1]} jobs ({timer.seconds * 1000:.0f} ms for all three)\n"
    )
    rows = [
        [c, point.group_ranks[c], point.quotas[c], lottery.marginals[c], integral.counts[c]]
        for c in point.quotas
    ]
    print(
        table(
            rows,
            ["group", "r(G_c) alone", "fair quota y*_c", "lottery E[served]", "integral"],
            digits=3,
        )
    )
    print(
        f"\nr(N) = {point.max_size}, λ* = {point.exact['lambda_star']}, tight set {point.tight_set}, "
        f"fair size {point.fair_size:.2f}, PoF = {point.pof:.3f}; integral allocation serves "
        f"{len(integral.agents)} (rounding gap {integral.rounding_gap:.2f}); lottery over "
        f"{len(lottery.allocations)} allocations with p = {[round(p, 3) for p in lottery.probabilities]}"
    )

    rows = []
    for M in (1, 5, 20, 100, 1000):
        worst = fair_point(*worst_case_market(M))
        rows.append([M, worst.pof, 2 * (M + 1) / (M + 2), 2])
    print("\nadversarial family (C = 3): PoF against the closed form and the bound C − 1")
    print(table(rows, ["M", "PoF", "2(M+1)/(M+2)", "C − 1"], digits=4))

    print(f"\nrandom markets (n agents, n jobs, mean degree 1), {args.trials} colourings per size:")
    trends = {}
    rows = []
    for name, shares in REGIMES.items():
        trends[name] = random_colouring_trend(
            SIZES, shares, degree=1.0, trials=args.trials, seed=args.seed
        )
        rows += [
            [name, t.n_agents, t.mean_pof, t.max_pof, t.share_equal_to_one] for t in trends[name]
        ]
    print(table(rows, ["groups", "n", "mean PoF", "max PoF", "share PoF = 1"], digits=4))

    fig, ax = pyplot().subplots(figsize=(6, 3.5))
    for name, trend in trends.items():
        ax.plot([t.n_agents for t in trend], [t.mean_pof for t in trend], marker="o", label=name)
    ax.set(xscale="log", xlabel="agents n (= jobs)", ylabel="mean price of fairness",
           title="Random colourings: PoF → 1 as the market grows")  # fmt: skip
    ax.axhline(1, color="grey", lw=0.8)
    ax.legend()
    save_figure(fig, args.out / "pof_trend.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
