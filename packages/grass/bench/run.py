"""Compression throughput and peak memory as the layer width grows (d ∈ {256, 1024, 4096}, an
MLP 64-d-d-10 on digits, k = 1024): where FactGraSS overtakes LoGra, GraSS and dense JL on this
CPU. Each configuration runs in a fresh process, so its peak resident memory is its own.

make bench PKG=grass [ARGS="--samples 64"]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp

from paperplug.harness import single_thread, table

KINDS = ("gauss", "sjlt", "grass", "logra", "factgrass")
WIDTHS = (256, 1024, 4096)


def one(kind: str, width: int, k: int, samples: int) -> dict:
    import time

    single_thread()
    from paperplug_grass.attributor import GradientFeatures
    from paperplug_grass.embedded import digits, mlp

    from paperplug.harness import peak_memory_mb

    data = digits(0)
    model = mlp(0, width).eval()
    p = sum(q.numel() for q in model.parameters())
    features = GradientFeatures(kind, k, batch_size=16)
    features(model, data.X[:16], data.y[:16])  # draws the projection; not timed
    start = time.process_time()
    features(model, data.X[:samples], data.y[:samples])
    seconds = time.process_time() - start
    return {"p": p, "samples/s": samples / seconds, "peak MiB": peak_memory_mb()}


def feasible(kind: str, width: int, k: int) -> str | None:
    p = 64 * width + width + width * width + width + width * 10 + 10
    if kind == "gauss" and p * k * 4 > 2**30:
        return f"skipped: the dense p × k matrix is {p * k * 4 / 2**30:.0f} GiB"
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--samples", type=int, default=64)
    parser.add_argument("--k", type=int, default=1024)
    args = parser.parse_args()
    rows = []
    ctx = mp.get_context("spawn")
    for width in WIDTHS:
        for kind in KINDS:
            reason = feasible(kind, width, args.k)
            if reason:
                rows.append([width, kind, None, None, None, reason])
                continue
            with ctx.Pool(1) as pool:
                r = pool.apply(one, (kind, width, args.k, args.samples))
            rows.append([width, kind, r["p"], r["samples/s"], r["peak MiB"], ""])
    print(
        f"per-sample gradient compression to k = {args.k}, {args.samples} samples, batch 16, "
        "one thread, CPU time; each row a fresh process"
    )
    print(
        table(
            rows,
            ["width d", "compressor", "parameters p", "samples/s", "peak MiB", "note"],
            digits=1,
        )
    )


if __name__ == "__main__":
    main()
