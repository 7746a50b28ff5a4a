"""Benchmark: AMA beside random search at an equal victim-query budget and static edits (plain
attack tool, assertive cue, maintenance claim), per victim, on held-out queries, over seeds with
95% confidence intervals; the fine-tuned tool retriever's benign accuracy beside MiniLM's;
SmolLM2's victim queries per second (names scored in one batched pass vs one pass per name)
and the transfer of the tool-retriever tools to it.

No PyPI library implements AMA (the official code has no licence and no package), so the
peers are the paper's own baselines, run in this process on the same inputs.

make bench PKG=ama     (about 30 min on a 2-core shared CPU, one thread)
"""

from __future__ import annotations

import argparse

from paperplug_ama.embedded import (
    LLM_DOMAIN,
    benign_top1,
    compare,
    scenarios,
    static_baselines,
    tool_retriever,
    victims,
)

from paperplug.harness import Timer, best_of, fmt_ci, single_thread, table

VICTIMS = (
    "tool retriever top-1",
    "tool retriever top-2",
    "MiniLM top-1",
    "MiniLM top-2",
    "BM25 top-1",
)


def attack_table(names: list[str], seeds: list[int], budget: int) -> tuple[str, dict]:
    """AMA and random search per victim over seeds; returns the first victim and, per method,
    the tools of its first seed."""
    found = scenarios()
    rows, diffs, tools = [], [], {}
    for label, victim in victims(names).items():
        benign = benign_top1(victim, found)
        with Timer() as t:
            runs = compare(victim, found, seeds=seeds, budget=budget)
        first = not tools
        for method, per_seed in runs.items():
            rows.append(
                (
                    label,
                    method,
                    fmt_ci([r["held_out_asr"] for r in per_seed]),
                    fmt_ci([r["train_sr"] for r in per_seed]),
                    fmt_ci([r["utility"] for r in per_seed]),
                    benign,
                    max(r["queries"] for r in per_seed),
                )
            )
            if first:
                tools[method] = per_seed[0]["tools"]
        paired = [
            a["held_out_asr"] - r["held_out_asr"]
            for a, r in zip(runs["AMA"], runs["random search"], strict=True)
        ]
        diffs.append((label, fmt_ci(paired), f"{t.seconds:.0f}"))
        for kind, asr in static_baselines(victim, found).items():
            rows.append((label, f"static {kind}", f"{asr:.3f}", "-", "-", benign, 0))
    header = ("victim", "method", "held-out ASR", "optimisation SR", "utility", "benign", "queries")
    print(f"\n{len(seeds)} seeds, {budget} victim queries per domain, 10 domains x 30 held-out")
    print(table(rows, header))
    print("\nAMA minus random search, held-out ASR, paired by seed")
    print(table(diffs, ("victim", "difference", "seconds")))
    return names[0], tools


def retriever_accuracy() -> None:
    """Benign top-1 of MiniLM before and after fine-tuning, on the attack domains' queries."""
    found = scenarios()
    with Timer() as t:
        tuned = tool_retriever()
    (base,) = victims(["MiniLM top-1"]).values()
    rows = [
        ("MiniLM (all-MiniLM-L6-v2)", benign_top1(base, found), "-"),
        ("tool retriever (fine-tuned)", benign_top1(tuned, found), f"{t.seconds:.0f}"),
    ]
    print("\nbenign top-1 on the 300 held-out queries (domains the retriever never saw)")
    print(table(rows, ("retriever", "top-1 accuracy", "load/train seconds")))


def overfitting(label: str, seed: int, budget: int) -> None:
    """Every candidate either method scored, bucketed by its optimisation SR: the mean held-out
    ASR per bucket (does AMA's loop find candidates that generalise better at equal SR?)."""
    from paperplug_ama import AMAttack, attack_success, task_pool

    found = scenarios()
    (victim,) = victims([label]).values()
    rows = []
    for method, use_history in (("AMA", True), ("random search", False)):
        result = AMAttack(seed=seed, use_history=use_history).run(
            victim, found, budget=budget * len(found)
        )
        buckets: dict[float, list[float]] = {}
        for g, s in zip(result.meta["groups"], found, strict=True):
            held = task_pool(s, "held_out")
            for h in g["history"]:
                flags = attack_success(h, held, victim)
                buckets.setdefault(round(h["sr"], 1), []).append(sum(flags) / len(flags))
        for sr in sorted(buckets):
            values = buckets[sr]
            rows.append((method, sr, len(values), sum(values) / len(values)))
    print(f"\n{label}, seed {seed}: held-out ASR of every scored candidate by its optimisation SR")
    print(table(rows, ("method", "optimisation SR", "candidates", "mean held-out ASR")))


def smollm2(source: str, tools: dict, n_domains: int) -> None:
    """Victim queries per second, and the tools found on `source` transferred to SmolLM2."""
    from paperplug_ama import attack_success, selection_messages, task_pool

    (smol,) = victims(["SmolLM2"]).values()
    found = [s for s in scenarios() if s.domain == LLM_DOMAIN]
    queries = [t.query for t in found[0].optimise[:5]]
    catalog = found[0].tools

    def batched():
        for q in queries:
            smol.select(q, catalog)

    def one_pass_per_name():
        for q in queries:
            messages = selection_messages(q, catalog)
            for tool in catalog:
                smol.chat_model.token_logprobs(messages, tool["name"])

    _, fast = best_of(batched, 2)
    _, slow = best_of(one_pass_per_name, 2)
    print("\nSmolLM2 victim queries per second (7-tool slate, best of 2)")
    print(
        table(
            [
                ("names in one batched pass over the prompt cache", len(queries) / fast),
                ("one teacher-forced pass per name", len(queries) / slow),
            ],
            ("scoring", "queries / s"),
            digits=2,
        )
    )
    some = scenarios()[:n_domains]
    rows = [("benign top-1", benign_top1(smol, some))]
    for method, by_domain in tools.items():
        flags = [
            f
            for s in some
            for f in attack_success(by_domain[s.domain], task_pool(s, "held_out"), smol)
        ]
        rows.append((f"{method} tool (seed 0) held-out ASR", sum(flags) / len(flags)))
    print(f"\n{source} tools transferred to SmolLM2 ({n_domains} domains x 30 held-out)")
    print(table(rows, ("measure", "value")))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=0, help="first seed")
    parser.add_argument("--seeds", type=int, default=6)
    parser.add_argument("--budget", type=int, default=2200, help="victim queries per domain")
    parser.add_argument("--victims", nargs="+", default=list(VICTIMS), choices=VICTIMS)
    parser.add_argument("--llm-domains", type=int, default=3)
    parser.add_argument("--no-llm", action="store_true")
    args = parser.parse_args()
    single_thread()
    retriever_accuracy()
    seeds = list(range(args.seed, args.seed + args.seeds))
    source, tools = attack_table(args.victims, seeds, args.budget)
    overfitting("tool retriever top-2", args.seed, args.budget)
    if not args.no_llm:
        smollm2(source, tools, args.llm_domains)
    print("\npaper (AMA against LLM agents, gpt-4o-mini proposer): ASR 0.81-0.95")


if __name__ == "__main__":
    main()
