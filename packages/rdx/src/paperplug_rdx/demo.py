"""Embedded default: two MLPs on scikit-learn's digits, the second trained with every 5
relabelled as 3; RDX on their hidden layer over 500 digits from {3, 5, 8}, three seeds: the
grids in both directions (saved as images), their binary success rates, and how often the
planted merge shows, beside KMeans grids. A minute or two on one thread."""

from __future__ import annotations

import numpy as np

from paperplug.harness import Timer, demo_parser, fmt_ci, pyplot, save_figure, single_thread, table
from paperplug_rdx.baselines import baseline_grids
from paperplug_rdx.distances import neighborhood_ranks
from paperplug_rdx.embedded import digits_pair
from paperplug_rdx.explainer import RDX
from paperplug_rdx.metrics import bsr


def shows_merge(grid: np.ndarray, labels: np.ndarray) -> bool:
    """A grid of 3s and 5s only, at least two of each: the planted merge."""
    counts = np.bincount(labels[grid], minlength=10)
    return set(labels[grid].tolist()) == {3, 5} and min(counts[3], counts[5]) >= 2


def main(argv: list[str] | None = None) -> int:
    parser = demo_parser("rdx", __doc__)
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args(argv)
    single_thread()
    rows, first = [], None
    for seed in range(args.seed, args.seed + args.seeds):
        print(f"seed {seed}: training the two MLPs ...", flush=True)
        pair = digits_pair(seed)
        with Timer() as t:
            explanation = RDX(seed=seed).explain(pair.models, pair.inputs, layer="3")
        first = first or (pair, explanation)
        D0, D1 = neighborhood_ranks(pair.R0), neighborhood_ranks(pair.R1)
        kmeans = baseline_grids(pair.R1, "kmeans", seed=seed)
        for direction in ("1_over_0", "0_over_1"):
            grids = [np.asarray(g) for g in explanation.values[direction]]
            merge = np.mean([shows_merge(g, pair.labels) for g in grids]) if grids else 0.0
            mix = " ".join(
                "/".join(str(c) for c in np.bincount(pair.labels[g], minlength=10)[[3, 5, 8]])
                for g in grids
            )
            rows.append(
                [
                    seed,
                    direction,
                    len(grids),
                    fmt_ci(explanation.meta["bsr"][direction], 2),
                    merge,
                    mix,
                    t.seconds,
                ]
            )
        km = [bsr(g, D1, D0) for g in kmeans]
        km_merge = np.mean([shows_merge(g, pair.labels) for g in kmeans])
        rows.append([seed, "KMeans on model 1", len(kmeans), fmt_ci(km, 2), km_merge,
                     " ".join("/".join(str(c) for c in np.bincount(pair.labels[g], minlength=10)[[3, 5, 8]]) for g in kmeans), 0.0])  # fmt: skip
    print(
        "\nRDX on digits (model 1 = trained with 5 relabelled as 3); grid mix = counts of 3/5/8 per grid"
    )
    print(
        table(
            rows,
            ["seed", "direction", "grids", "BSR", "merge shown", "grid mix (3/5/8)", "seconds"],
            digits=2,
        )
    )
    _figure(*first, args.out / "grids.png")
    return 0


def _figure(pair, explanation, path) -> None:
    names = {
        "1_over_0": "model 1 (5→3) groups, model 0 does not",
        "0_over_1": "model 0 groups, model 1 does not",
    }
    directions = [d for d in names if explanation.values[d]]
    n_grids = max(len(explanation.values[d]) for d in directions) if directions else 1
    fig, axes = pyplot().subplots(
        len(directions) or 1,
        n_grids,
        figsize=(3 * n_grids, 3.2 * max(1, len(directions))),
        squeeze=False,
    )
    for row, direction in enumerate(directions):
        for col, grid in enumerate(explanation.values[direction]):
            tiles = np.zeros((3 * 8, 3 * 8))
            for k, item in enumerate(grid[:9]):
                tiles[(k // 3) * 8 : (k // 3 + 1) * 8, (k % 3) * 8 : (k % 3 + 1) * 8] = pair.images[
                    item
                ]
            axes[row, col].imshow(tiles, cmap="gray_r")
            axes[row, col].set_title(
                f"{names[direction]}\nBSR {explanation.meta['bsr'][direction][col]:.2f}", fontsize=7
            )
    for ax in axes.ravel():
        ax.axis("off")
    save_figure(fig, path)


if __name__ == "__main__":
    raise SystemExit(main())
