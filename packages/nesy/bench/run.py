"""The paper's comparison at imbalance ratios 1, 10 and 50 over seeds (MAX-3 and SUM-2 digits
bags): balanced and few-shot accuracy of SL, SL + LA, SL + CAROT, LP with the estimated and the
true marginal. Cross-checks: p(s) of our exact semantic loss against ProbLog (DeepProbLog's
reasoner) on the trained classifier's outputs, and CAROT against POT's semi-relaxed Sinkhorn.

make bench PKG=nesy [ARGS="--seeds 3 --rhos 1 10 50"]
make bench PKG=nesy ARGS="--lp --seeds 5"   # the LP's scopes on digits and on Gaussian classes
make bench PKG=nesy ARGS="--warmup --seeds 5"   # LP from a fully trained SL model vs more SL
make bench PKG=nesy ARGS="--factors --seeds 3"  # the per-batch LP, one factor changed at a time
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
import torch
from paperplug_nesy import NeSyImbalanceTrainer, carot_plan, max_of, output_probability, sum_of
from paperplug_nesy.embedded import METHODS, BagData, compare, long_tailed_bags
from paperplug_nesy.metrics import per_class_accuracy, report

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


def gaussian_bags(seed: int, n_bags: int = 2000, rho: float = 50.0, d: int = 16, sep: float = 0.6,
                  M: int = 3, test_per_class: int = 200) -> BagData:  # fmt: skip
    """A setting the package did not build: 10 Gaussian classes in d dimensions (means
    N(0, sep²·I), unit noise), P(class c) ∝ ρ^(−c/9), MAX-M bags, a balanced test set."""
    rng = np.random.default_rng(10_000 + seed)
    means = rng.normal(size=(10, d)) * sep
    p = rho ** (-np.arange(10) / 9)
    hidden = rng.choice(10, size=(n_bags, M), p=p / p.sum())
    bags = (means[hidden] + rng.normal(size=(n_bags, M, d))).astype(np.float32)
    test_y = np.repeat(np.arange(10), test_per_class)
    test_X = (means[test_y] + rng.normal(size=(len(test_y), d))).astype(np.float32)
    marginal = np.bincount(hidden.ravel(), minlength=10) / hidden.size
    return BagData(bags, hidden.max(1), hidden, test_X, test_y, marginal)


LP_METHODS = ("SL", "SL + LA", "SL + LA toward the test prior", "SL + CAROT", "LP per batch (official)", "LP over the data (ours)",
              "LP over the data + LA", "LP over the data + CAROT",
              "LP per batch, naive r̂ (official)", "LP over the data, naive r̂")  # fmt: skip
CALIBRATED = (
    "SL + LA",
    "SL + LA toward the test prior",
    "SL + CAROT",
    "LP over the data + LA",
    "LP over the data + CAROT",
)


def compare_lp(data: BagData, seed: int, epochs: int) -> dict[str, dict]:
    """SL, its test-time mitigations, and the LP per batch (the official code's band) or over
    all training bags (ours), estimated marginal or the official naive one (a moving average of
    the predictions, after 20 pre-estimation LP epochs), on MAX-3; balanced-test report."""
    common = {"sigma": "max", "M": 3, "seed": seed, "epochs": epochs, "progress": False}
    models = {
        "SL + CAROT": NeSyImbalanceTrainer(test_mitigation="carot", test_prior="uniform", **common),
        "SL + LA": NeSyImbalanceTrainer(test_mitigation="la", **common),
        "SL + LA toward the test prior": NeSyImbalanceTrainer(test_mitigation="la",
                                                              test_prior="uniform", **common),
        "LP per batch (official)": NeSyImbalanceTrainer(train_mitigation="lp", lp_scope="batch",
                                                        **common),
        "LP over the data (ours)": NeSyImbalanceTrainer(train_mitigation="lp", **common),
        "LP over the data + LA": NeSyImbalanceTrainer(train_mitigation="lp", test_mitigation="la",
                                                      **common),
        "LP over the data + CAROT": NeSyImbalanceTrainer(
            train_mitigation="lp", test_mitigation="carot", test_prior="uniform", **common),
        "LP per batch, naive r̂ (official)": NeSyImbalanceTrainer(
            train_mitigation="lp", lp_scope="batch", marginal="naive", **common),
        "LP over the data, naive r̂": NeSyImbalanceTrainer(
            train_mitigation="lp", marginal="naive", **common),
    }  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for model in models.values():
            model.fit(data.bags, data.s)
    predictions = {"SL": models["SL + CAROT"].predict(data.test_X)}
    for name, model in models.items():
        calibrated = name in CALIBRATED
        predictions[name] = (model.predict_calibrated if calibrated else model.predict)(data.test_X)
    out = {}
    for name, pred in predictions.items():
        acc = per_class_accuracy(pred, data.test_y)
        out[name] = {**report(pred, data.test_y), "spread": float(acc.max() - acc.min())}
    return out


WARMUP_METHODS = ("SL", "SL, +50% epochs", "SL, then LP for +50% epochs")


def compare_warmup(data: BagData, seed: int, epochs: int) -> dict[str, dict]:
    """The paper's warm-up: LP epochs after a fully trained semantic-loss model, against the
    same extra epochs of semantic loss (estimated marginal, MAX-3)."""
    common = {"sigma": "max", "M": 3, "seed": seed, "progress": False}
    more = epochs + epochs // 2
    models = {
        "SL": NeSyImbalanceTrainer(epochs=epochs, **common),
        "SL, +50% epochs": NeSyImbalanceTrainer(epochs=more, **common),
        "SL, then LP for +50% epochs": NeSyImbalanceTrainer(
            epochs=more, warmup_epochs=epochs, train_mitigation="lp", **common
        ),
    }
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for name, model in models.items():
            pred = model.fit(data.bags, data.s).predict(data.test_X)
            acc = per_class_accuracy(pred, data.test_y)
            out[name] = {**report(pred, data.test_y), "spread": float(acc.max() - acc.min())}
    return out


FACTOR_METHODS = (
    "SL",
    "LP per batch: B = 32, ±0.99 per position, estimated r̂ (official)",
    "  marginal error removed: true r",
    "  batch size: B = 128",
    "  batch size: B = 128, true r",
    "  band: over the data, pooled 3σ (ours)",
    "  band over the data, true r",
)


def compare_factors(data: BagData, seed: int, epochs: int) -> dict[str, dict]:
    """The official per-batch LP on MAX-3 against itself with one factor changed: the
    marginal's error (true r), the batch size, the band (pooled over the data, 3σ)."""
    common = {"sigma": "max", "M": 3, "seed": seed, "epochs": epochs, "progress": False}
    lp = {**common, "train_mitigation": "lp"}
    true = data.marginal
    settings = dict(zip(FACTOR_METHODS, [
        common,
        {**lp, "lp_scope": "batch"},
        {**lp, "lp_scope": "batch", "marginal": true},
        {**lp, "lp_scope": "batch", "batch_size": 128},
        {**lp, "lp_scope": "batch", "batch_size": 128, "marginal": true},
        lp,
        {**lp, "marginal": true},
    ], strict=True))  # fmt: skip
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for name, kw in settings.items():
            pred = NeSyImbalanceTrainer(**kw).fit(data.bags, data.s).predict(data.test_X)
            acc = per_class_accuracy(pred, data.test_y)
            out[name] = {**report(pred, data.test_y), "spread": float(acc.max() - acc.min())}
    return out


def lp_tables(
    seeds: int, epochs: int, bags: int, warmup: bool = False, factors: bool = False
) -> None:
    methods, compare_fn = (WARMUP_METHODS, compare_warmup) if warmup else (LP_METHODS, compare_lp)
    if factors:
        methods, compare_fn = FACTOR_METHODS, compare_factors
    for label, make in [
        ("digits (the package's data), ρ = 50", lambda seed: long_tailed_bags(max_of(3), bags, 50.0, seed)),
        ("16-D Gaussian classes (built here), ρ = 50", lambda seed: gaussian_bags(seed, bags)),
    ]:  # fmt: skip
        runs = {name: [] for name in methods}
        with Timer() as timer:
            for seed in progress(range(seeds), label):
                out = compare_fn(make(seed), seed, epochs)
                for name in methods:
                    runs[name].append(out[name])
        rows = []
        for name in methods:
            stats = {key: [r[key] for r in runs[name]] for key in ("balanced", "few", "spread")}
            gain = [r["few"] - s["few"] for r, s in zip(runs[name], runs["SL"], strict=True)]
            rows.append([name, fmt_ci(stats["balanced"]), fmt_ci(stats["few"]), fmt_ci(gain),
                         fmt_ci(stats["spread"])])  # fmt: skip
        print(f"\nMAX-3, {label}: {bags} bags, {epochs} epochs, seeds 0–{seeds - 1} "
              f"(mean ± 95% interval), balanced test set, {timer.seconds:.0f} s")  # fmt: skip
        print(table(rows, ["method", "balanced acc", "few-shot acc", "few-shot − SL",
                           "per-class spread"]))  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--rhos", type=float, nargs="+", default=[1.0, 10.0, 50.0])
    parser.add_argument("--bags", type=int, default=2000)
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--lp", action="store_true", help="only the LP scopes' comparison")
    parser.add_argument("--warmup", action="store_true", help="only LP after a trained SL model")
    parser.add_argument("--factors", action="store_true", help="per-batch LP, one factor at a time")
    args = parser.parse_args()
    single_thread()
    if args.lp or args.warmup or args.factors:
        lp_tables(args.seeds, args.epochs, args.bags, warmup=args.warmup, factors=args.factors)
        return

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
