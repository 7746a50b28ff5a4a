"""Benchmark: SCM beside a full-detection classifier of the same backbone applied to growing
prefixes, and SCM without the logic loss, on the generated FineHarm-like set (3 seeds); plus
the cost of KV-cached streaming against re-reading every prefix. Prints ratios.

No installable peer runs here offline (llm-guard pins transformers 4.51 and needs downloaded
weights): the baselines are the paper's own, trained in-house on the same inputs.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from paperplug_scm.demo import compare
from paperplug_scm.fineharm import encode_fineharm, response_text

PAPER = {  # Table 2, Qwen2.5-0.5B backbone, FineHarm test set
    "SCM (token head, delay-k)": (95.64, 18.0),
    "full detector on prefixes": (88.77, None),
}


def streaming_cost(trainer, test, n: int = 40) -> tuple[float, float]:
    """Seconds per response: KV-cached monitor vs a full forward on every growing prefix."""
    mon = trainer.monitor(theta=1.0, k=10_000)  # never stops: reads every token
    t0 = time.perf_counter()
    for ex in test[:n]:
        mon.start(ex["prompt"])
        for word in response_text(ex).split(" "):
            mon.push(word + " ")
        mon.finish()
    cached = (time.perf_counter() - t0) / n
    enc = encode_fineharm(test[:n], trainer.tokenizer_)
    t0 = time.perf_counter()
    with torch.no_grad():
        for e in enc:
            for end in range(e.response_start + 1, len(e.input_ids) + 1):
                trainer.model_.hidden(torch.tensor([e.input_ids[:end]]))
    return cached, (time.perf_counter() - t0) / n


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--n-train", type=int, default=800)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    rows: dict[str, list[dict]] = {}
    cost = []
    for seed in args.seeds:
        print(f"seed {seed}: training SCM, SCM without logic loss, full detector ...", flush=True)
        res = compare(
            args.n_train, seed=seed, progress=False, variants=("scm", "scm_no_logic", "full")
        )
        for name in ("scm", "scm_no_logic", "full"):
            m = dict(res[name]["metrics"])
            m["theta_k"] = f"{res[name]['trainer'].theta_}/{res[name]['trainer'].k_}"
            rows.setdefault(name, []).append(m)
        cost.append(streaming_cost(res["scm"]["trainer"], res["test"]))

    def mean(name, key):
        return statistics.mean(100 * r[key] for r in rows[name])

    labels = {
        "scm": "SCM (token head, delay-k)",
        "scm_no_logic": "SCM without logic loss",
        "full": "full detector on prefixes",
    }
    print(f"\nmean over seeds {args.seeds} (test 400 responses each, train {args.n_train})")
    head = f"{'method':30s} {'macro-F1':>8s} {'FAR%':>6s} {'MAR%':>6s} {'read harm%':>10s} "
    print(head + f"{'read caught%':>12s}  θ/k per seed   paper F1 / read")
    for name, label in labels.items():
        paper = PAPER.get(label, (None, None))
        ref = f"{paper[0]} / {paper[1]}%" if paper[0] else "—"
        if name == "full":
            ref = f"{paper[0]} / —"
        print(
            f"{label:30s} {mean(name, 'macro_f1'):8.2f} {mean(name, 'false_alarm_rate'):6.2f} "
            f"{mean(name, 'miss_rate'):6.2f} {mean(name, 'frac_read_harmful'):10.1f} "
            f"{mean(name, 'frac_read_caught'):12.1f}  "
            f"{','.join(r['theta_k'] for r in rows[name]):14s} {ref}"
        )
    whole = statistics.mean(100 * r["whole_response_macro_f1"] for r in rows["full"])
    print(f"{'full detector, whole response':30s} {whole:8.2f} {'':6s} {'':6s} {100.0:10.1f}")
    gap = whole - mean("scm", "macro_f1")
    print(
        f"\nSCM vs full detection on whole responses: {gap:+.2f} F1 points behind "
        f"(goal: within 2), reading {mean('scm', 'frac_read_harmful'):.1f}% of harmful "
        "tokens (goal: <= 40%)"
    )
    ratio = mean("scm", "macro_f1") / mean("full", "macro_f1")
    print(f"SCM / full-on-prefixes macro-F1 ratio: {ratio:.4f}")
    c, f = statistics.mean(c for c, _ in cost), statistics.mean(f for _, f in cost)
    print(
        f"streaming cost per response: KV-cached {1000 * c:.1f} ms, re-reading every prefix "
        f"{1000 * f:.1f} ms ({f / c:.1f}x)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
