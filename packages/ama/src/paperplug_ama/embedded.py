"""The embedded default, shared by demo.py and bench/run.py: the ten attack scenarios, the twelve
domains the tool retriever is fine-tuned on, the victims, and one AMA-vs-random-search run per
seed measured on held-out queries. Offline, CPU."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from paperplug_ama.attack import AMAttack
from paperplug_ama.baselines import plain_tool, static_edit
from paperplug_ama.estimation import task_pool
from paperplug_ama.evaluation import attack_success, benign_accuracy
from paperplug_ama.scenarios import Scenario, load_retriever_domains, load_scenarios
from paperplug_ama.victims import BM25ToolRetriever, EmbeddingToolRetriever, LLMToolSelector

LLM_DOMAIN = "travel"  # the one domain SmolLM2 is attacked on (a victim query costs ~1 s)


def scenarios(held_out: int | None = None) -> list[Scenario]:
    """The ten attack scenarios, optionally cut to the first `held_out` held-out queries."""
    found = load_scenarios()
    if held_out is not None:
        for s in found:
            s.held_out = s.held_out[:held_out]
    return found


def tool_retriever(*, top_k: int = 1, seed: int = 0) -> EmbeddingToolRetriever:
    """The fine-tuned tool retriever (MiniLM, ToolBench's recipe, on the twelve domains the
    attack never sees); trained once (about a minute on one thread), then loaded from the cache."""
    from paperplug_ama.fine_tuning import fine_tune_retriever

    return EmbeddingToolRetriever(
        fine_tune_retriever(load_retriever_domains(), seed=seed), top_k=top_k
    )


def victims(names: Sequence[str]) -> dict[str, Any]:
    """Victims by label: "MiniLM top-1", "MiniLM top-2", "BM25 top-1", "tool retriever top-1",
    "tool retriever top-2", "SmolLM2" (encoders are shared between the labels that use them)."""
    out: dict[str, Any] = {}
    encoders: dict[str, Any] = {}
    for label in names:
        kind, _, k = label.rpartition(" top-")
        if label == "SmolLM2":
            from paperplug_llm import load_smollm2

            out[label] = LLMToolSelector(load_smollm2())
        elif kind == "BM25":
            out[label] = BM25ToolRetriever(top_k=int(k))
        elif kind in ("MiniLM", "tool retriever"):
            if kind not in encoders:
                encoders[kind] = (
                    EmbeddingToolRetriever() if kind == "MiniLM" else tool_retriever()
                ).encoder
            out[label] = EmbeddingToolRetriever(encoders[kind], top_k=int(k))
        else:
            raise ValueError(f"unknown victim {label!r}")
    return out


def compare(
    victim: Any,
    scenarios: Sequence[Scenario],
    *,
    seeds: Sequence[int],
    budget: int,
    **kw: Any,
) -> dict[str, list[dict[str, Any]]]:
    """AMA and random search (its ablation without history) at an equal victim-query budget per
    domain, one run per seed: per run, held-out ASR, optimisation SR, utility, victim queries
    and the tool found per domain."""
    runs: dict[str, list[dict[str, Any]]] = {"AMA": [], "random search": []}
    for seed in seeds:
        for method, use_history in (("AMA", True), ("random search", False)):
            attack = AMAttack(seed=seed, use_history=use_history, **kw)
            result = attack.run(victim, scenarios, budget=budget * len(scenarios))
            groups = result.meta["groups"]
            runs[method].append(
                {
                    "held_out_asr": result.success_rate,
                    "train_sr": sum(g["train_sr"] for g in groups) / len(groups),
                    "utility": sum(g["utility"] for g in groups) / len(groups),
                    "queries": result.queries,
                    "tools": {g["domains"][0]: g["tool"] for g in groups},
                }
            )
    return runs


def static_baselines(victim: Any, scenarios: Sequence[Scenario]) -> dict[str, float]:
    """Held-out ASR of the unoptimised attack tool and its static edits (no victim query spent)."""
    out = {}
    for kind in ("plain", "assertive", "maintenance"):
        flags = []
        for s in scenarios:
            tool = plain_tool(s.domain, s.agent)
            tool = tool if kind == "plain" else static_edit(tool, kind)
            flags += attack_success(tool, task_pool(s, "held_out"), victim)
        out[kind] = sum(flags) / len(flags)
    return out


def benign_top1(victim: Any, scenarios: Sequence[Scenario]) -> float:
    """The victim's top-1 accuracy on the held-out queries without any attack tool."""
    return benign_accuracy(task_pool(list(scenarios), "held_out"), victim)
