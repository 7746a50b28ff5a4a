"""AdaptGrad beside captum's NoiseTunnel(Saliency) SmoothGrad on the same model, inputs and n, in one process.

Prints the wall-time ratio (goal ≤ 1.05), the out-of-range sample rate, Gini sparseness and deletion
AUC over the inputs, with 95% intervals. Run: `make bench PKG=adaptgrad` (ARGS="--n-inputs 300").
"""

from __future__ import annotations

import argparse
import math
import time

import torch
from captum.attr import NoiseTunnel, Saliency
from paperplug_adaptgrad import (
    AdaptGrad,
    SmoothGrad,
    deletion_auc,
    deletion_curve,
    expected_out_of_range_rate,
    gini,
)
from paperplug_adaptgrad.demo import load_digits_32, train_cnn


def ci(v: torch.Tensor, digits: int = 3) -> str:
    """Mean ± the 95% normal half-width over inputs."""
    v = v.double()
    return f"{float(v.mean()):.{digits}f} ± {1.96 * float(v.std()) / math.sqrt(len(v)):.{digits}f}"


def bootstrap_ratio(num: torch.Tensor, den: torch.Tensor, seed: int = 0, reps: int = 2000) -> str:
    """Ratio of summed times with a 95% bootstrap interval over the paired chunks."""
    idx = torch.randint(len(num), (reps, len(num)), generator=torch.Generator().manual_seed(seed))
    boot = (num[idx].sum(1) / den[idx].sum(1)).sort().values
    return f"{float(num.sum() / den.sum()):.3f} [{float(boot[int(0.025 * reps)]):.3f}, {float(boot[int(0.975 * reps)]):.3f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n-inputs", type=int, default=300)
    parser.add_argument("--n-samples", type=int, default=50)
    parser.add_argument("--chunk", type=int, default=25, help="inputs per timed call")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(1)

    x_train, y_train, x_test, _ = load_digits_32(args.seed)
    model = train_cnn(x_train, y_train, epochs=8, seed=args.seed)
    n_inputs = min(args.n_inputs, len(x_test))
    x = x_test[:n_inputs]
    with torch.no_grad():
        targets = model(x).argmax(1)
    lo, hi, alpha, n = 0.0, 1.0, 0.2, args.n_samples
    print(
        f"{n_inputs} digits (1×32×32, bounds [0, 1]), n = {n} samples, chunks of {args.chunk}, 1 thread"
    )

    captum = NoiseTunnel(Saliency(model))
    methods = {
        "captum SmoothGrad": lambda xs, ts: captum.attribute(
            xs, nt_type="smoothgrad", nt_samples=n, stdevs=alpha * (hi - lo), target=ts, abs=False
        ),
        "SmoothGrad (ours)": lambda xs, ts: SmoothGrad(alpha, n, (lo, hi), seed=args.seed).explain(
            model, xs, target=ts
        ),
        "AdaptGrad (ours)": lambda xs, ts: AdaptGrad(0.95, n, (lo, hi), seed=args.seed).explain(
            model, xs, target=ts
        ),
    }
    names = list(methods)
    times = {k: [] for k in names}
    maps = {k: [] for k in names}
    oob = {k: [] for k in names}
    for i, start in enumerate(range(0, n_inputs, args.chunk)):
        xs, ts = x[start : start + args.chunk], targets[start : start + args.chunk]
        for k in names[i % 3 :] + names[: i % 3]:  # rotate the order: no method always runs first
            t0 = time.perf_counter()
            out = methods[k](xs, ts)
            times[k].append(time.perf_counter() - t0)
            if isinstance(out, torch.Tensor):  # captum
                maps[k].append(out.detach())
            else:
                maps[k].append(out.values)
                oob[k].append(out.meta["out_of_range_rate"])
        print(f"  chunk {i + 1}/{math.ceil(n_inputs / args.chunk)}", flush=True)
    maps = {k: torch.cat(v) for k, v in maps.items()}
    times = {k: torch.tensor(v) for k, v in times.items()}
    # captum keeps its samples to itself: its out-of-range rate is the exact expectation under σ = α(hi − lo).
    sigma = torch.full_like(x, alpha * (hi - lo))
    oob["captum SmoothGrad"] = [
        expected_out_of_range_rate(x, sigma, torch.tensor(lo), torch.tensor(hi))
    ]

    maps["vanilla gradient"] = (
        AdaptGrad(n_samples=0, bounds=(lo, hi)).explain(model, x, target=targets).values
    )
    ginis = {k: gini(v) for k, v in maps.items()}
    aucs = {k: deletion_auc(deletion_curve(model, x, v, targets, fill=lo)) for k, v in maps.items()}
    base = "captum SmoothGrad"
    print("\n| method | time / captum | out-of-range rate | Gini (↑) | deletion AUC (↓) |")
    print("|---|---|---|---|---|")
    for k in [*names, "vanilla gradient"]:
        ratio = "1" if k == base else bootstrap_ratio(times[k], times[base]) if k in times else "—"
        rate = sum(oob[k]) / len(oob[k]) if k in oob else 0.0
        print(f"| {k} | {ratio} | {rate:.4f} | {ci(ginis[k])} | {ci(aucs[k])} |")
    ours = "AdaptGrad (ours)"
    print(f"\nAdaptGrad − captum SmoothGrad, paired over {n_inputs} inputs (95% CI):")
    print(f"  Gini          {ci(ginis[ours] - ginis[base], 4)}")
    print(f"  deletion AUC  {ci(aucs[ours] - aucs[base], 4)}")
    corr = torch.stack(
        [
            torch.corrcoef(torch.stack([a.flatten(), b.flatten()]))[0, 1]
            for a, b in zip(maps[base], maps[names[1]], strict=True)
        ]
    )
    print(f"  correlation of our SmoothGrad with captum's, per input: {ci(corr)}")
    print("  seconds: " + ", ".join(f"{k} {float(v.sum()):.1f}" for k, v in times.items()))


if __name__ == "__main__":
    main()
