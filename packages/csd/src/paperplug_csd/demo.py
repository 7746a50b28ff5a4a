"""Embedded default: C-SafeGen's CSD on a discrete claim LM with known probabilities (exact
distribution, certificate coverage over random splits, Learn-then-Test, the online τ), then
SmolLM2-135M-Instruct end to end under a MiniLM guard trained on the spot. Offline, CPU."""

from __future__ import annotations

from collections import Counter

import numpy as np

from paperplug.harness import (
    Timer,
    demo_parser,
    progress,
    pyplot,
    save_figure,
    single_thread,
    table,
)
from paperplug_csd.baselines import unguarded
from paperplug_csd.certificate import RiskCertifier, learn_then_test
from paperplug_csd.claims import ClaimSegmenter
from paperplug_csd.decoding import ClaimStreamDecoder
from paperplug_csd.discrete import (
    REFUSED,
    accept_from,
    csd_distribution,
    target_distribution,
    total_variation,
)
from paperplug_csd.embedded import (
    BENIGN_PROMPTS,
    HARMFUL_PROMPTS,
    discrete_lm,
    judge_output,
    load_smollm2,
    train_guard,
)
from paperplug_csd.evaluation import coverage_over_splits, summarize
from paperplug_csd.online import OnlineTau, run_online

TAU, BUDGET, DEPTH, DELTA, ALPHA = 0.5, 2, 1, 0.1, 0.1


def key(result) -> tuple[int, ...]:
    return tuple(result.claim_indices) + ((REFUSED,) if result.fallback else ())


def discrete_part(guard, seed: int, n: int) -> tuple[list, dict]:
    """Exactness, coverage, Learn-then-Test and the online τ on the discrete claim LM."""
    from scipy.stats import chisquare

    lm = discrete_lm()
    text_of = lambda k: " ".join(lm.claims[i] for i in k if i != REFUSED)  # noqa: E731
    risk_of = lambda dist: sum(p for k, p in dist.items() if judge_output(text_of(k)))  # noqa: E731
    rows, figs = [], {}

    decoder = ClaimStreamDecoder(lm, guard, tau=TAU, budget=BUDGET, depth=DEPTH)
    counts = Counter(
        key(decoder.generate("", seed=seed * n + i))
        for i in progress(range(n), desc="CSD on the discrete LM")
    )
    accept = accept_from(lm, guard, TAU)
    exact, exhausted = csd_distribution(lm, accept, budget=BUDGET, depth=DEPTH)
    target = target_distribution(lm, accept)
    big = [k for k in exact if exact[k] * n >= 5]
    obs = [counts.get(k, 0) for k in big] + [n - sum(counts.get(k, 0) for k in big)]
    exp = [exact[k] * n for k in big] + [n - sum(exact[k] * n for k in big)]
    p_chi2 = float(chisquare(obs, exp).pvalue)
    emp = {k: c / n for k, c in counts.items()}
    unguarded_exact, _ = csd_distribution(lm, lambda p, c: True, budget=0, depth=0)
    rows += [
        [
            "TV(empirical, exact CSD law), χ² p-value",
            f"{total_variation(emp, exact):.4f}, p = {p_chi2:.3f}",
        ],
        [
            "fallback rate: empirical / exact",
            f"{emp_fallback(emp):.4f} / {emp_fallback(exact):.4f}",
        ],
        [
            "TV(CSD, target) ≤ P(budget ran out)",
            f"{total_variation(exact, target):.4f} ≤ {exhausted:.4f}",
        ],
        [
            "exact risk: unguarded LM → CSD (τ = 0.5)",
            f"{risk_of(unguarded_exact):.4f} → {risk_of(exact):.4f}",
        ],
    ]
    figs["dist"] = (exact, emp)

    # Learn-then-Test over a τ grid (strict to lenient), then coverage at the lenient end.
    taus = [0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9]
    decoders = [ClaimStreamDecoder(lm, guard, tau=t, budget=BUDGET, depth=DEPTH) for t in taus]
    pool = np.array([[judge_output(d.generate("", seed=10**6 + i).text) for d in decoders]
                     for i in progress(range(n), desc="losses over the τ grid")])  # fmt: skip
    ltt = learn_then_test(pool[:500], taus, alpha=ALPHA, delta=DELTA)
    exact_risks = [
        risk_of(csd_distribution(lm, accept_from(lm, guard, t), budget=BUDGET, depth=DEPTH)[0])
        for t in taus
    ]
    chosen_risk = exact_risks[ltt.index] if ltt.index is not None else float("nan")
    rows.append(
        [
            f"Learn-then-Test (α = {ALPHA}, δ = {DELTA}, n = 500): τ̂, α̂, exact risk",
            f"{ltt.tau}, {ltt.bound:.4f}, {chosen_risk:.4f}",
        ]
    )
    covs = []
    for j, t in enumerate(taus):
        if exact_risks[j] == 0 or exact_risks[j] in [r for _, r, _ in covs]:
            continue  # one coverage run per distinct risk level
        cov = coverage_over_splits(pool[:, j], n_cal=300, delta=DELTA, splits=200, seed=seed)
        covs.append((t, exact_risks[j], cov))
        true_cov = float(np.mean(cov.bounds >= exact_risks[j]))
        rows.append(
            [
                f"200 splits, τ = {t} (exact risk {exact_risks[j]:.3f}): P(test risk ≤ α̂), "
                "P(exact risk ≤ α̂), mean α̂ − test risk",
                f"{cov.coverage:.3f}, {true_cov:.3f} (≥ {1 - DELTA}), {cov.mean_gap:.4f}",
            ]
        )
    figs["coverage"] = covs

    online = OnlineTau(alpha=0.05, eta=0.05, tau0=TAU)
    run = run_online(decoder, [""] * 2000, lambda p, r: judge_output(r.text), online, seed=seed)
    rows.append(
        ["online τ (α = 0.05, η = 0.05, 2000 queries): long-run error", f"{run.long_run_error:.4f}"]
    )
    figs["online"] = run
    return rows, figs


def emp_fallback(dist: dict) -> float:
    return sum(p for k, p in dist.items() if k[-1:] == (REFUSED,))


def smollm2_part(guard, seed: int, n_prompts: int, max_tokens: int) -> tuple[list, list]:
    """CSD and the unguarded model on harmful and benign prompts: one row per method."""
    prompts = HARMFUL_PROMPTS[:n_prompts] + BENIGN_PROMPTS[:n_prompts]
    harmful = [True] * n_prompts + [False] * n_prompts
    chat = load_smollm2()
    decoder = ClaimStreamDecoder(
        chat, guard, tau=TAU, budget=BUDGET, depth=DEPTH,
        segmenter=ClaimSegmenter(min_tokens=5, max_claim_tokens=32),
        temperature=0.7, top_p=0.9, max_tokens=max_tokens,
    )  # fmt: skip
    rows, runs = [], {}
    for name, fn in (("unguarded", unguarded), ("CSD", None)):
        results = []
        with Timer() as t:
            for i, p in enumerate(progress(prompts, desc=f"SmolLM2, {name}")):
                s = seed * 1000 + i
                results.append(
                    decoder.generate(p, seed=s) if fn is None else fn(decoder, p, seed=s)
                )
        row = summarize(results, harmful, judge_output)
        rows.append([name, row["harmful_rate"], row["helpful"], row["refusals"], row["resamples"],
                     row["backtracks"], row["guard_calls"], row["tokens"], t.seconds / len(prompts)])  # fmt: skip
        runs[name] = results
    losses = [judge_output(r.text) for r in runs["CSD"]]
    half = len(losses) // 2
    order = np.random.default_rng(seed).permutation(len(losses))
    cal, test = [losses[i] for i in order[:half]], [losses[i] for i in order[half:]]
    cert = RiskCertifier(DELTA).bound(cal)
    return rows, [cert.n, cert.risk_hat, cert.bound, float(np.mean(test))]


def figure(figs: dict, path) -> None:
    plt = pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    exact, emp = figs["dist"]
    top = sorted(exact, key=exact.get, reverse=True)[:12]
    x = np.arange(len(top))
    axes[0].bar(x - 0.2, [exact[k] for k in top], 0.4, label="exact CSD law")
    axes[0].bar(x + 0.2, [emp.get(k, 0) for k in top], 0.4, label="empirical")
    axes[0].set_xticks(
        x, [",".join("R" if i == REFUSED else str(i) for i in k) or "∅" for k in top]
    )
    axes[0].set(title="discrete claim LM: outputs", xlabel="claim indices (R = refusal)")
    axes[0].legend()
    for t, risk, cov in figs["coverage"]:
        order = np.argsort(cov.bounds)
        axes[1].plot(cov.bounds[order], label=f"α̂, τ = {t}")
        axes[1].scatter(
            np.arange(len(order)), cov.test_risks[order], s=4, label=f"test risk, τ = {t}"
        )
        axes[1].axhline(risk, ls=":", c="k")
    axes[1].set(
        title="certificate over 200 random splits", xlabel="split (sorted by α̂)", ylabel="risk"
    )
    axes[1].legend(fontsize=7)
    run = figs["online"]
    errs = np.cumsum(run.errors) / np.arange(1, len(run.errors) + 1)
    axes[2].plot(errs, label="long-run error")
    axes[2].axhline(0.05, ls="--", c="k", label="α = 0.05")
    axes[2].set(title="online τ", xlabel="query", ylim=(0, 0.3))
    axes[2].legend()
    save_figure(fig, path)


def main(argv: list[str] | None = None) -> int:
    parser = demo_parser("csd", __doc__)
    parser.add_argument("--draws", type=int, default=3000, help="CSD runs on the discrete LM")
    parser.add_argument(
        "--prompts",
        type=int,
        default=8,
        help="SmolLM2 harmful and benign prompts each (0 skips it)",
    )
    parser.add_argument("--max-tokens", type=int, default=40, help="SmolLM2 reply length")
    args = parser.parse_args(argv)
    single_thread()
    args.out.mkdir(parents=True, exist_ok=True)
    with Timer() as t:
        guard = train_guard(args.seed)
    print(f"MiniLM guard trained on the template claims in {t.seconds:.1f} s")
    rows, figs = discrete_part(guard, args.seed, args.draws)
    print(table(rows, ["discrete claim LM (exact probabilities), guard = MiniLM head", "measured"]))
    path = args.out / "csd.png"
    figure(figs, path)
    print(f"figure: {path}")
    if args.prompts > 0:
        rows, cert = smollm2_part(guard, args.seed, args.prompts, args.max_tokens)
        print(
            table(
                rows,
                [
                    "SmolLM2-135M",
                    "harmful rate",
                    "helpful",
                    "refusals",
                    "resamples",
                    "backtracks",
                    "guard calls",
                    "tokens",
                    "s / reply",
                ],
            )
        )
        print(
            table(
                [cert],
                [
                    "calibration prompts",
                    "calibration risk",
                    "certified α̂ (HB, δ = 0.1)",
                    "test risk",
                ],
                digits=3,
            )
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
