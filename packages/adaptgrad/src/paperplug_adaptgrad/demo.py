"""Embedded default: a small CNN trained here on scikit-learn digits (upsampled to 32×32), explained
with the vanilla gradient, SmoothGrad, AdaptGrad and the paper's other baselines (NoiseGrad,
NoiseGrad++, NoiseGrad + AdaptGrad); prints the paper's metrics and saves the maps."""

from __future__ import annotations

from typing import Any

import torch

from paperplug.harness import Timer, demo_parser, fmt_ci, pyplot, save_figure, single_thread, table
from paperplug_adaptgrad.embedded import trained_digits_cnn
from paperplug_adaptgrad.explainer import (
    AdaptGrad,
    NoiseGrad,
    NoiseGradPlusPlus,
    SmoothGrad,
)
from paperplug_adaptgrad.metrics import deletion_auc, deletion_curve, gini
from paperplug_adaptgrad.noisegrad import WeightNoise


def explainers(n: int, seed: int) -> dict[str, tuple[Any, int]]:
    """The compared methods and their gradient evaluations per input. The weight-noise methods
    that also smooth the input run 7 models × 7 samples (64 gradients, about n + 1 = 51)."""
    return {
        "vanilla": (AdaptGrad(n_samples=0, seed=seed), 1),
        "SmoothGrad": (SmoothGrad(n_samples=n, seed=seed), n + 1),
        "AdaptGrad": (AdaptGrad(n_samples=n, seed=seed), n + 1),
        "NoiseGrad": (NoiseGrad(n_models=n, seed=seed), n + 1),
        "NoiseGrad++": (NoiseGradPlusPlus(n_models=7, n_samples=7, seed=seed), 64),
        "NoiseGrad+AdaptGrad": (
            AdaptGrad(n_samples=7, weight_noise=WeightNoise(0.2, 7), seed=seed),
            64,
        ),
    }


def plot_maps(x: torch.Tensor, maps: dict[str, torch.Tensor], n: int = 4) -> Any:
    plt = pyplot()
    fig, axes = plt.subplots(
        n, len(maps) + 1, figsize=(2.0 * (len(maps) + 1), 2.0 * n), squeeze=False
    )
    for row in range(n):
        axes[row, 0].imshow(x[row, 0], cmap="gray", vmin=0, vmax=1)
        for col, (name, m) in enumerate(maps.items(), start=1):
            limit = float(m[row].abs().max()) or 1.0
            axes[row, col].imshow(m[row, 0], cmap="bwr", vmin=-limit, vmax=limit)
            if row == 0:
                axes[row, col].set_title(name, fontsize=8)
    axes[0, 0].set_title("input", fontsize=8)
    for ax in axes.flat:
        ax.axis("off")
    fig.tight_layout()
    return fig


def main(argv: list[str] | None = None) -> int:
    parser = demo_parser("adaptgrad", __doc__)
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--n-explain", type=int, default=100, help="test images to explain")
    parser.add_argument("--n-samples", type=int, default=50, help="noise samples per image")
    args = parser.parse_args(argv)
    single_thread()

    print("training a small CNN on sklearn digits (32×32) ...", flush=True)
    model, x_test, y_test = trained_digits_cnn(args.seed, args.epochs)
    with torch.no_grad():
        accuracy = float((model(x_test).argmax(1) == y_test).float().mean())
    print(f"test accuracy {accuracy:.3f} on {len(y_test)} images")

    x, targets = x_test[: args.n_explain], y_test[: args.n_explain]
    rows, maps = [], {}
    for name, (explainer, cost) in explainers(args.n_samples, args.seed).items():
        print(f"explaining {len(x)} images with {name} ...", flush=True)
        with Timer() as timer:
            result = explainer.explain(model, x, target=targets)
        maps[name] = result.values
        auc = deletion_auc(deletion_curve(model, x, result.values, targets, fill=0.0))
        rows.append(
            [
                name,
                cost,
                fmt_ci(gini(result.values).tolist()),
                fmt_ci(auc.tolist()),
                result.meta["out_of_range_rate"],
                timer.seconds,
            ]
        )
    header = ["method", "grads/input", "Gini (↑)", "deletion AUC (↓)", "out-of-range", "seconds"]
    print("\n" + table(rows, header, digits=3))
    on_bound = float(((x == 0) | (x == 1)).float().mean())
    print(
        f"\n{on_bound:.0%} of pixels sit on a bound, where AdaptGrad's σ is 0 (they stay unsmoothed)."
    )
    save_figure(plot_maps(x, maps), args.out / "adaptgrad_demo.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
