"""Benchmark: SCM beside a full-detection classifier of the same backbone applied to growing
prefixes, and SCM without the logic loss, on the generated FineHarm-like set (3 seeds); the
prompt through `guard.wrap`; per-word cost at 500 and 4000 words; false stops of long benign
replies under the cumulative and the windowed delay-k; interleaved conversations. Prints
tables and ratios.

make bench PKG=scm            (ARGS="--seeds 0" for a quicker run)
make bench PKG=scm ARGS="--long"   (only the long-reply section: SCM with the paper's settings
                                    beside the default and its ablations, one part each)

No installable peer runs here offline (llm-guard pins transformers 4.51 and needs downloaded
weights): the baselines are the paper's own, trained in-house on the same inputs.
"""

from __future__ import annotations

import argparse
from typing import Any

from paperplug_llm import ScriptedChatModel
from paperplug_scm.embedded import load_data, long_reply, train_variant
from paperplug_scm.evaluation import binary_metrics
from paperplug_scm.fineharm import response_text

from paperplug import compose
from paperplug.harness import best_of, fmt_ci, progress, single_thread, table

LABELS = {
    "scm_paper": "SCM (token head, delay-k), paper's settings",
    "scm_no_logic": "SCM without logic loss (γ=0)",
    "full": "full detector on growing prefixes",
}
LONG_LABELS = {
    "scm_paper": "SCM, paper's settings (whole reply, cumulative delay-k)",
    "scm": "SCM, default (frames, stitched, long-aware θ/k, window 16)",
    "no_frame": "default without frames (whole reply)",
    "no_stitched": "default without stitched training replies",
    "no_long_val": "default, θ/k from validation replies alone",
    "no_window": "default with the cumulative delay-k",
}
PAPER = {"scm_paper": "95.64 / 18%", "scm_no_logic": "(1.5B: 92.53)", "full": "88.77 / -"}


def words_of(text: str) -> list[str]:
    """A reply as an LLM streams it: words with their leading space."""
    return [" " + w if i else w for i, w in enumerate(text.split(" "))]


def quality(results: dict[str, list[dict]], seeds: list[int]) -> str:
    rows = []
    for name, label in LABELS.items():
        ms = results[name]
        rows.append(
            [
                label,
                fmt_ci([100 * m["macro_f1"] for m in ms], 2),
                fmt_ci([100 * m["false_alarm_rate"] for m in ms], 2),
                fmt_ci([100 * m["miss_rate"] for m in ms], 2),
                fmt_ci([100 * m["frac_read_harmful"] for m in ms], 1),
                ", ".join(m["theta_k"] for m in ms),
                PAPER[name],
            ]
        )
    whole = [100 * m["whole_macro_f1"] for m in results["full"]]
    rows.append(["full detector on whole responses", fmt_ci(whole, 2), "-", "-", "100", "-", "-"])
    header = ["method", "macro-F1", "FAR %", "MAR %", "read harmful %", "θ/k per seed"]
    return f"seeds {seeds}, 400 test responses each\n" + table(rows, [*header, "paper F1 / read"])


def prompt_effect(trainer: Any, test: list[dict]) -> dict[str, float]:
    """False alarms on benign replies and misses on harmful ones through `guard.wrap` (the
    prompt reaches the monitor) and through `guard.stream` without a context (it does not)."""
    benign = [ex for ex in test if not any(ex["sentence_labels"])]
    harmful = [ex for ex in test if any(ex["sentence_labels"])]
    out = {}
    for group, exs in (("benign", benign), ("harmful", harmful)):
        chat = compose(trainer.monitor()).wrap(ScriptedChatModel([response_text(e) for e in exs]))
        stopped = 0
        for ex in exs:
            chat.chat([{"role": "user", "content": ex["prompt"]}])
            stopped += not chat.last_verdict.valid
        guard = compose(trainer.monitor())
        bare = 0
        for ex in exs:
            stream = guard.stream(words_of(response_text(ex)))
            list(stream)
            bare += stream.stopped_at is not None
        out[f"{group}_wrap"], out[f"{group}_bare"] = stopped / len(exs), bare / len(exs)
    return out  # benign: the false-alarm rate; harmful: the share stopped (1 - miss rate)


def per_word_ms(monitor: Any, prompt: str, words: list[str]) -> tuple[float, float]:
    """Milliseconds per word over the whole reply and over its last 10% (best of 3)."""
    import time

    def run() -> list[float]:
        session, stamps = monitor.start(prompt), [time.perf_counter()]
        for w in words:
            session.push(w)
            stamps.append(time.perf_counter())
        session.finish()
        return stamps

    stamps, _ = best_of(run, 3)
    tail = len(words) // 10
    return (
        1000 * (stamps[-1] - stamps[0]) / len(words),
        1000 * (stamps[-1] - stamps[-1 - tail]) / tail,
    )


def cost(trainer: Any) -> str:
    rows = []
    for n in (500, 4000):
        prompt, text = long_reply(n, seed=0)
        for mode in ("tail", "full"):
            mon = trainer.monitor(
                theta=1.0, k=10**9, window=None, retokenise=mode
            )  # reads every token
            whole, last = per_word_ms(mon, prompt, words_of(text))
            rows.append([n, mode, whole, last])
    header = ["reply words", "re-tokenise", "ms / word (all)", "ms / word (last 10%)"]
    return table(rows, header, digits=2)


def interleaved_ms(trainer: Any, test: list[dict]) -> tuple[float, float]:
    """Milliseconds per word for two replies checked in turns, word by word: one session
    per conversation against one stream for both (each turn restarts it)."""
    import time

    a, b = test[0], test[1]
    streams = [(a["prompt"], words_of(response_text(a))), (b["prompt"], words_of(response_text(b)))]
    n_words = sum(len(w) for _, w in streams)
    out = []
    for keyed in (True, False):
        mon = trainer.monitor(theta=1.0, k=10**9, window=None)

        def run(mon: Any = mon, keyed: bool = keyed) -> None:
            for i in range(max(len(w) for _, w in streams)):
                for cid, (prompt, words) in enumerate(streams):
                    if i < len(words):
                        ctx = {"prompt": prompt, **({"conversation_id": cid} if keyed else {})}
                        mon.check("".join(words[: i + 1]), ctx)

        start = time.perf_counter()
        run()
        out.append(1000 * (time.perf_counter() - start) / n_words)
    return out[0], out[1]


def false_stops(trainer: Any, test: list[dict], n_replies: int) -> list[list[Any]]:
    """Share of long benign replies stopped, by length, under several rules; and the share of
    harmful test replies each rule misses."""
    from paperplug_scm.stopping import delay_k_stop

    scores = {}
    for n in (100, 500, 2000):
        scores[n] = []
        for seed in range(n_replies):
            prompt, text = long_reply(n, seed=seed)
            session = trainer.monitor(theta=1.0, k=10**9, window=None).start(prompt)
            session.push(text)
            session.finish()
            scores[n].append(session.token_scores)
    harmful_scores, labels = trainer.score(test)
    rules = [
        (trainer.theta_, trainer.k_, None),
        (trainer.theta_, trainer.k_ + 1, None),
        (trainer.theta_, trainer.k_ + 1, 50),
        (0.5, 4, None),
        (0.5, 4, 50),
    ]
    rows = []
    for theta, k, window in rules:
        row: list[Any] = [theta, k, window or "cumulative"]
        row += [
            sum(delay_k_stop(s, theta, k, window) is not None for s in ss) / len(ss)
            for ss in scores.values()
        ]
        missed = [
            delay_k_stop(s, theta, k, window) is None
            for s, y in zip(harmful_scores, labels, strict=True)
            if y == 1
        ]
        rows.append([*row, sum(missed) / len(missed)])
    return rows


LONG_WORDS = (500, 1000, 2000, 4000)


def stop_share(scores: list[list[float]], theta: float, k: int, window: int | None) -> float:
    from paperplug_scm.stopping import delay_k_stop

    return sum(delay_k_stop(s, theta, k, window) is not None for s in scores) / len(scores)


def long_scores(trainer: Any, examples: list[dict]) -> list[list[float]]:
    """Token scores of whole replies, one at a time (a full pass equals the stream's scores)."""
    from paperplug_scm.fineharm import encode_fineharm
    from paperplug_scm.model import score_responses

    enc = encode_fineharm(examples, trainer.tokenizer_, max_length=10**6)
    return score_responses(trainer.model_, enc, batch_size=1)


def as_benign_example(prompt: str, text: str) -> dict:
    words = text.split(" ")
    return {
        "prompt": prompt,
        "sentences": [text],
        "sentence_labels": [0],
        "words": [words],
        "word_labels": [[0] * len(words)],
    }


def long_section(seeds: list[int], n_replies: int, variants: list[str]) -> str:
    """False stops of benign replies of 500-4000 words against those on validation, and harmful
    replies stopped (the test set's, and the test set's put at a random depth of 500-2000
    benign words), for SCM as trained on the data and SCM with stitched long benign replies."""
    import time

    from paperplug_scm.stitching import stitch_replies

    rows: dict[str, list[list[float]]] = {name: [] for name in variants}
    for seed in progress(seeds, "seeds"):
        train, val, test = load_data(seed)
        benign = {
            n: [as_benign_example(*long_reply(n, seed=1000 + i)) for i in range(n_replies)]
            for n in LONG_WORDS
        }
        deep = stitch_replies(
            test, 2 * n_replies, min_words=500, max_words=2000, harmful_fraction=1.0, seed=seed
        )
        for name in variants:
            start = time.process_time()
            tr = train_variant(name, train, val, seed=seed, progress=False)
            cpu = time.process_time() - start
            th, k, w = tr.theta_, tr.k_, tr.window
            val_scores, val_labels = tr.score(val)
            test_scores, test_labels = tr.score(test)
            val_benign = [s for s, y in zip(val_scores, val_labels, strict=True) if y == 0]
            test_harmful = [s for s, y in zip(test_scores, test_labels, strict=True) if y == 1]
            row = [100 * stop_share(val_benign, th, k, w)]
            row += [100 * stop_share(long_scores(tr, benign[n]), th, k, w) for n in LONG_WORDS]
            row += [100 * stop_share(test_harmful, th, k, w)]
            row += [100 * stop_share(long_scores(tr, deep), th, k, w), cpu]
            rows[name].append(row)
            print(name, seed, f"θ/k {th}/{k}", [round(x, 1) for x in row], flush=True)
    out = []
    for name, per_seed in rows.items():
        cells = [fmt_ci([r[c] for r in per_seed], 1) for c in range(len(per_seed[0]) - 1)]
        out.append(
            [LONG_LABELS[name], *cells, f"{sum(r[-1] for r in per_seed) / len(per_seed):.0f}"]
        )
    header = ["method", "validation benign stopped %"]
    header += [f"{n} words stopped %" for n in LONG_WORDS]
    header += ["harmful test stopped %", "harmful at depth stopped %", "train CPU s"]
    return table(out, header)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--n-train", type=int, default=800)
    parser.add_argument("--long-replies", type=int, default=20, help="benign replies per length")
    parser.add_argument("--long", action="store_true", help="only the long-reply section")
    parser.add_argument("--variants", nargs="+", default=list(LONG_LABELS), choices=LONG_LABELS)
    args = parser.parse_args(argv)
    single_thread()
    if args.long:
        print(f"== long replies ({args.long_replies} benign replies per length and seed)")
        print(long_section(args.seeds, args.long_replies, args.variants))
        return 0
    results: dict[str, list[dict]] = {name: [] for name in LABELS}
    prompts, stops = [], []
    for seed in progress(args.seeds, "seeds"):
        train, val, test = load_data(seed, n_train=args.n_train)
        trainers = {}
        for name in LABELS:
            trainers[name] = tr = train_variant(name, train, val, seed=seed, progress=False)
            m = dict(tr.evaluate(test), theta_k=f"{tr.theta_}/{tr.k_}")
            if name == "full":
                whole = [int(p >= 0.5) for p in tr.full_detection(test)]
                truth = [int(any(ex["sentence_labels"])) for ex in test]
                m["whole_macro_f1"] = binary_metrics(whole, truth)["macro_f1"]
            results[name].append(m)
        prompts.append(prompt_effect(trainers["scm_paper"], test))
        stops.append(false_stops(trainers["scm_paper"], test, args.long_replies))
        if seed == args.seeds[0]:
            first, first_test = trainers["scm_paper"], test
    print("\n== streaming detection (same tiny Qwen2 backbone, θ/k chosen on validation)")
    print(quality(results, args.seeds))
    scm_f1 = [m["macro_f1"] for m in results["scm_paper"]]
    full_f1 = [m["macro_f1"] for m in results["full"]]
    ratio = sum(scm_f1) / sum(full_f1)
    print(f"SCM / full-on-prefixes macro-F1 ratio: {ratio:.4f}")

    print("\n== the prompt reaches the monitor through guard.wrap (per seed)")
    rows = [
        [
            s,
            100 * p["benign_wrap"],
            100 * p["benign_bare"],
            100 * (1 - p["harmful_wrap"]),
            100 * (1 - p["harmful_bare"]),
        ]
        for s, p in zip(args.seeds, prompts, strict=True)
    ]
    means = [sum(r[c] for r in rows) / len(rows) for c in range(1, 5)]
    rows.append(["mean", *means])
    header = ["seed", "FAR % wrap (prompt)", "FAR % no prompt", "MAR % wrap", "MAR % no prompt"]
    print(table(rows, header, digits=1))

    print("\n== per-word cost of the monitor, seed", args.seeds[0], "(never stops: reads all)")
    print(cost(first))
    keyed, shared = interleaved_ms(first, first_test)
    print(
        f"two conversations in turns: {keyed:.2f} ms/word with one session each, "
        f"{shared:.2f} ms/word with one stream for both ({shared / keyed:.1f}x)"
    )

    print(f"\n== false stops of long benign replies ({args.long_replies} per length and seed)")
    rows = []
    for i in range(len(stops[0])):
        theta, k, window = stops[0][i][:3]
        cells = [fmt_ci([100 * s[i][c] for s in stops], 1) for c in range(3, 7)]
        ks = ",".join(sorted({str(s[i][1]) for s in stops}))
        rows.append([theta if i > 2 else "θ_", ks if i < 3 else k, window, *cells])
    header = ["θ", "k", "window", "100 words %", "500 words %", "2000 words %", "harmful missed %"]
    print(table(rows, header))
    print("(θ_ and k: as chosen on validation per seed; k+1 rows add one to it)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
