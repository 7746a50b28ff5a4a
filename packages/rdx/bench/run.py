"""RDX beside scikit-learn KMeans, NMF and PCA on the same representations (grids of the same
number and size): mBSR and the planted-difference hit rate over seeds; then the kNN mode's
memory and time as the number of items grows to 10,000, beside the dense mode.

make bench PKG=rdx [ARGS="--seeds 3"]
"""

from __future__ import annotations

import argparse
import gc
import tracemalloc

import numpy as np
from paperplug_rdx import RDX, bsr, neighborhood_ranks
from paperplug_rdx.baselines import BASELINES, baseline_grids
from paperplug_rdx.embedded import digits_pair, planted_mixture

from paperplug.harness import Timer, fmt_ci, single_thread, table


def shows_merge(grid: np.ndarray, labels: np.ndarray) -> bool:
    counts = np.bincount(labels[grid], minlength=10)
    return set(labels[grid].tolist()) == {3, 5} and min(counts[3], counts[5]) >= 2


def quality(seeds: int) -> list[list]:
    scores: dict[str, list[float]] = {}
    hits: dict[str, list[float]] = {}
    for seed in range(seeds):
        pair = digits_pair(seed)
        D0, D1 = neighborhood_ranks(pair.R0), neighborhood_ranks(pair.R1)
        explanation = RDX(seed=seed).explain(None, (pair.R0, pair.R1))
        scores.setdefault("RDX", []).append(
            np.mean(explanation.meta["bsr"]["1_over_0"] + explanation.meta["bsr"]["0_over_1"])
        )
        hits.setdefault("RDX", []).append(
            np.mean([shows_merge(np.array(g), pair.labels) for g in explanation.values["1_over_0"]])
        )
        for method in BASELINES:
            for side, (R, close, far) in {
                "model 1": (pair.R1, D1, D0),
                "model 0": (pair.R0, D0, D1),
            }.items():
                grids = baseline_grids(R, method, seed=seed)
                name = f"{method} on {side}"
                scores.setdefault(name, []).append(np.mean([bsr(g, close, far) for g in grids]))
                hits.setdefault(name, []).append(
                    np.mean([shows_merge(g, pair.labels) for g in grids])
                )
    return [[name, fmt_ci(scores[name], 3), fmt_ci(hits[name], 2)] for name in scores]


def scale(sizes: list[int], dense_limit: int) -> list[list]:
    rows = []
    for n in sizes:
        R0, R1, labels = planted_mixture(n, seed=0)
        for mode, explainer in (("dense", RDX(seed=0)), ("kNN (k = 30)", RDX(knn=30, seed=0))):
            if mode == "dense" and n > dense_limit:
                rows.append([n, mode, None, None, None, "skipped: n × n matrices"])
                continue
            gc.collect()
            tracemalloc.start()
            with Timer() as t:
                explanation = explainer.explain(None, (R0, R1))
            peak = tracemalloc.get_traced_memory()[1] / 2**20
            tracemalloc.stop()
            hit = np.mean(
                [{3, 5} <= set(labels[g].tolist()) for g in explanation.values["1_over_0"]] or [0.0]
            )
            rows.append([n, mode, t.seconds, peak, hit, ""])
            print(table(rows[-1:], SCALE_HEADER).splitlines()[-1], flush=True)
    return rows


SCALE_HEADER = [
    "items",
    "mode",
    "seconds",
    "peak MiB (tracemalloc)",
    "merge in 1_over_0 grids",
    "note",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--dense-limit", type=int, default=3000)
    args = parser.parse_args()
    single_thread()
    rows = quality(args.seeds)
    print(
        f"digits, model 1 trained with 5 → 3, 500 items of {{3, 5, 8}}, 3 grids of 9, {args.seeds} seeds"
    )
    print(table(rows, ["method", "mBSR", "planted merge shown (share of grids)"]), flush=True)
    rows = scale([1000, 3000, 10000], args.dense_limit)
    print("\nplanted mixture (10 clusters, 3 and 5 merged in model 1), 3 grids per direction")
    print(table(rows, SCALE_HEADER))


if __name__ == "__main__":
    main()
