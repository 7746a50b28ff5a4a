"""Embedded default: clean base -> fine-tune on 10% patch poison -> BYE -> re-train; a table and a figure."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path


def _plot(E, poisoned, sensitive, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    layers = np.arange(E.shape[1])
    fig, ax = plt.subplots(figsize=(6, 3.5))
    for mask, label, color in (
        (~poisoned, "clean rows", "tab:blue"),
        (poisoned, "poisoned rows", "tab:red"),
    ):
        mean, std = E[mask].mean(0), E[mask].std(0)
        ax.plot(layers, mean, "o-", color=color, label=label)
        ax.fill_between(layers, mean - std, mean + std, color=color, alpha=0.2)
    for layer in sensitive:
        ax.axvspan(layer - 0.3, layer + 0.3, color="grey", alpha=0.15)
    ax.axhline(np.log(16), ls="--", color="k", lw=0.8, label="log 16 (uniform)")
    ax.set(
        xlabel="decoder layer (shaded: sensitive)", ylabel="image-attention entropy", xticks=layers
    )
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    import numpy as np
    import torch

    from paperplug_bye.defense import BYE
    from paperplug_bye.embedded import EmbeddedConfig, backdoored_run, filter_quality, random_drop

    parser = argparse.ArgumentParser(prog="paperplug demo bye", description=__doc__)
    parser.add_argument("--out", type=Path, default=Path("out"), help="folder for the figure")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--n-train", type=int, default=400)
    parser.add_argument("--epochs", type=int, default=30)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    start = time.time()

    def progress(epoch: int, loss: float) -> None:
        if epoch % 10 == 9 or epoch == args.epochs - 1:
            print(
                f"    epoch {epoch + 1}/{args.epochs} loss {loss:.3f} ({time.time() - start:.0f} s)",
                flush=True,
            )

    config = EmbeddedConfig(
        n_train=args.n_train, epochs=args.epochs, seed=args.seed, progress=progress
    )
    print(
        f"[1/4] clean base, then fine-tune on {config.poison_rate:.0%} patch-poisoned data ({args.n_train} rows)"
    )
    run = backdoored_run(config)
    print(f"      backdoored model: ASR {run.asr:.2f}, clean accuracy {run.clean_accuracy:.2f}")
    print("[2/4] BYE: attention entropy, sensitive layers, clustering")
    verdict = BYE(run.model, run.victim.processor).check(run.dataset)
    d = verdict.details
    E = np.asarray(d["entropy"])
    for variant in ("paper", "robust"):
        p, r = filter_quality(d[variant]["removed"], run.poisoned)
        print(f"      {variant:6s} rule: sensitive layers {d[variant]['sensitive_layers']}, "
              f"removed {len(d[variant]['removed'])}, precision {p:.2f}, recall {r:.2f}")  # fmt: skip
    print(f"      KL per layer {np.round(d['kl_per_layer'], 2).tolist()}")

    rows = {"no defense": (None, run.asr, run.clean_accuracy)}
    removals = {"BYE (paper)": d["paper"]["removed"], "BYE (robust)": d["robust"]["removed"]}
    removals["Random Drop"] = random_drop(
        len(run.dataset), len(d["paper"]["removed"]), seed=args.seed + 1
    )
    print("[3/4] re-train from the clean base on the kept rows")
    for name, removed in removals.items():
        if name == "BYE (robust)" and removed == removals["BYE (paper)"]:
            rows[name] = rows["BYE (paper)"]
            continue
        drop = set(removed)
        model = run.victim.fine_tune([row for i, row in enumerate(run.dataset) if i not in drop])
        asr = float(np.mean(run.attack.attack_success(run.victim, model)))
        rows[name] = (filter_quality(removed, run.poisoned), asr, run.victim.clean_accuracy(model))
        print(f"      {name}: ASR {asr:.2f}")

    print("[4/4] results")
    print(
        "\n| method | removed | precision | recall | ASR | clean accuracy |\n|---|---|---|---|---|---|"
    )
    for name, (quality, asr, clean) in rows.items():
        n = len(removals.get(name, []))
        p, r = quality if quality else (float("nan"), float("nan"))
        print(f"| {name} | {n} | {p:.2f} | {r:.2f} | {asr:.2f} | {clean:.2f} |")
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "bye_entropy_per_layer.png"
    _plot(E, run.poisoned, d["sensitive_layers"], path)
    print(f"\nper-layer entropy figure: {path.resolve()}  ({time.time() - start:.0f} s in all)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
