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


def plot_entropy(run_E: np.ndarray, poisoned: np.ndarray, clean_E: np.ndarray, path) -> None:
    """Histograms of the image-attention entropy (decoder layer 0) of every row: the poisoned
    fine-tune (poisoned rows collapse) and the clean one (one mode: nothing to remove)."""
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(8, 3), sharex=True)
    bins = np.linspace(0, 1.05 * max(run_E[:, 0].max(), clean_E[:, 0].max()), 40)
    axes[0].hist(run_E[~poisoned, 0], bins, color="tab:blue", label="clean rows")
    axes[0].hist(run_E[poisoned, 0], bins, color="tab:red", label="poisoned rows")
    axes[0].set(title="10% patch poison", xlabel="entropy (nats)", ylabel="rows")
    axes[0].legend(fontsize=8)
    axes[1].hist(clean_E[:, 0], bins, color="tab:blue")
    axes[1].set(title="clean data", xlabel="entropy (nats)")
    save_figure(fig, path)


def main(argv: list[str] | None = None) -> int:
    parser = demo_parser("bye", __doc__)
    parser.add_argument("--n-train", type=int, default=160, help="fine-tuning rows")
    parser.add_argument("--epochs", type=int, default=15)
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
    plot_entropy(
        d["entropy"], run.poisoned, clean_verdict.details["entropy"], args.out / "entropy.png"
    )
    print(f"{total.seconds:.0f} s in all")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
