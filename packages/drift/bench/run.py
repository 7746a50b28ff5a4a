"""DRIFT beside AgentDojo's own offline defenses on AgentDojo v1.2 (agentdojo==0.1.35), same
suites, attacks, agent and pairs, in one process: benign utility, utility under attack, attack
success, benign tasks lost, LLM calls and tokens per task. Then: where DRIFT's blocking comes
from (validator only, isolator only), injection styles the isolator's cues were not written
for, an adaptive attack written against DRIFT's rules, DRIFT with SmolLM2-135M as planner,
judge and isolator on a small sample, and the replay of the official recorded runs.

make bench PKG=drift                      # everything (about 25 min on a busy 2-core CPU)
python bench/run.py --suites banking --no-smollm2 --no-held-out   # a quick look
make bench PKG=drift ARGS="--sections isolation --detectors cues,probe,learned,both"  # the isolators
make bench PKG=drift ARGS="--sections loso"   # the fine-tuned detector, leave one source out (~1 h)
make bench PKG=drift ARGS="--sections screen"  # recipe changes tried on two folds (~50 min)
make bench PKG=drift ARGS="--sections speed"  # the fine-tuned detector, float32 and bfloat16
make bench PKG=drift ARGS="--sections llm --llm-sample 2"   # LLMDetector over SmolLM2, a sample
make bench PKG=drift ARGS="--sections agentdojo_detectors --suites banking,slack,travel \
    --attacks important_instructions --detectors cues,learned,both"   # DRIFT core per detector
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

from paperplug_drift.embedded import ALL_SUITES, LABELS, oracle_drift, query_drift

from paperplug.harness import progress, single_thread, table

ISOLATION_SPLITS = ("dev", "test", "fresh", "fresh2", "fresh3", "fresh4")
HELD_OUT = ("direct", "ignore_previous", "system_message", "injecagent")
PAPER = "paper (gpt-4o-mini, LLM plan, real agent): benign utility 58.48, utility under attack 47.91, ASR 1.29 (mean over the 4 suites)"


def main_table(suites, attacks, out):
    from paperplug_drift.evaluation import run_configs, summarize

    configs = ("no defense", "spotlighting_with_delimiting", "repeat_user_prompt", "drift")
    rows, goal = [], []
    for name in suites:
        benign = run_configs(name, configs, attack=None, drift=oracle_drift)
        benign["drift (query planner)"] = run_configs(
            name, ["drift"], attack=None, drift=query_drift
        )["drift"]
        ok_none = {r.user_task for r in benign["no defense"] if r.utility}
        for attack in attacks:
            start = time.perf_counter()
            attacked = run_configs(
                name,
                configs,
                attack=attack,
                drift=oracle_drift,
                progress=lambda it, d=f"{name} {attack}": progress(it, desc=d),
            )
            attacked["drift (query planner)"] = run_configs(
                name, ["drift"], attack=attack, drift=query_drift
            )["drift"]
            for config in (*configs, "drift (query planner)"):
                b, a = summarize(benign[config]), summarize(attacked[config])
                lost = len(ok_none - {r.user_task for r in benign[config] if r.utility})
                rows.append(
                    [
                        name,
                        attack,
                        LABELS[config],
                        f"{b['utility']:.1f}",
                        lost,
                        f"{a['utility']:.1f}",
                        f"{a['asr']:.2f} ({a['successes']}/{a['pairs']})",
                        f"{100 - a['asr']:.2f}",
                        f"{a['llm_calls']:.0f} / {a['tokens']:.0f}",
                    ]
                )
                out["main"].append(
                    {
                        "suite": name,
                        "attack": attack,
                        "config": config,
                        "benign": b,
                        "benign_lost": lost,
                        "attacked": a,
                    }
                )
                if config.startswith("drift"):
                    goal.append((name, attack, config, 100 - a["asr"], lost))
                    out["residual"][f"{name}/{attack}"] = [
                        r.to_dict() for r in attacked[config] if r.security
                    ]
            print(f"  {name} {attack}: {time.perf_counter() - start:.0f} s", flush=True)
    print(
        table(
            rows,
            [
                "suite",
                "attack",
                "configuration",
                "benign utility %",
                "benign lost",
                "utility under attack %",
                "ASR % (pairs)",
                "blocked %",
                "LLM calls / tokens per task",
            ],
        )
    )
    met = all(blocked == 100.0 for *_, blocked, _ in goal)
    print(
        f"goal (DRIFT core: 0 successful injections, both planners): {'met' if met else 'MISSED'}"
    )
    for name, attack, config, blocked, lost in goal:
        print(
            f"  {name:9s} {attack:22s} {LABELS[config]:26s} blocked {blocked:6.2f}%  benign lost {lost}"
        )
    print(PAPER + "; not reproducible offline (no gpt-4o-mini here).")


def isolation(out, detectors=("cues",), splits=ISOLATION_SPLITS):
    """Each isolator detector on the isolation corpus, per split: dev (tuned on), test (held out
    from the first round of tuning), fresh, fresh2 (each measured once, then used), fresh3
    (measured once, never tuned on), fresh4 (written before the learned detector, never tuned
    on). The learned detector was trained on dev, test, fresh and fresh2; fresh3 shares its
    goals with them, fresh4 has its own."""
    from paperplug_drift.corpus import load_corpus, rates, score_isolation
    from paperplug_drift.isolator import InjectionIsolator

    data = Path(__file__).resolve().parents[1] / "tests" / "data" / "isolation"
    records = [r for f in sorted(data.glob("corpus*.jsonl")) for r in load_corpus(f)]
    records = [r for r in records if r["split"] in splits]
    rows = []
    for name in detectors:
        iso = InjectionIsolator(name)
        if name != "cues":  # the embedder loads once, outside the timing; its cache starts empty
            iso.isolate("warm-up", "Load the embedder.")
            iso.detectors[0].embedder.clear_cache()
        with warnings.catch_warnings(record=True) as near:
            warnings.simplefilter("always")
            start = time.perf_counter()
            report = score_isolation(lambda q, r, iso=iso: iso.isolate(q, r).result, records)
            seconds = time.perf_counter() - start
        near = [w for w in near if w.category.__name__ == "NearThresholdWarning"]
        uncached = None
        if name != "cues":  # each result alone, as an agent meets them: no sentence cached
            alone = [r for r in records if r["split"] == splits[-1]]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                start = time.perf_counter()
                for r in alone:
                    iso.detectors[0].embedder.clear_cache()
                    iso.isolate(r["query"], r["result"])
                uncached = 1000 * (time.perf_counter() - start) / len(alone)
        for split in splits:
            part, pct = report[split], rates(report[split])
            rows.append(
                [
                    name,
                    split,
                    f"{pct['detected']:.2f} ({part['detected']}/{part['injected']})",
                    f"{pct['obfuscated_detected']:.2f} ({part['obfuscated_detected']}/{part['obfuscated']})",
                    f"{pct['clean_kept']:.2f} ({part['clean_units_kept']}/{part['clean_units']})",
                    f"{pct['benign_changed']:.2f} ({part['benign_changed']}/{part['benign']})",
                    f"{part['clean_changed']}/{part['clean']}",
                ]
            )
            out["isolation"].append({"detector": name, "split": split, **part, **pct})
        out["isolation_cost"][name] = {
            "results": len(records),
            "seconds": seconds,
            "near_threshold_warnings": len(near),
            "ms_per_result_uncached": uncached,
        }
        alone = (
            f", sentences cached by text across results; {uncached:.1f} ms a result of "
            f"{splits[-1]} with none cached"
            if uncached
            else ""
        )
        print(
            f"  {name}: {len(records)} results in {seconds:.1f} s ({1000 * seconds / len(records):.1f} ms each"
            f"{alone}), {len(near)} near-threshold warnings",
            flush=True,
        )
    print(
        table(
            rows,
            [
                "detector",
                "split",
                "injections detected %",
                "obfuscated detected %",
                "clean units kept %",
                "benign look-alikes changed %",
                "clean results changed",
            ],
        )
    )


def ablation(suites, out):
    from paperplug_drift.agentdojo_adapter import AgentDojoOracle
    from paperplug_drift.drift import Drift, DriftConfig
    from paperplug_drift.evaluation import run_configs, summarize

    rows = []
    variants = {
        "validator only (isolator off)": DriftConfig(isolate=False),
        "isolator only (validator off)": DriftConfig(validate=False),
        "validator + isolator (DRIFT)": DriftConfig(),
    }
    for name in suites:
        for label, config in variants.items():
            make = lambda suite, config=config: Drift(planner=AgentDojoOracle(suite), config=config)  # noqa: E731
            a = summarize(run_configs(name, ["drift"], drift=make)["drift"])
            b = summarize(run_configs(name, ["drift"], attack=None, drift=make)["drift"])
            rows.append(
                [
                    name,
                    label,
                    f"{b['utility']:.1f}",
                    f"{a['utility']:.1f}",
                    f"{a['asr']:.2f} ({a['successes']}/{a['pairs']})",
                ]
            )
            out["ablation"].append({"suite": name, "variant": label, "benign": b, "attacked": a})
    print(
        table(
            rows,
            [
                "suite",
                "DRIFT core, oracle plan",
                "benign utility %",
                "utility under attack %",
                "ASR % (pairs)",
            ],
        )
    )


def held_out(suites, out):
    from paperplug_drift.evaluation import run_configs, summarize

    rows = []
    for attack in HELD_OUT:
        for name in suites:
            runs = run_configs(name, ("no defense", "drift"), attack=attack, drift=oracle_drift)
            none, drift = summarize(runs["no defense"]), summarize(runs["drift"])
            obeyed = sum(r.obeyed for r in runs["drift"])
            rows.append(
                [
                    attack,
                    name,
                    f"{none['asr']:.1f}",
                    f"{drift['asr']:.2f} ({drift['successes']}/{drift['pairs']})",
                    f"{obeyed}/{drift['pairs']}",
                    f"{drift['utility']:.1f}",
                ]
            )
            out["held_out"].append(
                {"attack": attack, "suite": name, "none": none, "drift": drift, "obeyed": obeyed}
            )
    print(
        table(
            rows,
            [
                "attack (not used to write the cues)",
                "suite",
                "ASR no defense %",
                "ASR DRIFT core %",
                "isolator missed (agent obeyed)",
                "utility under attack %",
            ],
        )
    )


def adaptive(suites, out):
    from paperplug_drift.evaluation import run_adaptive

    rows = []
    for name in suites:
        for config in ("no defense", "drift"):
            results, untargeted = run_adaptive(name, config, drift=oracle_drift)
            wins = sum(r.security for r in results)
            rows.append(
                [
                    name,
                    LABELS[config],
                    len(results),
                    untargeted,
                    f"{wins}/{len(results)}",
                    sum(r.utility for r in results),
                ]
            )
            out["adaptive"].append(
                {
                    "suite": name,
                    "config": config,
                    "targeted": len(results),
                    "untargeted": untargeted,
                    "successes": wins,
                    "kinds": sorted({r.injection_task for r in results}),
                }
            )
    print(
        table(
            rows,
            [
                "suite",
                "configuration",
                "tasks targeted",
                "not targetable",
                "attack success",
                "utility kept",
            ],
        )
    )


def smollm2(pairs_per_suite, out):
    import torch
    from paperplug_drift.drift import Drift, DriftConfig
    from paperplug_drift.evaluation import run_configs, summarize
    from paperplug_llm import load_smollm2

    torch.set_num_threads(1)
    start = time.perf_counter()
    model = load_smollm2()
    print(f"  SmolLM2-135M-Instruct loaded in {time.perf_counter() - start:.1f} s", flush=True)
    rows = []
    for name, pairs in pairs_per_suite.items():
        drifts = []

        def make(suite, drifts=drifts):
            # one planner try and short replies: each SmolLM2 call costs seconds to minutes here
            drift = Drift(model, config=DriftConfig(planner_retries=1, max_new_tokens=128))
            drifts.append(drift)
            return drift

        start = time.perf_counter()
        benign = run_configs(
            name, ["drift"], attack=None, pairs=[(u, None) for u, _ in pairs], drift=make
        )["drift"]
        attacked = run_configs(name, ["no defense", "drift"], pairs=pairs, drift=make)
        seconds = time.perf_counter() - start
        usage = drifts[0].usage.merge(drifts[1].usage)
        b, a, n = summarize(benign), summarize(attacked["drift"]), summarize(attacked["no defense"])
        tasks = len(benign) + len(attacked["drift"])
        rows.append(
            [
                name,
                len(pairs),
                f"{b['utility']:.0f}",
                f"{a['utility']:.0f}",
                f"{n['asr']:.0f} -> {a['asr']:.0f}",
                f"{usage.total_llm_calls / tasks:.1f}",
                f"{usage.total_tokens / tasks:.0f}",
                json.dumps(dict(usage.parse_failures)),
                json.dumps(dict(usage.refusals)),
                f"{seconds / tasks:.0f}",
            ]
        )
        out["smollm2"].append(
            {
                "suite": name,
                "pairs": pairs,
                "benign": b,
                "attacked": a,
                "none": n,
                "usage": usage.to_dict(),
                "seconds": seconds,
            }
        )
    print(
        table(
            rows,
            [
                "suite",
                "pairs",
                "benign utility %",
                "utility under attack %",
                "ASR % none -> DRIFT",
                "LLM calls / task",
                "tokens / task",
                "parse failures",
                "refusals",
                "s / task",
            ],
        )
    )


def official(files, out):
    """The official runs' own outcome and cost (gpt-4o-mini, LLM plan, real agent)."""
    rows = []
    for name in ALL_SUITES:
        runs = [json.loads(f.read_text()) for f in files if f"/{name}/" in str(f)]
        if not runs:
            continue
        n = len(runs)
        utility = 100 * sum(r["utility"] for r in runs) / n
        asr = 100 * sum(r["security"] for r in runs) / n
        tokens = sum(r["total_tokens"] for r in runs) / n
        rows.append(
            [
                name,
                n,
                f"{utility:.1f}",
                f"{asr:.2f} ({sum(r['security'] for r in runs)}/{n})",
                f"{tokens:.0f}",
            ]
        )
        out["official"].append(
            {"suite": name, "runs": n, "utility": utility, "asr": asr, "tokens": tokens}
        )
    print(
        table(
            rows,
            [
                "suite",
                "recorded runs",
                "utility under attack %",
                "ASR % (pairs)",
                "tokens per task",
            ],
        )
    )


def replay(path, out):
    from paperplug_drift.replay import replay_run

    files = sorted(Path(path).glob("**/important_instructions/*.json"))
    files = [f for f in files if any(f"/{s}/" in str(f) for s in ALL_SUITES)]
    print(
        "official DRIFT runs (gpt-4o-mini-2024-07-18, LLM plan, real agent, important_instructions):"
    )
    official(files, out)
    rows = []
    for align in ("official", "position"):
        turns = agree = 0
        kinds: dict[str, int] = {}
        for f in files:
            report = replay_run(json.loads(f.read_text()), align=align)
            turns += len(report.turns)
            agree += sum(t.agrees for t in report.turns)
            for t in report.disagreements():
                key = f"{t.official}->{t.ours}{' (batch)' if t.multi else ''}"
                kinds[key] = kinds.get(key, 0) + 1
        rows.append(
            [align, len(files), turns, f"{100 * agree / max(turns, 1):.2f}", json.dumps(kinds)]
        )
        out["replay"].append(
            {
                "align": align,
                "runs": len(files),
                "turns": turns,
                "agree": agree,
                "disagreements": kinds,
            }
        )
    print(
        table(
            rows,
            [
                "checklist alignment",
                "recorded runs",
                "agent turns",
                "decisions reproduced %",
                "disagreements (official->ours)",
            ],
        )
    )


def replay_section(official_runs, out):
    """The official runs through our validator: the whole corpus given, else the kept ones."""
    if official_runs is not None:
        replay(official_runs, out)
        return
    from paperplug_drift.replay import replay_run

    out["replay_source"] = "package test data (7 runs)"
    runs = Path(__file__).resolve().parents[1] / "tests" / "data" / "official_runs"
    files = sorted(runs.glob("*.json"))
    agree = [replay_run(json.loads(f.read_text())).agreement for f in files]
    print(
        f"  {len(files)} runs kept as test data: mean agreement {100 * sum(agree) / len(agree):.1f}% (pass --official-runs for the whole corpus)"
    )


def _detectors(scorer):
    from paperplug_drift.heuristics import HeuristicDetector
    from paperplug_drift.learned import LearnedDetector, TunedDetector

    return {
        "cues (default)": HeuristicDetector(),
        "probe (logistic on MiniLM)": LearnedDetector(),
        "learned (fine-tuned)": TunedDetector(scorer),
        "both (fine-tuned + cues)": TunedDetector(scorer, cues=True),
    }


def _row(name, held, r):
    return [
        held,
        name,
        f"{r['found_pct']:.1f} ({r['found']}/{r['injected']})",
        f"{r['removed_pct']:.1f}",
        f"{r['untouched_pct']:.1f} ({r['clean_untouched']}/{r['clean']})",
        f"{r['lookalikes_changed_pct']:.1f} ({r['benign_changed']}/{r['benign']})",
        f"{r['json_kept_pct']:.1f} ({r['json_kept']}/{r['json_fields']})",
        f"{r['median_ms']:.1f}",
        f"{r['median_cpu_ms']:.1f}",
    ]


LOSO_HEAD = [
    "held out",
    "detector",
    "injections found %",
    "payload removed %",
    "benign untouched %",
    "look-alikes changed %",
    "JSON clean fields kept %",
    "median ms",
    "median CPU ms",
]


def loso(out, sources, epochs, limit, deltas):
    """Leave one source out: fine-tune without a source (`recipe.SOURCES`), measure every
    detector on that source's results; then the shipped delta on fresh3 and fresh4 (never
    trained on). A delta already in `deltas` with the same sources and data is reused."""
    import torch
    from paperplug_drift import finetune, recipe
    from paperplug_drift.corpus import load_corpus
    from paperplug_drift.isolator import InjectionIsolator
    from paperplug_drift.learned import NearThresholdWarning

    warnings.filterwarnings("ignore", category=NearThresholdWarning)
    deltas = Path(deltas)
    deltas.mkdir(parents=True, exist_ok=True)
    loaded = {s: recipe.load_source(s) for s in recipe.SOURCES}
    rows, means = [], {}
    for held in sources:
        names = [s for s in recipe.SOURCES if s != held]
        pairs = recipe.examples([loaded[s] for s in names])
        scorer = _fold_delta(deltas / f"without-{held}.safetensors", pairs, epochs)
        seconds = scorer.key["train_seconds"]
        print(f"  without {held}: threshold {scorer.threshold}, trained {seconds} s")
        records = recipe.records(loaded[held], limit=limit)
        for name, detector in _detectors(scorer).items():
            with torch.inference_mode():
                r = recipe.evaluate(InjectionIsolator(detector).isolate, records)
            rows.append(_row(name, held, r))
            means.setdefault(name, []).append(r)
            out["loso"].append(
                {"held_out": held, "detector": name, "threshold": scorer.threshold, **r}
            )
            print("   ", " | ".join(rows[-1]), flush=True)
    for name, rs in means.items():
        mean = {}
        for k in (
            "found_pct",
            "removed_pct",
            "untouched_pct",
            "lookalikes_changed_pct",
            "json_kept_pct",
            "median_ms",
            "median_cpu_ms",
        ):
            vals = [r[k] for r in rs if r[k] == r[k]]  # sources without such records: NaN
            mean[k] = sum(vals) / len(vals) if vals else float("nan")
        rows.append(["mean", name] + [f"{mean[k]:.1f}" for k in mean])
        out["loso_mean"].append({"detector": name, **mean})
    print(table(rows, LOSO_HEAD))
    shipped = finetune.default_scorer()
    print(
        f"\nthe shipped delta (every source; threshold {shipped.threshold}) on sets never trained on:"
    )
    rows = []
    data = Path(__file__).parents[1] / "tests" / "data" / "isolation"
    for split in ("fresh3", "fresh4"):
        records = load_corpus(data / f"corpus_{split}.jsonl")
        for name, detector in _detectors(shipped).items():
            with torch.inference_mode():
                r = recipe.evaluate(InjectionIsolator(detector).isolate, records)
            rows.append(_row(name, split, r))
            out["loso_fresh"].append({"split": split, "detector": name, **r})
            print("   ", " | ".join(rows[-1]), flush=True)
    print(table(rows, LOSO_HEAD))


def _fold_delta(path, pairs, epochs):
    """The delta at `path` if its key holds these pairs and epochs, else trained and written."""
    from paperplug_drift import finetune, recipe

    key = finetune.PairScorer(path).key if path.exists() else None
    if not key or key.get("data") != recipe.data_key(pairs) or key.get("epochs") != epochs:
        model, threshold, info = finetune.train(pairs, epochs=epochs)
        names = list(dict.fromkeys(e.source for e in pairs))
        key = {**info, "sources": names, "data": recipe.data_key(pairs)}
        finetune.save_delta(model, threshold, key, path)
    return finetune.PairScorer(path)


SCREEN = ("reader", "epochs3")  # the screen's variants: one change to the loso recipe each


def screen(out, held_out, epochs, limit, deltas, variants=SCREEN):
    """A quick screen of changes to the recipe on two folds: each source of `held_out` held
    out, the detector fine-tuned without it as in the loso section (the baseline; its delta is
    the loso section's) and with one change: "reader", the hard negatives of
    `recipe.reader_orders` added (orders to the reader inside e-mails and notes); "epochs3",
    one more epoch. Measured on the held-out source."""
    import random

    import torch
    from paperplug_drift import recipe
    from paperplug_drift.isolator import InjectionIsolator
    from paperplug_drift.learned import NearThresholdWarning, TunedDetector

    warnings.filterwarnings("ignore", category=NearThresholdWarning)
    deltas = Path(deltas)
    deltas.mkdir(parents=True, exist_ok=True)
    loaded = {s: recipe.load_source(s) for s in recipe.SOURCES}
    extra = recipe.reader_orders(random.Random("0-reader_orders"))
    rows = []
    for held in held_out:
        base = [loaded[s] for s in recipe.SOURCES if s != held]
        records = recipe.records(loaded[held], limit=limit)
        runs = {"baseline": (base, epochs, deltas / f"without-{held}.safetensors")}
        if "reader" in variants:
            runs["+ reader orders"] = (
                [*base, extra],
                epochs,
                deltas / f"screen-{held}-reader.safetensors",
            )
        if "epochs3" in variants:
            runs["3 epochs"] = (base, epochs + 1, deltas / f"screen-{held}-epochs3.safetensors")
        for variant, (sources, n, path) in runs.items():
            start = time.perf_counter()
            scorer = _fold_delta(path, recipe.examples(sources), n)
            print(
                f"  {held} {variant}: threshold {scorer.threshold}, "
                f"{time.perf_counter() - start:.0f} s",
                flush=True,
            )
            for cues in (False, True):
                name = f"{'both' if cues else 'learned'}, {variant}"
                with torch.inference_mode():
                    r = recipe.evaluate(
                        InjectionIsolator(TunedDetector(scorer, cues=cues)).isolate, records
                    )
                rows.append(_row(name, held, r))
                out["screen"].append(
                    {
                        "held_out": held,
                        "variant": variant,
                        "cues": cues,
                        "threshold": scorer.threshold,
                        **r,
                    }
                )
                print("   ", " | ".join(rows[-1]), flush=True)
    print(table(rows, LOSO_HEAD))


def speed(out, sources, limit):
    """The shipped delta as `"both"` in float32 (the plain path) and in bfloat16 (the default)
    on every source's loso records and on fresh3 and fresh4: the same figures, and the per
    result median; the share of results whose isolation differs between the two."""
    import torch
    from paperplug_drift import finetune, recipe
    from paperplug_drift.corpus import load_corpus
    from paperplug_drift.isolator import InjectionIsolator
    from paperplug_drift.learned import NearThresholdWarning, TunedDetector

    warnings.filterwarnings("ignore", category=NearThresholdWarning)
    data = Path(__file__).parents[1] / "tests" / "data" / "isolation"
    sets = {name: recipe.records(recipe.load_source(name), limit=limit) for name in sources}
    sets |= {s: load_corpus(data / f"corpus_{s}.jsonl") for s in ("fresh3", "fresh4")}
    isolators = {
        p: InjectionIsolator(TunedDetector(finetune.PairScorer(precision=p), cues=True))
        for p in ("float32", "bfloat16")
    }
    rows = []
    for name, records in sets.items():
        outputs = {}
        for precision, iso in isolators.items():
            seen = []

            def isolate(query, result, iso=iso, seen=seen):
                seen.append(iso.isolate(query, result))
                return seen[-1]

            with torch.inference_mode():
                r = recipe.evaluate(isolate, records)
            outputs[precision] = [(o.text, o.detected) for o in seen]
            rows.append(_row(f"both, {precision}", name, r))
            out["speed"].append({"set": name, "precision": precision, **r})
            print("   ", " | ".join(rows[-1]), flush=True)
        differ = sum(a != b for a, b in zip(*outputs.values(), strict=True))
        print(f"    {name}: {differ} of {len(records)} results isolated differently", flush=True)
        out["speed_differ"][name] = [differ, len(records)]
    print(table(rows, LOSO_HEAD))


def llm_detector(out, per_source, max_tokens, modes=("free", "units"), calibration=10):
    """Over the embedded SmolLM2-135M-Instruct on a bounded sample (the first `per_source`
    injected results, look-alikes and documents of every source's loso records): "free",
    `LLMDetector` (one free-form answer per result, parsed); "units", `LLMUnitDetector` (a
    yes/no score per unit, nothing parsed), alone and with the cues, its threshold for each
    source chosen by `calibrate` (1%) on the clean units of the next `calibration` documents
    of every other source."""
    from paperplug_drift import recipe
    from paperplug_drift.isolator import InjectionIsolator, LLMDetector
    from paperplug_drift.learned import NearThresholdWarning, readings
    from paperplug_drift.llm_units import LLMUnitDetector, LLMUnitScorer, calibrate
    from paperplug_llm import load_smollm2

    warnings.filterwarnings("ignore", category=NearThresholdWarning)
    model = load_smollm2()
    rows, sample, clean = [], {}, {}
    for name in recipe.SOURCES:
        records = recipe.records(recipe.load_source(name))
        sample[name] = [
            r
            for kind in ("injected", "benign", "clean")
            for r in [r for r in records if r["kind"] == kind][:per_source]
        ]
        docs = [r for r in records if r["kind"] == "clean"][per_source : per_source + calibration]
        clean[name] = [
            (r["query"], t) for r in docs for u in readings(r["result"]) for t in u.texts
        ]
    everything = [r for records in sample.values() for r in records]
    if "free" in modes:
        iso = InjectionIsolator(LLMDetector(model, max_tokens=max_tokens))
        start = time.perf_counter()
        r = recipe.evaluate(iso.isolate, everything)
        seconds = time.perf_counter() - start
        rows.append(_row("LLMDetector(SmolLM2-135M)", f"sample of {len(everything)}", r))
        print(
            f"  {seconds:.0f} s for {len(everything)} results ({seconds / len(everything):.1f} s "
            f"each); {r['withheld']} withheld (answer not parseable, failing closed)",
            flush=True,
        )
        out["llm_detector"] = {"records": len(everything), "seconds": seconds, **r}
    if "units" in modes:
        scorer = LLMUnitScorer(model)
        start = time.perf_counter()
        scores = {
            name: [float(scorer.scores(q, [t])[0]) for q, t in pairs]
            for name, pairs in clean.items()
        }
        thresholds = {
            name: calibrate([v for other, vs in scores.items() if other != name for v in vs])
            for name in sample
        }
        print(
            f"  calibration: {sum(map(len, scores.values()))} clean units, "
            f"{time.perf_counter() - start:.0f} s; thresholds {thresholds}",
            flush=True,
        )
        for cues in (False, True):
            label = "LLMUnitDetector(SmolLM2-135M)" + (" + cues" if cues else "")
            start, results, wall, cpu = time.perf_counter(), [], [], []
            for name, records in sample.items():
                iso = InjectionIsolator(
                    LLMUnitDetector(model, threshold=thresholds[name], cues=cues)
                )

                def isolate(query, result, iso=iso, wall=wall, cpu=cpu):
                    t0, c0 = time.perf_counter(), time.thread_time()
                    isolation = iso.isolate(query, result)
                    wall.append(1000 * (time.perf_counter() - t0))
                    cpu.append(1000 * (time.thread_time() - c0))
                    return isolation

                results.append(recipe.evaluate(isolate, records))
            seconds = time.perf_counter() - start
            r = _pool(results, wall, cpu)
            rows.append(_row(label, f"sample of {len(everything)}", r))
            print("   ", " | ".join(rows[-1]), f"| {seconds:.0f} s", flush=True)
            out["llm_units"].append(
                {"cues": cues, "thresholds": thresholds, "seconds": seconds, **r}
            )
    print(table(rows, LOSO_HEAD))


def _pool(results, wall, cpu):
    """One `recipe.evaluate` summary of several (counts summed), with the medians of the
    per-result times `wall` and `cpu` (ms) of all of them."""
    from paperplug_drift import recipe

    n = {k: sum(r[k] for r in results) for k in recipe.COUNTS}
    return recipe.summarize(n, wall, cpu)


def agentdojo_detectors(suites, attacks, detectors, out):
    """DRIFT core (oracle plan) on AgentDojo with each isolator detector: benign utility,
    utility under attack, attack success."""
    from paperplug_drift.agentdojo_adapter import AgentDojoOracle
    from paperplug_drift.drift import Drift
    from paperplug_drift.evaluation import run_configs, summarize
    from paperplug_drift.learned import NearThresholdWarning

    warnings.filterwarnings("ignore", category=NearThresholdWarning)
    rows = []
    for name in suites:
        for detector in detectors:
            make = lambda suite, d=detector: Drift(planner=AgentDojoOracle(suite), detector=d)  # noqa: E731
            start = time.perf_counter()
            b = summarize(run_configs(name, ["drift"], attack=None, drift=make)["drift"])
            for attack in attacks:
                a = summarize(run_configs(name, ["drift"], attack=attack, drift=make)["drift"])
                rows.append(
                    [
                        name,
                        attack,
                        detector,
                        f"{b['utility']:.1f}",
                        f"{a['utility']:.1f}",
                        f"{a['asr']:.2f} ({a['successes']}/{a['pairs']})",
                    ]
                )
                out["agentdojo_detectors"].append(
                    {
                        "suite": name,
                        "attack": attack,
                        "detector": detector,
                        "benign": b,
                        "attacked": a,
                    }
                )
            print(f"  {name} {detector}: {time.perf_counter() - start:.0f} s", flush=True)
    print(
        table(
            rows,
            ["suite", "attack", "detector", "benign utility %", "utility under attack %", "ASR %"],
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--suites", default=",".join(ALL_SUITES))
    parser.add_argument("--attacks", default="important_instructions,tool_knowledge")
    parser.add_argument(
        "--detail-suites",
        default="banking,slack,travel",
        help="suites of the ablation and held-out sections (workspace is the slow one)",
    )
    parser.add_argument("--no-held-out", action="store_true")
    parser.add_argument(
        "--sections",
        default="isolation,main,ablation,held_out,adaptive,smollm2,replay",
        help="which sections to run (comma-separated)",
    )
    parser.add_argument("--no-smollm2", action="store_true")
    parser.add_argument(
        "--detectors",
        default="cues",
        help="isolation and agentdojo_detectors sections: cues, probe, learned, both (comma-separated; all but cues need [learned])",
    )
    parser.add_argument("--splits", default=",".join(ISOLATION_SPLITS))
    parser.add_argument(
        "--loso-sources",
        default="ours,agentdojo,spikee,pyrit,imperatives,docstrings,readmes,business",
        help="loso section: the sources held out in turn (recipe.SOURCES)",
    )
    parser.add_argument(
        "--screen-sources", default="spikee,agentdojo", help="screen section: the folds"
    )
    parser.add_argument(
        "--screen-variants", default=",".join(SCREEN), help="screen section: reader, epochs3"
    )
    parser.add_argument("--loso-epochs", type=int, default=2)
    parser.add_argument(
        "--llm-sample", type=int, default=2, help="llm section: results per source and kind"
    )
    parser.add_argument(
        "--llm-modes",
        default="free,units",
        help="llm section: free (LLMDetector), units (LLMUnitDetector)",
    )
    parser.add_argument("--llm-max-tokens", type=int, default=128, help="llm section: reply budget")
    parser.add_argument(
        "--loso-limit", type=int, default=150, help="payloads and documents per source"
    )
    parser.add_argument("--loso-deltas", default="out/drift/loso", help="where the fold deltas go")
    parser.add_argument(
        "--official-runs",
        default=None,
        help="runs/gpt-4o-mini-2024-07-18 of a SaFoLab-WISC/DRIFT checkout; default: the package's test data",
    )
    parser.add_argument("--out", default="out/drift/bench.json")
    args = parser.parse_args()
    single_thread()
    warnings.filterwarnings("ignore", module="agentdojo")
    suites, attacks = args.suites.split(","), args.attacks.split(",")
    out = {
        k: []
        for k in (
            "isolation",
            "main",
            "ablation",
            "held_out",
            "adaptive",
            "smollm2",
            "replay",
            "official",
            "loso",
            "loso_mean",
            "loso_fresh",
            "agentdojo_detectors",
            "speed",
            "llm_units",
            "screen",
        )
    }
    out["speed_differ"] = {}
    out["residual"], out["isolation_cost"] = {}, {}
    print(
        "agent: scripted (follows the user task, obeys injected orders); DRIFT core: oracle plan, name-heuristic privileges, StrictJudge, heuristic isolator; 0 LLM calls\n"
    )
    sections = set(args.sections.split(","))
    if args.no_held_out:
        sections.discard("held_out")
    if args.no_smollm2:
        sections.discard("smollm2")
    detail = [s for s in args.detail_suites.split(",") if s in suites]
    if "isolation" in sections:
        print("== the isolator on the isolation corpus (no LLM)", flush=True)
        isolation(out, args.detectors.split(","), args.splits.split(","))
    if "loso" in sections:
        print("\n== the fine-tuned detector, leave one source out (no LLM)", flush=True)
        loso(out, args.loso_sources.split(","), args.loso_epochs, args.loso_limit, args.loso_deltas)
    if "screen" in sections:
        print("\n== a screen of the recipe's hard negatives on two folds (no LLM)", flush=True)
        screen(
            out,
            args.screen_sources.split(","),
            args.loso_epochs,
            args.loso_limit,
            args.loso_deltas,
            args.screen_variants.split(","),
        )
    if "speed" in sections:
        print("\n== the fine-tuned detector in float32 and bfloat16 (no LLM)", flush=True)
        speed(out, args.loso_sources.split(","), args.loso_limit)
    if "agentdojo_detectors" in sections:
        print("\n== DRIFT core on AgentDojo with each isolator detector", flush=True)
        agentdojo_detectors(detail, attacks, args.detectors.split(","), out)
    if "llm" in sections:
        print("\n== LLMDetector over SmolLM2-135M-Instruct, a bounded sample", flush=True)
        llm_detector(out, args.llm_sample, args.llm_max_tokens, args.llm_modes.split(","))
    if "main" in sections:
        print("\n== DRIFT beside AgentDojo's offline defenses", flush=True)
        main_table(suites, attacks, out)
    if "ablation" in sections:
        print("\n== where the blocking comes from (important_instructions)", flush=True)
        ablation(detail, out)
    if "held_out" in sections:
        print("\n== injection styles the isolator's cues were not written for", flush=True)
        held_out(detail, out)
    if "adaptive" in sections:
        print(
            "\n== adaptive attack against DRIFT's rules (a fact planted for a planned Write's open parameter)",
            flush=True,
        )
        adaptive(suites, out)
    if "smollm2" in sections:
        print(
            "\n== DRIFT with SmolLM2-135M-Instruct as planner, judge and isolator (LLM plan, scripted agent)",
            flush=True,
        )
        smollm2(
            {"banking": [("user_task_1", "injection_task_0"), ("user_task_3", "injection_task_1")]},
            out,
        )
    if "replay" in sections:
        print("\n== replay of the official recorded runs through our validator", flush=True)
        replay_section(args.official_runs, out)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1, default=str))
    print(f"\nresults: {args.out}")


if __name__ == "__main__":
    main()
