"""Embedded default: AMA beside random search at an equal victim-query budget on the fine-tuned
tool retriever (ten domains, 30 held-out queries each), then the tool AMA found for one domain
tried on the SmolLM2-135M selector; offline, one CPU thread. Prints held-out ASR, optimisation
SR, benign accuracy and victim queries per second, and saves the ASR-versus-evaluations curve."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from paperplug.harness import Timer, demo_parser, pyplot, save_figure, single_thread, table
from paperplug_ama.embedded import LLM_DOMAIN, benign_top1, scenarios, victims


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _mean_curve(curves: Sequence[Sequence[tuple[int, float]]]) -> list[tuple[int, float]]:
    """Step curves averaged on the union of their x values (each held at its last value)."""
    grid = sorted({x for c in curves for x, _ in c})
    out = []
    for x in grid:
        values = [next((y for q, y in reversed(c) if q <= x), 0.0) for c in curves]
        out.append((x, sum(values) / len(values)))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = demo_parser("ama", __doc__)
    parser.add_argument("--budget", type=int, default=600, help="victim queries per domain")
    parser.add_argument("--no-llm", action="store_true", help="skip the SmolLM2 victim")
    args = parser.parse_args(argv)
    single_thread()
    from paperplug_ama import AMAttack, attack_success, held_out_curve, task_pool

    found = scenarios()
    _log("loading the fine-tuned tool retriever (trained once, about a minute; then cached) ...")
    ((label, victim),) = victims(["tool retriever top-2"]).items()
    benign = benign_top1(victim, found)
    rows, curves, tools = [], {}, {}
    for method, use_history in (("AMA", True), ("random search", False)):
        with Timer() as t:
            attack = AMAttack(seed=args.seed, use_history=use_history)
            result = attack.run(victim, found, budget=args.budget * len(found))
        groups = result.meta["groups"]
        train = sum(g["train_sr"] for g in groups) / len(groups)
        rows.append((label, method, result.success_rate, train, benign, result.queries, t.seconds))
        tools[method] = {g["domains"][0]: g["tool"] for g in groups}
        held = [
            held_out_curve(g["history"], task_pool(s, "held_out"), victim)
            for g, s in zip(groups, found, strict=True)
        ]
        curves[f"{method}: held-out ASR"] = _mean_curve(held)
        curves[f"{method}: optimisation SR"] = _mean_curve([g["curve"] for g in groups])

    if not args.no_llm:
        _log("loading SmolLM2-135M-Instruct ...")
        (smol,) = victims(["SmolLM2"]).values()
        (one,) = [s for s in scenarios(held_out=10) if s.domain == LLM_DOMAIN]
        pool = task_pool(one, "held_out")
        with Timer() as t:
            flags = attack_success(tools["AMA"][LLM_DOMAIN], pool, smol)
        qps = len(pool) / t.seconds
        rows.append(
            (
                "SmolLM2 (loglik)",
                f"AMA's {LLM_DOMAIN} tool",
                sum(flags) / len(flags),
                None,
                None,
                len(pool),
                t.seconds,
            )
        )
        print(f"SmolLM2: {qps:.2f} victim queries per second ({LLM_DOMAIN}, 10 held-out queries)")

    header = ("victim", "method", "held-out ASR", "optimisation SR", "benign", "queries", "seconds")
    print(table(rows, header, digits=2))
    example = tools["AMA"][LLM_DOMAIN]
    print(f"\nexample ({LLM_DOMAIN}, AMA): {example['name']}: {example['description']}")
    print(f"hidden parameters: {sorted(example['parameters']['properties'])}")
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4))
    for name, curve in curves.items():
        xs, ys = zip(*curve, strict=True)
        style = "--" if "optimisation" in name else "-"
        color = "C0" if name.startswith("AMA") else "C1"
        ax.step(xs, ys, where="post", label=name, linestyle=style, color=color)
    ax.set(xlabel="victim queries per domain", ylabel="best-so-far tool", ylim=(0, 1))
    ax.set_title(f"AMA vs random search on the {label} (mean of 10 domains)")
    ax.legend(fontsize=8)
    save_figure(fig, args.out / "asr_vs_evaluations.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
