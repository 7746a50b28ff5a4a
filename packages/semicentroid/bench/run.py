"""Benchmark beside scikit-learn KMeans (k-means++, n_init=10) at equal k on iris and wine
(all points, standardised, λ = 0.5, M = N): exact core/FJR ratios, k-means cost (price of
fairness), wall time; then how the exact auditor's time grows with n."""

from __future__ import annotations

import time

from paperplug_semicentroid import SemiCentroidInstance, audit_core, audit_fjr, semi_centroid_core
from paperplug_semicentroid.demo import cost, kmeans_pp, load

LIMIT = 60.0  # seconds per exact audit before it returns a flagged lower bound


def timed(f, *a, **kw):
    t = time.perf_counter()
    out = f(*a, **kw)
    return out, time.perf_counter() - t


def fmt(audit) -> str:
    return f"{audit.ratio:.3f}" + ("" if audit.exact else "≥")


def head_to_head() -> None:
    print(
        "| data | n | k | core alg3 | core k-means++ | FJR alg3 | FJR k-means++ | cost alg3 / k-means++ | time alg3 / k-means++ |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    kmeans_pp(load("iris", 0, 0), 3, 0)  # warm scikit-learn up before timing
    for name in ("iris", "wine"):
        X = load(name, 0, 0)
        for k in (3, 5, 10):
            inst = SemiCentroidInstance.from_points(X, k, lam=0.5)
            alg, t_alg = timed(semi_centroid_core, inst, "semiball")
            km, t_km = timed(kmeans_pp, X, k, 0)
            cores = [audit_core(inst, c, time_limit=LIMIT) for c in (alg, km)]
            fjrs = [audit_fjr(inst, c, time_limit=LIMIT) for c in (alg, km)]
            costs = [cost(X, c.labels)[0] for c in (alg, km)]
            print(
                f"| {name} | {len(X)} | {k} | {fmt(cores[0])} | {fmt(cores[1])} | {fmt(fjrs[0])} | "
                f"{fmt(fjrs[1])} | {costs[0]:.1f} / {costs[1]:.1f} = {costs[0] / costs[1]:.2f} | "
                f"{t_alg:.3f}s / {t_km:.3f}s = {t_alg / t_km:.2f} |",
                flush=True,
            )


def auditor_scaling() -> None:
    print("\n| n (wine subsample) | k | core audit s | exact | FJR audit s | exact |")
    print("|---|---|---|---|---|---|")
    for n in (30, 60, 90, 120, 150, 178):
        X = load("wine", n, 0)
        inst = SemiCentroidInstance.from_points(X, 5, lam=0.5)
        cl = semi_centroid_core(inst, "semiball")
        core, t_core = timed(audit_core, inst, cl, time_limit=LIMIT)
        fjr, t_fjr = timed(audit_fjr, inst, cl, time_limit=LIMIT)
        print(f"| {n} | 5 | {t_core:.2f} | {core.exact} | {t_fjr:.2f} | {fjr.exact} |", flush=True)


if __name__ == "__main__":
    print("2-core shared CPU, numpy/scipy, 1 thread; exact audits capped at", LIMIT, "s\n")
    head_to_head()
    auditor_scaling()
