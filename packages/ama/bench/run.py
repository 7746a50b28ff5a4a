"""Benchmark: AMA beside random search at an equal victim-query budget and static edits
(plain attack tool, assertive cue, maintenance claim), per victim and per domain, all on
held-out queries; plus transfer of MiniLM-optimised tools to BM25 and SmolLM2.

No PyPI library implements AMA (the official code has no licence and no package), so the
peers are the paper's own baselines, run in this process on the same inputs."""

from __future__ import annotations

import argparse
import sys
import time


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--budget", type=int, default=2200, help="victim queries per domain (AMA: 110 x 20)"
    )
    parser.add_argument("--llm-domains", type=int, default=3, help="domains for SmolLM2 transfer")
    parser.add_argument("--seeds", type=int, default=2)
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    from paperplug_ama import (
        AMAttack,
        BM25ToolRetriever,
        EmbeddingToolRetriever,
        attack_success,
        benign_accuracy,
        load_scenarios,
        plain_tool,
        static_edit,
        task_pool,
        utility_under_attack,
    )

    scenarios = load_scenarios()
    held = {s.domain: task_pool(s, "held_out") for s in scenarios}
    minilm = EmbeddingToolRetriever()
    victims = {
        "MiniLM top-1": minilm,
        "MiniLM top-2 slate": EmbeddingToolRetriever(minilm.encoder, top_k=2),
        "BM25 top-1": BM25ToolRetriever(),
    }
    print(
        f"budget {args.budget} victim queries per domain, {args.seeds} seeds, 10 domains x 10 held-out queries"
    )
    print(
        f"{'victim':20} {'method':16} {'held-out ASR':>12} {'train SR':>8} {'utility':>8} {'benign':>7} {'queries':>8} {'time':>6}"
    )
    tools_by = {}
    for vname, victim in victims.items():
        benign = sum(benign_accuracy(held[s.domain], victim) for s in scenarios) / 10
        for method, kw in (("AMA", {}), ("random search", {"use_history": False})):
            asr, train, util, q, t0, per_domain = 0.0, 0.0, 0.0, 0, time.time(), None
            for seed in range(args.seeds):
                res = AMAttack(seed=seed, **kw).run(victim, scenarios, budget=args.budget * 10)
                groups = res.meta["groups"]
                asr += res.success_rate / args.seeds
                train += sum(g["train_sr"] for g in groups) / 10 / args.seeds
                util += sum(g["utility"] for g in groups) / 10 / args.seeds
                q += res.queries // args.seeds
                if seed == 0:
                    per_domain = {g["domains"][0]: g["held_out_asr"] for g in groups}
                    tools_by[(vname, method)] = {g["domains"][0]: g["tool"] for g in groups}
            print(
                f"{vname:20} {method:16} {asr:12.2f} {train:8.2f} {util:8.2f} {benign:7.2f} {q:8d} {time.time() - t0:5.0f}s"
            )
            if method == "AMA":
                print(
                    "    per domain (seed 0): "
                    + ", ".join(f"{d} {v:.1f}" for d, v in per_domain.items())
                )
        for kind in ("plain", "assertive", "maintenance"):
            flags, util = [], 0.0
            for s in scenarios:
                tool = plain_tool(s.domain, s.agent)
                tool = tool if kind == "plain" else static_edit(tool, kind)
                flags += attack_success(tool, held[s.domain], victim)
                util += utility_under_attack(tool, held[s.domain], victim) / 10
            print(
                f"{vname:20} {'static ' + kind:16} {sum(flags) / len(flags):12.2f} {'-':>8} {util:8.2f} {benign:7.2f} {0:8d} {'':>6}"
            )

    print("\ntransfer: tools optimised on MiniLM top-1 (seed 0), held-out ASR on other victims")
    ama_tools = tools_by[("MiniLM top-1", "AMA")]
    rnd_tools = tools_by[("MiniLM top-1", "random search")]
    bm25 = victims["BM25 top-1"]
    for label, tools in (("AMA", ama_tools), ("random search", rnd_tools)):
        flags = [
            f for s in scenarios for f in attack_success(tools[s.domain], held[s.domain], bm25)
        ]
        print(f"  MiniLM -> BM25     {label:14} {sum(flags) / len(flags):.2f}  (10 domains)")
    from paperplug_ama import LLMToolSelector
    from paperplug_llm import get_chat_model

    smol = LLMToolSelector(get_chat_model("smollm2"))
    some = scenarios[: args.llm_domains]
    t0 = time.time()
    acc = sum(benign_accuracy(held[s.domain], smol) for s in some) / len(some)
    for label, tools in (("AMA", ama_tools), ("random search", rnd_tools)):
        flags = [f for s in some for f in attack_success(tools[s.domain], held[s.domain], smol)]
        print(
            f"  MiniLM -> SmolLM2  {label:14} {sum(flags) / len(flags):.2f}  ({len(some)} domains; SmolLM2 benign top-1 {acc:.2f})"
        )
    cue = [
        f
        for s in some
        for f in attack_success(
            static_edit(plain_tool(s.domain, s.agent), "assertive"), held[s.domain], smol
        )
    ]
    print(
        f"  SmolLM2 static assertive cue    {sum(cue) / len(cue):.2f}  ({time.time() - t0:.0f}s for SmolLM2)"
    )
    print("\npaper (AMA, LLM agents, gpt-4o-mini proposer): ASR 0.81-0.95")
    return 0


if __name__ == "__main__":
    sys.exit(main())
