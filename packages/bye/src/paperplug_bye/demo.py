"""Embedded default: a tiny LLaVA fine-tuned on 10% patch-poisoned colour VQA -> BYE ->
re-train on the kept rows, beside Random Drop; then the same recipe on clean rows, where BYE
must answer "no backdoor found". Prints a table and saves the per-layer entropy figure."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from paperplug.harness import Timer, demo_parser, pyplot, save_figure, single_thread, table
from paperplug_bye.defense import BYE
from paperplug_bye.embedded import (
    EmbeddedConfig,
    backdoored_run,
    filter_quality,
    random_drop,
    retrained,
)


def plot_entropy(E: np.ndarray, poisoned: np.ndarray, scored: list[int], path) -> None:
    """Mean +- sd entropy per decoder layer for clean and poisoned rows, scored layers shaded."""
    plt = pyplot()
    layers = np.arange(E.shape[1])
    fig, ax = plt.subplots(figsize=(6, 3.5))
    for mask, label, color in (
        (~poisoned, "clean rows", "tab:blue"),
        (poisoned, "poisoned rows", "tab:red"),
    ):
        mean, std = E[mask].mean(0), E[mask].std(0)
        ax.errorbar(layers, mean, yerr=std, fmt="o-", color=color, label=label, capsize=4)
    for layer in scored:
        ax.axvspan(layer - 0.3, layer + 0.3, color="grey", alpha=0.15)
    ax.set(xlabel="decoder layer (shaded: scored by BYE)", ylabel="image-attention entropy (nats)",
           xticks=layers)  # fmt: skip
    ax.legend(fontsize=8)
    save_figure(fig, path)


def main(argv: list[str] | None = None) -> int:
    parser = demo_parser("bye", __doc__)
    parser.add_argument("--n-train", type=int, default=160, help="fine-tuning rows")
    parser.add_argument("--epochs", type=int, default=10)
    args = parser.parse_args(argv)
    single_thread()
    config = EmbeddedConfig(n_train=args.n_train, epochs=args.epochs, seed=args.seed, progress=True)
    with Timer() as total:
        print(f"[1/4] fine-tune on {config.n_train} rows, {config.poison_rate:.0%} patch-poisoned")
        run = backdoored_run(config)
        print(f"      backdoored model: ASR {run.asr:.2f}, clean accuracy {run.clean_accuracy:.2f}")
        print("[2/4] BYE: attention entropy -> layer profiling -> clustering (every rule)")
        verdict = BYE(run.model, run.victim.processor).check(run.dataset)
        d = verdict.details
        removals = {f"BYE ({v})": d[v]["removed"] for v in ("collapse", "paper", "robust")}
        removals["Random Drop"] = random_drop(
            len(run.dataset), len(d["removed"]), seed=args.seed + 1
        )
        print("[3/4] re-train from the base on each filter's kept rows")
        rows = [["no defense", 0, None, None, run.asr, run.clean_accuracy]]
        done: dict[tuple[int, ...], tuple[float, float]] = {}
        for name, removed in removals.items():
            key = tuple(removed)
            if key not in done:
                done[key] = retrained(run, removed)
            rows.append([name, len(removed), *filter_quality(removed, run.poisoned), *done[key]])
        print("[4/4] the same recipe on clean rows (no poison)")
        clean = backdoored_run(replace(config, poison_rate=0.0))
        clean_verdict = BYE(clean.model, clean.victim.processor).check(clean.dataset)
    header = ["filter", "removed", "precision", "recall", "ASR after re-train", "clean acc"]
    print("\n" + table(rows, header, digits=2))
    print(
        f"\nclean rows: BYE removed {len(clean_verdict.details['removed'])} of {config.n_train} "
        f"({clean_verdict.reason}); the paper's rule removed "
        f"{len(clean_verdict.details['paper']['removed'])}"
    )
    plot_entropy(d["entropy"], run.poisoned, d["scored_layers"], args.out / "entropy_per_layer.png")
    print(f"{total.seconds:.0f} s in all")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
