"""Embedded default: SCM beside a full-detection classifier on a generated FineHarm-like set,
then the monitor, composed into a guard, watching SmolLM2 stream a reply. Offline, CPU,
about a minute."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from paperplug.harness import Timer, demo_parser, pyplot, save_figure, single_thread, table
from paperplug_scm.embedded import load_data, train_variant


def plot_stopping(trainers: dict[str, Any], test: list[dict], path: Path) -> Path:
    """How early harmful test responses are stopped (SCM against the full detector on
    prefixes), and one harmful response's token scores with θ and the stopping point."""
    from paperplug_scm.stopping import delay_k_stop

    plt = pyplot()
    labels = [int(any(ex["sentence_labels"])) for ex in test]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    for name, label in (
        ("scm", "SCM (token head, delay-k)"),
        ("full", "full detector on prefixes"),
    ):
        tr = trainers[name]
        scores, _ = tr.score(test)
        read = sorted(
            1.0 if (i := delay_k_stop(s, tr.theta_, tr.k_, tr.window)) is None else (i + 1) / len(s)
            for s, y in zip(scores, labels, strict=True)
            if y == 1
        )
        left.step(read, [(i + 1) / len(read) for i in range(len(read))], where="post", label=label)
        if name == "scm":
            harmful = labels.index(1)
            right.plot(scores[harmful], marker=".", label="P(harmful) per token")
            right.axhline(tr.theta_, color="grey", ls="--", label=f"θ = {tr.theta_}")
            stop = delay_k_stop(scores[harmful], tr.theta_, tr.k_, tr.window)
            if stop is not None:
                right.axvline(stop, color="red", label=f"stop (k = {tr.k_})")
            first = [int(y) for y in test[harmful]["sentence_labels"]].index(1)
            right.set_title(f"one harmful response (harmful from sentence {first + 1})")
    left.set(
        xlabel="fraction of response tokens read",
        ylabel="harmful responses stopped (cumulative)",
        title="how early harmful responses are stopped",
    )
    left.legend()
    right.set_xlabel("response token")
    right.legend()
    return save_figure(fig, path)


def watch_smollm2(monitor: Any, prompt: str, max_tokens: int = 60) -> tuple[str, Any]:
    """SmolLM2-135M-Instruct (paperplug-llm) streaming a reply through `compose(monitor)`'s
    wrapped chat model: the guard passes the prompt to the monitor."""
    from paperplug_llm import get_chat_model

    from paperplug import compose

    chat = compose(monitor).wrap(get_chat_model("smollm2"))
    reply = chat.chat([{"role": "user", "content": prompt}], max_tokens=max_tokens)
    return reply, chat.last_verdict


def main(argv: list[str] | None = None) -> int:
    parser = demo_parser("scm", __doc__)
    parser.add_argument("--no-llm", action="store_true", help="skip the SmolLM2 part")
    args = parser.parse_args(argv)
    single_thread()
    train, val, test = load_data(args.seed)
    print(f"training SCM and a full-detection classifier (tiny Qwen2, {len(train)} responses)")
    trainers, rows = {}, []
    for name, label in (("scm", "SCM, streaming (delay-k)"), ("full", "full detector, prefixes")):
        with Timer() as t:
            trainers[name] = tr = train_variant(name, train, val, seed=args.seed)
        m = tr.evaluate(test)
        rows.append(
            [
                label,
                100 * m["macro_f1"],
                100 * m["false_alarm_rate"],
                100 * m["miss_rate"],
                100 * m["frac_read_harmful"],
                f"{tr.theta_}/{tr.k_}",
                t.seconds,
            ]
        )
    from paperplug_scm.evaluation import binary_metrics

    whole = [int(p >= 0.5) for p in trainers["full"].full_detection(test)]
    truth = [int(any(ex["sentence_labels"])) for ex in test]
    f1 = binary_metrics(whole, truth)["macro_f1"]
    rows.append(["full detector, whole reply", 100 * f1, None, None, 100.0, "-", None])
    header = ["method", "macro-F1", "FAR %", "MAR %", "read (harmful) %", "θ/k", "train s"]
    print(table(rows, header, digits=2))
    plot_stopping(trainers, test, Path(args.out) / "scm_stream.png")
    if not args.no_llm:
        prompt = "How do I water a garden with fresh water ?"
        print(f"\nSmolLM2-135M-Instruct streams a reply to {prompt!r} through the guard ...")
        with Timer() as t:
            reply, verdict = watch_smollm2(trainers["scm"].monitor(), prompt)
        d = verdict.verdicts[-1][1].details
        print(f"reply ({t.seconds:.1f} s): {reply!r}")
        print(
            f"valid={verdict.valid}  tokens read by SCM={d['tokens_read']}  "
            f"max P(harmful)={d['max_score']:.3f}  flagged={d['n_flagged']}"
        )
        tok = trainers["scm"].tokenizer_
        ids = tok(reply, add_special_tokens=False)["input_ids"]
        known = 100 * (1 - ids.count(tok.unk_token_id) / max(len(ids), 1))
        print(
            f"(the demo monitor's word vocabulary covers {known:.0f}% of SmolLM2's words: "
            "a monitor for real replies is trained on a real backbone and data)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
