"""Embedded default: digits with an MLP 64-256-256-10 (p = 85,002), ground truth from models
trained on random halves of the training set; the LDS of every compressor at k = 256, 1024,
4096 averaged over projection seeds, with the compression time."""

from __future__ import annotations

import numpy as np
from torch import nn

from paperplug.harness import (
    Timer,
    demo_parser,
    fmt_ci,
    progress,
    pyplot,
    save_figure,
    single_thread,
    table,
)
from paperplug_grass.attributor import InfluenceAttributor
from paperplug_grass.datamodeling import lds
from paperplug_grass.embedded import digits, ground_truth, train
from paperplug_grass.factored import FACTORED, exact_k
from paperplug_grass.gradients import factored_layers

KINDS = ("gauss", "sjlt", "rm", "grass", "logra", "factgrass")
KS = (256, 1024, 4096)


def jobs() -> list[tuple[str, int]]:
    """(compressor, k) of the sweep: every kind at every k but the dense p × k Gaussian."""
    return [(kind, k) for k in KS for kind in KINDS if not (kind == "gauss" and k > 1024)]


def asked_k(kind: str, k: int, model: nn.Module) -> int:
    """The k to ask `kind` for in the column of k: the factored kinds split k equally over
    the model's linear layers (LoGra's share as k₁ × k₂), so they are asked for what they
    compute (the MLP's 3 layers: FactGraSS 255 at k = 256, LoGra 243), not warned."""
    return exact_k(kind, k, len(factored_layers(model))) if kind in FACTORED else k


def main(argv: list[str] | None = None) -> int:
    parser = demo_parser("grass", __doc__)
    parser.add_argument("--models", type=int, default=100, help="subset-trained models (LDS)")
    parser.add_argument("--checkpoints", type=int, default=2)
    parser.add_argument("--projection-seeds", type=int, default=2)
    args = parser.parse_args(argv)
    single_thread()
    data = digits(args.seed)
    with Timer() as timer:
        ckpts = [train(data.X, data.y, seed=args.seed + s) for s in range(args.checkpoints)]
        subsets, val, test = ground_truth(data, n_models=args.models, seed=args.seed)
        results: dict[tuple[str, int], list[float]] = {}
        seconds: dict[tuple[str, int], list[float]] = {}
        for kind, k in progress(jobs(), "compressor × k"):
            for seed in range(args.projection_seeds):
                exact = asked_k(kind, k, ckpts[0])
                a = InfluenceAttributor(kind, exact, seed=seed).cache(ckpts, data.X, data.y)
                a.choose_damping(data.X_val, data.y_val, subsets, val)
                results.setdefault((kind, k), []).append(
                    lds(a.attribute(data.X_test, data.y_test), subsets, test)[0]
                )
                seconds.setdefault((kind, k), []).append(a.compression_seconds)
    n = len(data.X) + len(data.X_val) + len(data.X_test)
    print(
        f"digits: {len(data.X)} train, {len(data.X_test)} test; MLP 64-256-256-10; {args.checkpoints} "
        f"checkpoints; ground truth from {args.models} models on random halves; LDS over "
        f"{args.projection_seeds} projection seeds, damping chosen on {len(data.X_val)} validation points"
    )
    rows = []
    for kind in KINDS:
        row = [kind]
        for k in KS:
            row.append(
                fmt_ci(results[(kind, k)]) if (kind, k) in results else "skipped (p × k dense)"
            )
        for k in KS:
            if (kind, k) in seconds:
                row.append(f"{n * args.checkpoints / np.mean(seconds[(kind, k)]):.0f}")
            else:
                row.append(None)
        rows.append(row)
    header = ["compressor", *[f"LDS k={k}" for k in KS], *[f"samples/s k={k}" for k in KS]]
    print(table(rows, header))
    for kind in FACTORED:  # what each computes over the MLP's layers in the column of k
        print(f"{kind} features: " + ", ".join(str(asked_k(kind, k, ckpts[0])) for k in KS))
    print(f"{timer.seconds:.0f} s wall, {timer.cpu_seconds:.0f} s CPU")
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5, 3.5))
    for kind in KINDS:
        ks = [k for k in KS if (kind, k) in results]
        ax.plot(ks, [np.mean(results[(kind, k)]) for k in ks], marker="o", label=kind)
    ax.set(xscale="log", xlabel="k", ylabel="LDS (test)", title="digits MLP")
    ax.legend(fontsize=7)
    save_figure(fig, f"{args.out}/lds_vs_k.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
