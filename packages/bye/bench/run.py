"""BYE beside Spectral Signatures, Activation Clustering and Random Drop on the same poisoned tiny LLaVA.

For each (trigger, poison rate): one poisoned fine-tune, every filter on it, then a re-train
from the clean base on each filter's kept rows. No MLLM filtering library exists on PyPI;
the two classic baselines are written here on scikit-learn (last-prompt-token features).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from paperplug_bye import (
    BYE,
    EmbeddedConfig,
    backdoored_run,
    encode_prompts,
    filter_quality,
    random_drop,
)
from paperplug_bye.attention import last_token_positions
from sklearn.cluster import KMeans
from sklearn.decomposition import FastICA


@torch.no_grad()
def last_token_features(model, processor, rows, batch_size=64) -> np.ndarray:
    """The final decoder hidden state at the last prompt token, per row."""
    out = []
    for s in range(0, len(rows), batch_size):
        batch = encode_prompts(processor, rows[s : s + batch_size])
        h = model(**batch, output_hidden_states=True, use_cache=False).hidden_states[-1]
        last = last_token_positions(batch["attention_mask"])
        out.append(h[torch.arange(h.shape[0]), last].numpy())
    return np.concatenate(out)


def spectral_signatures(feats, labels, rate) -> list[int]:
    """Tran et al. 2018: per label, drop the 1.5 * rate * n rows with the largest top-SVD projection."""
    removed = []
    for label in np.unique(labels):
        idx = np.flatnonzero(labels == label)
        centered = feats[idx] - feats[idx].mean(0)
        top = np.linalg.svd(centered, full_matrices=False)[2][0]
        k = min(int(np.ceil(1.5 * rate * len(idx))), len(idx))
        removed += idx[np.argsort(-((centered @ top) ** 2))[:k]].tolist()
    return sorted(removed)


def activation_clustering(feats, labels, seed=0, size_threshold=0.35) -> list[int]:
    """Chen et al. 2018: per label, ICA to 10 dims, 2-means; drop the smaller cluster if < 35%."""
    removed = []
    for label in np.unique(labels):
        idx = np.flatnonzero(labels == label)
        if len(idx) < 12:
            continue
        z = FastICA(n_components=10, random_state=seed, max_iter=500).fit_transform(feats[idx])
        assign = KMeans(2, n_init=10, random_state=seed).fit_predict(z)
        small = int(np.argmin(np.bincount(assign, minlength=2)))
        if (assign == small).mean() < size_threshold:
            removed += idx[assign == small].tolist()
    return sorted(removed)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--triggers", default="patch,blend,text")
    parser.add_argument("--rates", default="0.05,0.1,0.2")
    parser.add_argument("--grid", choices=["full", "short"], default="short",
                        help="short: patch at every rate, blend and text at 10%%")  # fmt: skip
    parser.add_argument("--n-train", type=int, default=400)
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(1)
    rates = [float(r) for r in args.rates.split(",")]
    settings = [(t, r) for t in args.triggers.split(",") for r in rates]
    if args.grid == "short":
        settings = [(t, r) for t, r in settings if t == "patch" or r == 0.1]
    start = time.time()
    table = []
    for trigger, rate in settings:
        c = EmbeddedConfig(
            n_train=args.n_train,
            epochs=args.epochs,
            trigger=trigger,
            poison_rate=rate,
            seed=args.seed,
        )
        run = backdoored_run(c)
        processor = run.victim.processor
        t0 = time.time()
        verdict = BYE(run.model, processor).check(run.dataset)
        t_bye = time.time() - t0
        ashman = BYE(test="ashman", standardize=False)  # opt-in options, same entropy matrix
        E = verdict.details["entropy"]
        t0 = time.time()
        feats = last_token_features(run.model, processor, run.dataset)
        labels = np.array([r["answer"] for r in run.dataset])
        filters = {
            "BYE (paper)": verdict.details["paper"]["removed"],
            "BYE (robust)": verdict.details["robust"]["removed"],
            "BYE (paper, Ashman D)": ashman.detect(E, "paper").removed,
            "BYE (robust, Ashman D, raw mean)": ashman.detect(E, "robust").removed,
            "Spectral Signatures": spectral_signatures(feats, labels, rate),
            "Activation Clustering": activation_clustering(feats, labels, args.seed),
        }
        t_base = time.time() - t0
        filters["Random Drop"] = random_drop(
            len(run.dataset), len(filters["BYE (paper)"]), seed=args.seed + 1
        )
        table.append(
            (
                trigger,
                rate,
                "no defense",
                0,
                float("nan"),
                float("nan"),
                run.asr,
                run.clean_accuracy,
            )
        )
        done: dict[tuple, tuple] = {}
        for name, removed in filters.items():
            key = tuple(removed)
            if key not in done:
                drop = set(removed)
                model = run.victim.fine_tune(
                    [r for i, r in enumerate(run.dataset) if i not in drop]
                )
                done[key] = (
                    float(np.mean(run.attack.attack_success(run.victim, model))),
                    run.victim.clean_accuracy(model),
                )
            p, r = filter_quality(removed, run.poisoned)
            table.append((trigger, rate, name, len(removed), p, r, *done[key]))
        print(f"{trigger} {rate:.0%}: done at {time.time() - start:.0f} s (BYE filter {t_bye:.1f} s, "
              f"SS+AC features {t_base:.1f} s); BYE sensitive layers {verdict.details['sensitive_layers']}", flush=True)  # fmt: skip
    print(
        "\n| trigger | rate | filter | removed | precision | recall | ASR after re-train | clean acc |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for trigger, rate, name, n, p, r, asr, clean in table:
        print(
            f"| {trigger} | {rate:.0%} | {name} | {n} | {p:.2f} | {r:.2f} | {asr:.2f} | {clean:.2f} |"
        )
    print("\nratios vs no defense (ASR drop in points, clean accuracy change in points):")
    for trigger, rate in settings:
        rows = {
            name: (asr, clean)
            for t, r_, name, *_, asr, clean in table
            if (t, r_) == (trigger, rate)
        }
        base_asr, base_clean = rows["no defense"]
        parts = [
            f"{n}: {100 * (base_asr - a):+.0f}/{100 * (c - base_clean):+.0f}"
            for n, (a, c) in rows.items()
            if n != "no defense"
        ]
        print(f"  {trigger} {rate:.0%}: " + "; ".join(parts))
    print(f"\ntotal {time.time() - start:.0f} s")


if __name__ == "__main__":
    main()
