"""Embedded default: SCM vs a full-detection classifier on a generated FineHarm-like set,
then the monitor watching SmolLM2 stream a reply. Offline, CPU, about a minute."""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from typing import Any

LR, LR_DECAY = 1e-3, 0.995  # a random-init tiny backbone needs a larger step than 1e-4


def compare(
    n_train: int = 800,
    n_val: int = 200,
    n_test: int = 400,
    *,
    seed: int = 0,
    progress: bool = True,
    variants: tuple[str, ...] = ("scm", "full"),
) -> dict[str, Any]:
    """Train SCM, its no-logic ablation and/or the full-detection baseline on one split."""
    from paperplug_scm.synthetic import make_fineharm_like
    from paperplug_scm.training import SCMTrainer

    data = make_fineharm_like(n_train + n_val + n_test, seed=seed)
    train, val = data[:n_train], data[n_train : n_train + n_val]
    test = data[n_train + n_val :]
    settings = {
        "scm": {},
        "scm_no_logic": {"gamma": 0.0},
        "full": {"alpha": 0.0, "gamma": 0.0, "head": "response"},
    }
    out: dict[str, Any] = {"test": test}
    for name in variants:
        t0 = time.perf_counter()
        trainer = SCMTrainer(
            learning_rate=LR, lr_decay=LR_DECAY, seed=seed, progress=progress, **settings[name]
        ).fit(train, val)
        metrics = trainer.evaluate(test)
        metrics["train_s"] = time.perf_counter() - t0
        if name == "full":
            from paperplug_scm.evaluation import binary_metrics

            whole = [int(p >= 0.5) for p in trainer.full_detection(test)]
            labels = [int(any(ex["sentence_labels"])) for ex in test]
            metrics["whole_response_macro_f1"] = binary_metrics(whole, labels)["macro_f1"]
        out[name] = {"trainer": trainer, "metrics": metrics}
    return out


def _figure(results: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from paperplug_scm.stopping import delay_k_stop

    test = results["test"]
    labels = [int(any(ex["sentence_labels"])) for ex in test]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    for name, label in (
        ("scm", "SCM (token head, delay-k)"),
        ("full", "full detector on prefixes"),
    ):
        tr = results[name]["trainer"]
        scores, _ = tr.score(test)
        read = [
            1.0 if (i := delay_k_stop(s, tr.theta_, tr.k_)) is None else (i + 1) / len(s)
            for s, y in zip(scores, labels, strict=True)
            if y == 1
        ]
        xs = np.sort(read)
        ax1.step(xs, np.arange(1, len(xs) + 1) / len(xs), where="post", label=label)
        if name == "scm":
            harmful = next(i for i, y in enumerate(labels) if y == 1)
            ax2.plot(scores[harmful], marker=".", label="P(harmful) per token")
            ax2.axhline(tr.theta_, color="grey", ls="--", label=f"θ = {tr.theta_}")
            stop = delay_k_stop(scores[harmful], tr.theta_, tr.k_)
            if stop is not None:
                ax2.axvline(stop, color="red", label=f"stop (k = {tr.k_})")
            first = [int(y) for y in test[harmful]["sentence_labels"]].index(1)
            ax2.set_title(f"one harmful response (harmful from sentence {first + 1})")
    ax1.set_xlabel("fraction of response tokens read")
    ax1.set_ylabel("harmful responses stopped (cumulative)")
    ax1.set_title("how early harmful responses are stopped")
    ax1.legend()
    ax2.set_xlabel("response token")
    ax2.legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def watch_smollm2(monitor: Any, prompt: str, max_tokens: int = 60) -> Any:
    """Stream SmolLM2-135M-Instruct (paperplug-llm) under the monitor."""
    from paperplug_llm import get_chat_model

    from paperplug_scm.generate import monitored_generate

    return monitored_generate(get_chat_model("smollm2"), monitor, prompt, max_tokens=max_tokens)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="paperplug demo scm", description=__doc__)
    parser.add_argument("--out", default=os.path.join("out", "scm"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-llm", action="store_true", help="skip the SmolLM2 part")
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    print("training SCM and a full-detection classifier (tiny Qwen2, 800 responses) ...")
    results = compare(seed=args.seed)
    scm, full = results["scm"]["metrics"], results["full"]["metrics"]
    tr = results["scm"]["trainer"]
    rows = [
        ("SCM, streaming (delay-k)", scm["macro_f1"], scm, results["scm"]["trainer"]),
        ("full detector on prefixes", full["macro_f1"], full, results["full"]["trainer"]),
    ]
    print(f"\n{'method':28s} {'macro-F1':>8s} {'FAR':>6s} {'MAR':>6s} {'read(harm)':>10s} θ/k")
    for name, f1, m, t in rows:
        print(
            f"{name:28s} {100 * f1:8.2f} {100 * m['false_alarm_rate']:6.2f} "
            f"{100 * m['miss_rate']:6.2f} {100 * m['frac_read_harmful']:9.1f}% {t.theta_}/{t.k_}"
        )
    print(
        f"{'full detector, whole reply':28s} {100 * full['whole_response_macro_f1']:8.2f}"
        f" {'':6s} {'':6s} {100.0:9.1f}%"
    )
    figure = Path(args.out) / "scm_stream.png"
    _figure(results, figure)
    print(f"\nfigure: {figure}")
    if not args.no_llm:
        prompt = "How do I water a garden with fresh water ?"
        print(f"\nmonitoring SmolLM2-135M-Instruct streaming a reply to {prompt!r} ...")
        t0 = time.perf_counter()
        gen = watch_smollm2(tr.monitor(), prompt)
        d = gen.decision
        print(f"reply ({time.perf_counter() - t0:.1f} s, {len(gen.chunks)} chunks): {gen.text!r}")
        print(
            f"stopped={gen.stopped}  tokens read by SCM={d.tokens_read}  "
            f"max P(harmful)={d.max_score:.3f}  flagged={d.n_flagged}"
        )
        unk = tr.tokenizer_.unk_token_id
        ids = tr.tokenizer_(gen.text, add_special_tokens=False)["input_ids"]
        known = 100 * (1 - ids.count(unk) / max(len(ids), 1))
        print(
            f"(the demo monitor's word vocabulary covers {known:.0f}% of SmolLM2's words: "
            "a monitor for real replies is trained on a real backbone and data)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
