"""The paper's comparison at imbalance ratios 1, 10 and 50 over seeds (MAX-3 and SUM-2 digits
bags): balanced and few-shot accuracy of SL, SL + LA, SL + CAROT, LP with the estimated and the
true marginal. Cross-checks: p(s) of our exact semantic loss against ProbLog (DeepProbLog's
reasoner) on the trained classifier's outputs, and CAROT against POT's semi-relaxed Sinkhorn.

make bench PKG=nesy [ARGS="--seeds 3 --rhos 1 10 50"]
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
import torch
from paperplug_nesy import NeSyImbalanceTrainer, carot_plan, max_of, output_probability, sum_of
from paperplug_nesy.embedded import METHODS, compare, long_tailed_bags

from paperplug.harness import Timer, fmt_ci, progress, single_thread, table


def problog_output_probabilities(probs: np.ndarray, sigma_name: str) -> dict[int, float]:
    """P(σ(y1..yM) = s) for every s by ProbLog, the digits' distributions as annotated
    disjunctions: the reasoner DeepProbLog runs on."""
    from problog import get_evaluatable
    from problog.program import PrologString

    M, C = probs.shape
    facts = ["; ".join(f"{probs[j, k]:.17g}::d({j},{k})" for k in range(C)) + "." for j in range(M)]
    head = ", ".join(f"d({j},Y{j})" for j in range(M))
    values = [f"Y{j}" for j in range(M)]
    if sigma_name.startswith("MAX"):
        expr = values[0]
        for v in values[1:]:
            expr = f"max({expr}, {v})"
    else:
        expr = " + ".join(values)
    body = f"S is {expr}"
    program = "\n".join([*facts, f"s(S) :- {head}, {body}.", "query(s(_))."])
    result = get_evaluatable().create_from(PrologString(program)).evaluate()
    return {int(term.args[0]): float(p) for term, p in result.items()}


def reasoner_check(seed: int) -> list[list]:
    rows = []
    for sigma in (max_of(3), sum_of(2)):
        data = long_tailed_bags(sigma, 400, rho=10.0, seed=seed)
        model = NeSyImbalanceTrainer(
            sigma="max" if sigma.name.startswith("MAX") else "sum",
            M=sigma.M, epochs=5, seed=seed, progress=False,
        ).fit(data.bags, data.s)  # fmt: skip
        worst, n = 0.0, 0
        with Timer() as ours_time:
            logits = torch.as_tensor(model._logits(data.bags[:20].reshape(-1, 64)))
            probs = torch.softmax(logits.double(), -1).reshape(20, sigma.M, 10)
            ours = {
                s: output_probability(sigma, probs, torch.full((20,), s)).numpy()
                for s in sigma.outputs
            }
        with Timer() as problog_time:
            for b in range(20):
                ref = problog_output_probabilities(probs[b].numpy(), sigma.name)
                for s in sigma.outputs:
                    worst = max(worst, abs(ref.get(s, 0.0) - ours[s][b]))
                    n += 1
        rows.append([sigma.name, n, f"{worst:.1e}", ours_time.seconds, problog_time.seconds])
    return rows


def pot_check() -> list[list]:
    import ot

    rng = np.random.default_rng(0)
    log_probs = np.log(rng.dirichlet(np.ones(10), size=500))
    target = rng.dirichlet(np.ones(10))
    rows = []
    for eta, tau in [(0.1, 1.0), (0.5, 10.0), (1.0, 100.0)]:
        ours = carot_plan(log_probs, target, eta=eta, tau=tau, iterations=20_000, tol=1e-14)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = ot.unbalanced.sinkhorn_unbalanced(
                np.ones(500), target * 500, -log_probs, reg=eta, reg_m=(float("inf"), tau),
                reg_type="entropy", numItermax=200_000, stopThr=1e-15,
            )  # fmt: skip
        rows.append([eta, tau, f"{np.abs(ours - ref).max():.1e}"])
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--rhos", type=float, nargs="+", default=[1.0, 10.0, 50.0])
    parser.add_argument("--bags", type=int, default=2000)
    parser.add_argument("--epochs", type=int, default=20)
    args = parser.parse_args()
    single_thread()

    print("p(s): our exact semantic loss against ProbLog on a trained classifier's outputs")
    print(table(reasoner_check(0), ["σ", "values compared", "max |diff|", "ours s", "ProbLog s"],
                digits=3))  # fmt: skip
    print("\nCAROT against POT's sinkhorn_unbalanced (500 × 10, reg_m = (inf, τ))")
    print(table(pot_check(), ["η", "τ", "max |diff|"], digits=3))

    for sigma in (max_of(3), sum_of(2)):
        rows = []
        for rho in args.rhos:
            runs = {name: [] for name in METHODS}
            errors = []
            with Timer() as timer:
                for seed in progress(range(args.seeds), f"{sigma.name} ρ={rho:g}"):
                    data = long_tailed_bags(sigma, args.bags, rho=rho, seed=seed)
                    out = compare(data, sigma, M=sigma.M, seed=seed, epochs=args.epochs)
                    for name in METHODS:
                        runs[name].append(out[name])
                    errors.append(out["SL"]["marginal_l1"])
            for name in METHODS:
                balanced = [r["balanced"] for r in runs[name]]
                few = [r["few"] for r in runs[name]]
                gain = [r["few"] - s["few"] for r, s in zip(runs[name], runs["SL"], strict=True)]
                rows.append([f"{rho:g}", name, fmt_ci(balanced), fmt_ci(few), fmt_ci(gain)])
            rows.append([f"{rho:g}", "‖r̂ − r‖₁", fmt_ci(errors), "", f"{timer.seconds:.0f} s"])
        print(f"\n{sigma.name}: {args.bags} bags, {args.epochs} epochs, seeds 0–{args.seeds - 1}"
              " (mean ± 95% interval), balanced test set")  # fmt: skip
        print(table(rows, ["ρ", "method", "balanced acc", "few-shot acc", "few-shot − SL"]))


if __name__ == "__main__":
    main()
