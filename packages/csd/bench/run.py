"""Benchmark: CSD beside guard-then-refuse (score the whole reply, refuse if unsafe) and SCM's
stop rule (stop the stream at the first flagged claim), with the unguarded model for reference;
the same model, prompts, seeds and MiniLM guard, in one process. Then the certificate's
soundness and tightness over random calibration/test splits (HB and Clopper-Pearson).

make bench PKG=csd            # ARGS="--prompts 4" for a shorter SmolLM2 run
"""

from __future__ import annotations

import argparse
import platform

import numpy as np
from paperplug_csd.baselines import guard_then_refuse, stop_rule, unguarded
from paperplug_csd.certificate import BOUNDS
from paperplug_csd.claims import ClaimSegmenter
from paperplug_csd.decoding import ClaimStreamDecoder
from paperplug_csd.discrete import REFUSED, accept_from, csd_distribution
from paperplug_csd.embedded import (
    BENIGN_PROMPTS,
    HARMFUL_PROMPTS,
    discrete_lm,
    judge_output,
    load_smollm2,
    train_guard,
)
from paperplug_csd.evaluation import coverage_over_splits, summarize

from paperplug.harness import Timer, progress, single_thread, table

TAU, BUDGET, DEPTH, DELTA = 0.5, 2, 1, 0.1


def run_methods(decoder, prompts, seed):
    """Each method over the prompts with the same seeds: (name, results, seconds per reply)."""
    methods = [
        ("unguarded", lambda p, s: unguarded(decoder, p, seed=s)),
        ("guard-then-refuse", lambda p, s: guard_then_refuse(decoder, p, seed=s)),
        ("SCM stop rule (k=1)", lambda p, s: stop_rule(decoder, p, seed=s)),
        ("CSD (B=2, depth 1)", lambda p, s: decoder.generate(p, seed=s)),
    ]
    out = []
    for name, fn in methods:
        with Timer() as t:
            results = [
                fn(p, seed * 100_000 + i) for i, p in enumerate(progress(prompts, desc=name))
            ]
        out.append((name, results, t.seconds / len(prompts)))
    return out


def rows_of(runs, harmful):
    rows = []
    for name, results, seconds in runs:
        r = summarize(results, harmful, judge_output)
        rows.append([name, r["harmful_rate"], r["helpful"], r["refusals"], r["guard_calls"],
                     r["resamples"], r["tokens"], seconds * 1000])  # fmt: skip
    return rows


HEADER = ["method", "harmful rate", "helpful", "refusals", "guard calls", "resamples", "tokens"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--draws", type=int, default=3000, help="replies on the discrete LM")
    parser.add_argument("--prompts", type=int, default=8, help="SmolLM2 harmful + benign each")
    parser.add_argument("--max-tokens", type=int, default=40)
    parser.add_argument("--device", default=None, help="where SmolLM2 runs (cpu, cuda)")
    args = parser.parse_args()
    single_thread()
    print(
        f"machine: {platform.processor() or platform.machine()}, 1 thread, {platform.python_version()}"
    )
    guard = train_guard(args.seed)

    # 1. The discrete claim LM: every reply answers a harmful-leaning query (unsafe claims
    # have p ≈ 0.4 at each position); "helpful" = answered without a refusal.
    lm = discrete_lm()
    decoder = ClaimStreamDecoder(lm, guard, tau=TAU, budget=BUDGET, depth=DEPTH)
    prompts = [""] * args.draws
    runs = run_methods(decoder, prompts, args.seed)
    rows = []
    for name, results, seconds in runs:
        r = summarize(results, [True] * len(results), judge_output)
        helpful = float(np.mean([not x.fallback and bool(x.claims) for x in results]))
        rows.append([name, r["harmful_rate"], helpful, r["refusals"], r["guard_calls"],
                     r["resamples"], r["tokens"], seconds * 1e6])  # fmt: skip
    print(f"\ndiscrete claim LM, {args.draws} replies, τ = {TAU}, MiniLM guard")
    print(table(rows, [*HEADER, "µs / reply"], digits=3))

    # 2. SmolLM2-135M-Instruct end to end on harmful and benign prompts.
    if args.prompts > 0:
        chat = load_smollm2(args.device)
        llm = ClaimStreamDecoder(
            chat, guard, tau=TAU, budget=BUDGET, depth=DEPTH,
            segmenter=ClaimSegmenter(min_tokens=5, max_claim_tokens=32),
            temperature=0.7, top_p=0.9, max_tokens=args.max_tokens,
        )  # fmt: skip
        prompts = HARMFUL_PROMPTS[: args.prompts] + BENIGN_PROMPTS[: args.prompts]
        harmful = [True] * args.prompts + [False] * args.prompts
        runs = run_methods(llm, prompts, args.seed)
        print(f"\nSmolLM2-135M-Instruct, {args.prompts} harmful + {args.prompts} benign prompts, "
              f"τ = {TAU}, ≤ {args.max_tokens} tokens, MiniLM guard")  # fmt: skip
        print(table(rows_of(runs, harmful), [*HEADER, "ms / reply"], digits=3))

    # 3. Certificate soundness and tightness: coverage runs over 200 random splits each.
    text_of = lambda k: " ".join(lm.claims[i] for i in k if i != REFUSED)  # noqa: E731
    cov_rows = []
    for tau in (0.75, 0.85):
        d = ClaimStreamDecoder(lm, guard, tau=tau, budget=BUDGET, depth=DEPTH)
        losses = np.array([judge_output(d.generate("", seed=10**6 + i).text)
                           for i in progress(range(args.draws), desc=f"losses at τ = {tau}")])  # fmt: skip
        exact, _ = csd_distribution(lm, accept_from(lm, guard, tau), budget=BUDGET, depth=DEPTH)
        risk = sum(p for k, p in exact.items() if judge_output(text_of(k)))
        for method in ("hb", "clopper_pearson"):
            for n_cal in (100, 300, args.draws // 3):
                cov = coverage_over_splits(losses, n_cal=n_cal, delta=DELTA, method=method,
                                           splits=200, seed=args.seed)  # fmt: skip
                # Fresh calibration sets drawn from the exact law (k ~ Binomial(n, risk)):
                # the certificate's own promise, free of the finite pool's correlation.
                ks = np.random.default_rng(args.seed).binomial(n_cal, risk, size=2000)
                fresh = np.mean([BOUNDS[method](int(k), n_cal, DELTA) >= risk for k in ks])
                cov_rows.append([tau, round(risk, 4), method, n_cal, cov.coverage,
                                 float(np.mean(cov.bounds >= risk)), float(fresh), cov.mean_gap,
                                 float(np.mean(cov.bounds - risk))])  # fmt: skip
    print(f"\ncertificate over 200 random calibration/test splits of {args.draws} CSD replies, "
          f"and over 2000 fresh calibration draws from the exact law; δ = {DELTA}")  # fmt: skip
    print(table(cov_rows, ["τ", "exact risk", "bound", "n cal", "P(test ≤ α̂)", "P(exact ≤ α̂)",
                           "fresh P(exact ≤ α̂)", "α̂ − test risk", "α̂ − exact risk"], digits=3))  # fmt: skip
    for method in ("hb", "clopper_pearson"):
        rows = [r for r in cov_rows if r[2] == method]
        held = all(min(r[4], r[5], r[6]) >= 1 - DELTA for r in rows)
        print(f"{method}: coverage ≥ {1 - DELTA} in every run: {held} "
              f"(lowest {min(min(r[4], r[5], r[6]) for r in rows):.3f})")  # fmt: skip


if __name__ == "__main__":
    main()
