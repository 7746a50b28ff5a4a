"""Embedded default: AgentDojo banking, slack and travel offline, a scripted agent that obeys
injected instructions, attacked by important_instructions; no defense, AgentDojo's offline
defenses and DRIFT (oracle plan; validator, checklist, isolator real). Prints utility and
attack success per suite and configuration, and saves a figure."""

from __future__ import annotations

import warnings

from paperplug.harness import Timer, demo_parser, progress, save_figure, single_thread, table
from paperplug_drift.embedded import CONFIGS, DEMO_FRACTION, LABELS, load_data, run_table


def main(argv: list[str] | None = None) -> int:
    args = demo_parser("drift", __doc__).parse_args(argv)
    single_thread()
    warnings.filterwarnings(
        "ignore", module="agentdojo"
    )  # its InitQuery warns on repeat_user_prompt
    pairs = load_data(args.seed)
    for name, share in DEMO_FRACTION.items():
        print(
            f"{name}: a seeded sample of {share:.0%} of its pairs ({len(pairs[name])}), --seed {args.seed}"
        )
    with Timer() as timer:
        rows = run_table(pairs, progress=lambda it: progress(it, desc="pairs"))
    header = ["suite", "configuration", "benign utility", "utility under attack", "attack success"]
    cells = [
        [
            r["suite"],
            r["config"],
            f"{r['benign_utility']:.1f}% ({r['benign_ok']}/{r['benign_n']})",
            f"{r['attacked_utility']:.1f}%",
            f"{r['asr']:.1f}% ({r['successes']}/{r['pairs']})",
        ]
        for r in rows
    ]
    print(table(cells, header))
    print(
        "agent: scripted (follows the user task, obeys injected orders); DRIFT: oracle plan, "
        "LLM-free validator, checklist and isolator; 0 LLM calls"
    )
    print(f"time: {timer.seconds:.1f} s")
    _figure(rows, args.out)
    return 0


def _figure(rows: list[dict], out) -> None:
    from paperplug.harness import pyplot

    plt = pyplot()
    suites = list(dict.fromkeys(r["suite"] for r in rows))
    configs = [LABELS[c] for c in CONFIGS]
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), sharey=True)
    width = 0.8 / len(configs)
    for ax, key, title in zip(
        axes,
        ("asr", "attacked_utility"),
        ("attack success (%)", "utility under attack (%)"),
        strict=True,
    ):
        for k, config in enumerate(configs):
            values = [
                next(r[key] for r in rows if r["suite"] == s and r["config"] == config)
                for s in suites
            ]
            ax.bar([i + k * width for i in range(len(suites))], values, width, label=config)
        ax.set_xticks([i + 0.4 - width / 2 for i in range(len(suites))], suites)
        ax.set_title(title)
        ax.set_ylim(0, 105)
    handles, names = axes[0].get_legend_handles_labels()
    fig.legend(
        handles,
        names,
        loc="lower center",
        ncol=len(configs),
        fontsize=8,
        bbox_to_anchor=(0.5, -0.08),
    )
    fig.suptitle("AgentDojo v1.2, important_instructions, scripted obeying agent", y=1.03)
    save_figure(fig, out / "drift_agentdojo.png")


if __name__ == "__main__":
    raise SystemExit(main())
