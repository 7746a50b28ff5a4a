"""Embedded default: digits made long-tailed (ratio 50), MAX-3 and SUM-2 bags labelled only by
σ, a balanced test set; the semantic loss beside logit adjustment, CAROT and the batch LP."""

from __future__ import annotations

import numpy as np

from paperplug.harness import (
    Timer,
    demo_parser,
    progress,
    pyplot,
    save_figure,
    single_thread,
    table,
)
from paperplug_nesy.embedded import METHODS, compare, long_tailed_bags
from paperplug_nesy.symbolic import max_of, sum_of


def main(argv: list[str] | None = None) -> int:
    parser = demo_parser("nesy", __doc__)
    parser.add_argument("--rho", type=float, default=50.0, help="imbalance ratio of the digits")
    parser.add_argument("--bags", type=int, default=2000)
    parser.add_argument("--epochs", type=int, default=20)
    args = parser.parse_args(argv)
    single_thread()
    rows, results = [], {}
    with Timer() as timer:
        for sigma in progress([max_of(3), sum_of(2)], "σ"):
            data = long_tailed_bags(sigma, args.bags, rho=args.rho, seed=args.seed)
            out = compare(data, sigma, M=sigma.M, seed=args.seed, epochs=args.epochs)
            results[sigma.name] = out
            for name in METHODS:
                r = out[name]
                rows.append([sigma.name, name, r["balanced"], r["many"], r["medium"], r["few"]])
            rows.append([sigma.name, "‖r̂ − r‖₁ (estimated marginal)", out["SL"]["marginal_l1"],
                         None, None, None])  # fmt: skip
    print(f"digits, imbalance ratio {args.rho:g}, {args.bags} bags, {args.epochs} epochs, seed "
          f"{args.seed}; balanced test set of 500 held-out digits")  # fmt: skip
    print(table(rows, ["σ", "method", "balanced", "many", "medium", "few"]))
    print(f"{timer.seconds:.0f} s wall, {timer.cpu_seconds:.0f} s CPU")
    plt = pyplot()
    fig, axes = plt.subplots(1, len(results), figsize=(11, 3.6), sharey=True)
    for ax, (name, out) in zip(np.atleast_1d(axes), results.items(), strict=True):
        for method in METHODS:
            ax.plot(range(10), out[method]["per_class"], marker="o", label=method)
        ax.set(title=f"{name}, ratio {args.rho:g}", xlabel="class (0 most frequent)")
    np.atleast_1d(axes)[0].set_ylabel("test accuracy")
    np.atleast_1d(axes)[-1].legend(fontsize=7)
    save_figure(fig, f"{args.out}/per_class_accuracy.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
