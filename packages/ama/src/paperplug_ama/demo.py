"""Embedded default: AMA beside random search at an equal victim-query budget on the fine-tuned
tool retriever and BM25 (ten domains, 30 held-out queries each), then AMA against the
SmolLM2-135M selector on one domain; offline, one CPU thread. Prints held-out ASR, benign
accuracy and victim queries per second, and saves the ASR-versus-evaluations curve."""

from __future__ import annotations

import sys

from paperplug.harness import Timer, demo_parser, pyplot, save_figure, single_thread, table
from paperplug_ama.embedded import LLM_DOMAIN, benign_top1, scenarios, victims


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = demo_parser("ama", __doc__)
    parser.add_argument("--budget", type=int, default=600, help="victim queries per domain")
    parser.add_argument("--llm-budget", type=int, default=20, help="victim queries for SmolLM2")
    parser.add_argument("--no-llm", action="store_true", help="skip the SmolLM2 victim")
    args = parser.parse_args(argv)
    single_thread()
    from paperplug_ama import AMAttack, held_out_curve, task_pool
    from paperplug_ama.scoring import ScoredCandidate

    found = scenarios()
    rows, curves, example = [], {}, None
    _log("fine-tuning the tool retriever (once; then cached) and loading the victims ...")
    for label, victim in victims(["tool retriever top-2", "BM25 top-1"]).items():
        benign = benign_top1(victim, found)
        for method, use_history in (("AMA", True), ("random search", False)):
            with Timer() as t:
                attack = AMAttack(seed=args.seed, use_history=use_history)
                result = attack.run(victim, found, budget=args.budget * len(found))
            groups = result.meta["groups"]
            train = sum(g["train_sr"] for g in groups) / len(groups)
            rows.append(
                (label, method, result.success_rate, train, benign, result.queries, t.seconds)
            )
            if method == "AMA" and example is None:
                example = groups[0]["tool"]
                entries = [
                    ScoredCandidate(
                        {"name": h["name"], "description": h["description"]},
                        h["sr"],
                        h["parent_sr"],
                        h["value"],
                        h["round"],
                        h["queries"],
                    )
                    for h in groups[0]["history"]
                ]
                held = task_pool(found[0], "held_out")
                curves[f"{label}, {found[0].domain}: held-out"] = held_out_curve(
                    entries, held, victim
                )
                curves[f"{label}, {found[0].domain}: optimisation SR"] = groups[0]["curve"]

    if not args.no_llm:
        _log("loading SmolLM2-135M-Instruct ...")
        with Timer() as t:
            (smol,) = victims(["SmolLM2"]).values()
            one = [s for s in scenarios(held_out=10) if s.domain == LLM_DOMAIN]
            attack = AMAttack(trials=5, per_round=2, rounds=1, race_top=0, seed=args.seed)
            result = attack.run(smol, one, budget=args.llm_budget)
        rows.append(
            (
                "SmolLM2 (loglik)",
                "AMA",
                result.success_rate,
                result.meta["groups"][0]["train_sr"],
                result.meta["groups"][0]["benign_accuracy"],
                result.queries,
                t.seconds,
            )
        )

    header = ("victim", "method", "held-out ASR", "optimisation SR", "benign", "queries", "seconds")
    print(table(rows, header, digits=2))
    print(
        f"\nexample ({found[0].domain}, tool retriever): {example['name']}: {example['description']}"
    )
    print(f"hidden parameters: {sorted(example['parameters']['properties'])}")
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4))
    for label, curve in curves.items():
        xs, ys = zip(*curve, strict=True)
        ax.step(xs, ys, where="post", label=label, linestyle="--" if "SR" in label else "-")
    ax.set(xlabel="victim evaluations", ylabel="attack success rate", ylim=(0, 1))
    ax.set_title("AMA: best-so-far tool, held-out ASR and optimisation SR")
    ax.legend(fontsize=8)
    save_figure(fig, args.out / "asr_vs_evaluations.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
