"""BYE beside Spectral Signatures, Activation Clustering and Random Drop on the same poisoned
tiny LLaVA, over several seeds; and BYE's detection rates (poisoned and clean) over many seeds.

make bench PKG=bye                    # both parts
make bench PKG=bye ARGS="--part rates --rate-seeds 24"

No MLLM sample-filtering library exists on PyPI: the two classic baselines are written here
on scikit-learn over the last prompt token's final hidden state.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
import torch
from paperplug_bye import BYE, encode_prompts, last_token_positions, model_device
from paperplug_bye.embedded import (
    EmbeddedConfig,
    backdoored_run,
    filter_quality,
    random_drop,
    retrained,
)
from sklearn.cluster import KMeans
from sklearn.decomposition import FastICA
from sklearn.exceptions import ConvergenceWarning

from paperplug.harness import Timer, fmt_ci, progress, single_thread, table

RULES = ("collapse", "paper", "robust")


@torch.no_grad()
def last_token_features(model, processor, rows, batch_size=64) -> np.ndarray:
    """The final decoder hidden state at the last prompt token, per row."""
    out = []
    for s in range(0, len(rows), batch_size):
        batch = encode_prompts(processor, rows[s : s + batch_size], device=model_device(model))
        h = model(**batch, output_hidden_states=True, use_cache=False).hidden_states[-1]
        last = last_token_positions(batch["attention_mask"])
        out.append(h[torch.arange(h.shape[0]), last].cpu().numpy())
    return np.concatenate(out)


def spectral_signatures(feats, labels, rate) -> list[int]:
    """Tran et al. 2018: per label, drop the 1.5 * rate * n rows with the largest top-SVD projection."""
    removed = []
    for label in np.unique(labels):
        idx = np.flatnonzero(labels == label)
        centered = feats[idx] - feats[idx].mean(0)
        top = np.linalg.svd(centered, full_matrices=False)[2][0]
        k = min(int(np.ceil(1.5 * max(rate, 0.05) * len(idx))), len(idx))  # rate unknown at 0%
        removed += idx[np.argsort(-((centered @ top) ** 2))[:k]].tolist()
    return sorted(removed)


def activation_clustering(feats, labels, seed=0, size_threshold=0.35) -> list[int]:
    """Chen et al. 2018: per label, ICA to 10 dims, 2-means; drop the smaller cluster if < 35%."""
    removed = []
    for label in np.unique(labels):
        idx = np.flatnonzero(labels == label)
        if len(idx) < 12:
            continue
        with warnings.catch_warnings():  # ICA on 32 features rarely meets its tolerance
            warnings.simplefilter("ignore", ConvergenceWarning)
            ica = FastICA(n_components=10, random_state=seed, max_iter=500)
            z = ica.fit_transform(feats[idx])
        assign = KMeans(2, n_init=10, random_state=seed).fit_predict(z)
        small = int(np.argmin(np.bincount(assign, minlength=2)))
        if (assign == small).mean() < size_threshold:
            removed += idx[assign == small].tolist()
    return sorted(removed)


def rates(seeds: list[int]) -> None:
    """BYE's rules on 10% patch poison and on clean rows, one fine-tune per seed and setting."""
    found = {r: [] for r in RULES}  # (recall, precision) per seed
    clean_removed = {r: [] for r in RULES}
    learned = []
    for seed in progress(seeds, "seeds"):
        run = backdoored_run(EmbeddedConfig(seed=seed))
        learned.append(run.asr >= 0.9)
        d = BYE(run.model, run.victim.processor).check(run.dataset).details
        for rule in RULES:
            p, r = filter_quality(d[rule]["removed"], run.poisoned)
            found[rule].append((r, 0.0 if np.isnan(p) else p))
        clean = backdoored_run(EmbeddedConfig(seed=seed, poison_rate=0.0))
        d = BYE(clean.model, clean.victim.processor).check(clean.dataset).details
        for rule in RULES:
            clean_removed[rule].append(len(d[rule]["removed"]))
    n, n_clean = len(seeds), EmbeddedConfig().n_train
    print(
        f"\nseeds {seeds[0]}..{seeds[-1]}: backdoor learned (ASR >= 0.9) on {sum(learned)} of {n}"
    )
    rows = []
    for rule in RULES:
        rp = found[rule]
        rows.append([
            rule,
            f"{sum(r >= 0.9 for r, _ in rp)}/{n}",
            f"{sum(r >= 0.9 and p >= 0.6 for r, p in rp)}/{n}",
            f"{sum(r >= 0.9 and p >= 0.8 for r, p in rp)}/{n}",
            f"{sum(c == 0 for c in clean_removed[rule])}/{n}",
            fmt_ci(clean_removed[rule], 1),
            f"{np.mean(clean_removed[rule]) / n_clean:.1%}",
        ])  # fmt: skip
    header = ["rule", "10%: R>=0.9", "R>=0.9, P>=0.6", "R>=0.9, P>=0.8", "clean: none removed",
              "clean: rows removed", "clean: FP rate"]  # fmt: skip
    print(table(rows, header))


def filters(seeds: list[int], settings: list[tuple[str, float]]) -> None:
    """Every filter on the same poisoned fine-tune, then a re-train on its kept rows."""
    results: dict[tuple, dict[str, list]] = {}
    seconds = {"BYE": [], "SS+AC features": []}
    for trigger, rate in settings:
        for seed in progress(seeds, f"{trigger} {rate:.0%}"):
            c = EmbeddedConfig(trigger=trigger, poison_rate=rate, seed=seed)
            run = backdoored_run(c)
            with Timer() as t:
                d = BYE(run.model, run.victim.processor).check(run.dataset).details
            seconds["BYE"].append(t.seconds)
            with Timer() as t:
                feats = last_token_features(run.model, run.victim.processor, run.dataset)
            seconds["SS+AC features"].append(t.seconds)
            labels = np.array([r["answer"] for r in run.dataset])
            removals = {f"BYE ({rule})": d[rule]["removed"] for rule in RULES}
            removals["Spectral Signatures"] = spectral_signatures(feats, labels, rate)
            removals["Activation Clustering"] = activation_clustering(feats, labels, seed)
            removals["Random Drop"] = random_drop(
                len(run.dataset), len(d["removed"]), seed=seed + 1
            )
            done = {(): (run.asr, run.clean_accuracy)}
            rows = {"no defense": [0, np.nan, np.nan, run.asr, run.clean_accuracy]}
            for name, removed in removals.items():
                key = tuple(removed)
                if key not in done:
                    done[key] = retrained(run, removed)
                rows[name] = [len(removed), *filter_quality(removed, run.poisoned), *done[key]]
            for name, values in rows.items():
                cell = results.setdefault((trigger, rate), {}).setdefault(name, [])
                cell.append(values)
    out = []
    for (trigger, rate), by_filter in results.items():
        for name, values in by_filter.items():
            v = np.array(values, dtype=float)  # (seeds, 5)
            cols = [fmt_ci(v[:, 0], 0)] + [
                "-" if np.isnan(v[:, j]).all() else fmt_ci(v[~np.isnan(v[:, j]), j], 2)
                for j in range(1, 5)
            ]
            out.append([trigger, f"{rate:.0%}", name, *cols])
    header = ["trigger", "rate", "filter", "removed", "precision", "recall", "ASR after re-train",
              "clean acc"]  # fmt: skip
    print(f"\nmean ± 95% CI over seeds {seeds}\n" + table(out, header))
    bye, feat = np.median(seconds["BYE"]), np.median(seconds["SS+AC features"])
    print(f"\nfilter time per run (median): BYE {bye:.2f} s, SS/AC features {feat:.2f} s "
          f"(ratio {bye / feat:.1f}x)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--part", choices=["rates", "filters", "both"], default="both")
    parser.add_argument("--seed", type=int, default=0, help="first seed")
    parser.add_argument("--seeds", type=int, default=3, help="seeds per filter setting")
    parser.add_argument("--rate-seeds", type=int, default=24, help="seeds for the rates")
    parser.add_argument("--grid", choices=["short", "full"], default="short",
                        help="short: patch at 0/5/10/20%%, blend and text at 10%%")  # fmt: skip
    args = parser.parse_args()
    single_thread()
    with Timer() as total:
        if args.part in ("rates", "both"):
            rates(list(range(args.seed, args.seed + args.rate_seeds)))
        if args.part in ("filters", "both"):
            settings = [("patch", r) for r in (0.0, 0.05, 0.1, 0.2)]
            others = (0.05, 0.1, 0.2) if args.grid == "full" else (0.1,)
            settings += [(t, r) for t in ("blend", "text") for r in others]
            filters(list(range(args.seed, args.seed + args.seeds)), settings)
    print(f"\ntotal {total.seconds:.0f} s")


if __name__ == "__main__":
    main()
