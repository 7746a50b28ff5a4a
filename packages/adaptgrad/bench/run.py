"""AdaptGrad and the paper's baselines beside captum's NoiseTunnel(Saliency) SmoothGrad on the same
model, inputs and budget, in one process.

Prints the wall-time ratio to captum (goal for AdaptGrad ≤ 1.05), the out-of-range sample rate,
Gini sparseness and deletion AUC over the inputs, with 95% intervals.
Run: `make bench PKG=adaptgrad` (ARGS="--n-inputs 300").
"""

from __future__ import annotations

import argparse
import time

import torch
from captum.attr import NoiseTunnel, Saliency
from paperplug_adaptgrad import (
    AdaptGrad,
    NoiseGrad,
    NoiseGradPlusPlus,
    SmoothGrad,
    WeightNoise,
    deletion_auc,
    deletion_curve,
    expected_out_of_range_rate,
    gini,
)
from paperplug_adaptgrad.embedded import trained_digits_cnn

from paperplug.harness import fmt_ci, progress, single_thread, table


def bootstrap_ratio(num: torch.Tensor, den: torch.Tensor, seed: int = 0, reps: int = 2000) -> str:
    """Ratio of summed times with a 95% bootstrap interval over the paired chunks."""
    gen = torch.Generator().manual_seed(seed)
    idx = torch.randint(len(num), (reps, len(num)), generator=gen)
    boot = (num[idx].sum(1) / den[idx].sum(1)).sort().values
    lo, hi = float(boot[int(0.025 * reps)]), float(boot[int(0.975 * reps)])
    return f"{float(num.sum() / den.sum()):.3f} [{lo:.3f}, {hi:.3f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n-inputs", type=int, default=300)
    parser.add_argument("--n-samples", type=int, default=50)
    parser.add_argument("--chunk", type=int, default=25, help="inputs per timed call")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    single_thread()

    model, x_test, _ = trained_digits_cnn(args.seed)
    x = x_test[: args.n_inputs]
    with torch.no_grad():
        targets = model(x).argmax(1)
    lo, hi, alpha, n, seed = 0.0, 1.0, 0.2, args.n_samples, args.seed
    print(f"{len(x)} digits (1×32×32, bounds [0, 1]), n = {n}, chunks of {args.chunk}, 1 thread")

    captum = NoiseTunnel(Saliency(model))
    methods = {  # name -> (gradients per input, explain(xs, ts))
        "captum SmoothGrad": (n, lambda xs, ts: captum.attribute(
            xs, nt_type="smoothgrad", nt_samples=n, stdevs=alpha * (hi - lo), target=ts, abs=False
        )),
        "SmoothGrad (ours)": (n + 1, SmoothGrad(alpha, n, (lo, hi), seed=seed)),
        "AdaptGrad (ours)": (n + 1, AdaptGrad(0.95, n, (lo, hi), seed=seed)),
        "AdaptGrad (ours, batch_size=256)": (
            n + 1, AdaptGrad(0.95, n, (lo, hi), seed=seed, batch_size=256)
        ),
        "NoiseGrad": (n + 1, NoiseGrad(0.2, n, seed=seed)),
        "NoiseGrad++ (7×7)": (64, NoiseGradPlusPlus(0.2, 7, alpha, 7, (lo, hi), seed=seed)),
        "NoiseGrad+AdaptGrad (7×7)": (
            64, AdaptGrad(0.95, 7, (lo, hi), seed=seed, weight_noise=WeightNoise(0.2, 7))
        ),
    }  # fmt: skip
    names = list(methods)
    times = {k: [] for k in names}
    maps = {k: [] for k in names}
    oob = {k: [] for k in names}
    chunks = list(range(0, len(x), args.chunk))
    for i, start in enumerate(progress(chunks, "chunks")):
        xs, ts = x[start : start + args.chunk], targets[start : start + args.chunk]
        for k in names[i % len(names) :] + names[: i % len(names)]:  # no method always first
            method = methods[k][1]
            t0 = time.perf_counter()
            out = method(xs, ts) if callable(method) else method.explain(model, xs, target=ts)
            times[k].append(time.perf_counter() - t0)
            if isinstance(out, torch.Tensor):  # captum
                maps[k].append(out.detach())
            else:
                maps[k].append(out.values)
                oob[k].append(out.meta["out_of_range_rate"])
    maps = {k: torch.cat(v) for k, v in maps.items()}
    times = {k: torch.tensor(v) for k, v in times.items()}
    # captum keeps its samples to itself: its rate is the exact expectation under σ = α(hi − lo).
    sigma = torch.full_like(x, alpha * (hi - lo))
    oob[names[0]] = [expected_out_of_range_rate(x, sigma, torch.tensor(lo), torch.tensor(hi))]
    maps["vanilla gradient"] = (
        AdaptGrad(n_samples=0, bounds=(lo, hi)).explain(model, x, target=targets).values
    )
    ginis = {k: gini(v) for k, v in maps.items()}
    aucs = {k: deletion_auc(deletion_curve(model, x, v, targets, fill=lo)) for k, v in maps.items()}

    base = names[0]
    rows = []
    for k in [*names, "vanilla gradient"]:
        cost = methods[k][0] if k in methods else 1
        ratio = "1" if k == base else bootstrap_ratio(times[k], times[base]) if k in times else "-"
        rate = sum(oob[k]) / len(oob[k]) if k in oob else 0.0
        rows.append([k, cost, ratio, rate, fmt_ci(ginis[k].tolist()), fmt_ci(aucs[k].tolist())])
    header = ["method", "grads/input", "time / captum", "out-of-range", "Gini (↑)", "AUC (↓)"]
    print("\n" + table(rows, header, digits=4))
    ours = "AdaptGrad (ours)"
    print(f"\npaired differences over {len(x)} inputs (95% CI):")
    for other in (base, "NoiseGrad", "NoiseGrad++ (7×7)"):
        print(
            f"  AdaptGrad − {other}: Gini {fmt_ci((ginis[ours] - ginis[other]).tolist(), 4)}, "
            f"deletion AUC {fmt_ci((aucs[ours] - aucs[other]).tolist(), 4)}"
        )
    corr = [
        float(torch.corrcoef(torch.stack([a.flatten(), b.flatten()]))[0, 1])
        for a, b in zip(maps[base], maps[names[1]], strict=True)
    ]
    print(f"  correlation of our SmoothGrad with captum's, per input: {fmt_ci(corr)}")
    print("  seconds: " + ", ".join(f"{k} {float(v.sum()):.1f}" for k, v in times.items()))


if __name__ == "__main__":
    main()
