"""Embedded default: NeuRules on breast_cancer, wine, iris and a planted rule list (3-fold CV)."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import torch

from paperplug_neurules.classifier import NeuRulesClassifier
from paperplug_neurules.evaluation import cross_validate, datasets


def _neurules(seed: int):
    def fit(X: np.ndarray, y: np.ndarray, names: list[str]):
        clf = NeuRulesClassifier(random_state=seed).fit(X, y, feature_names=names)
        return clf.predict, len(clf.rules_), clf.rule_list_.n_conditions

    return fit


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="paperplug demo neurules", description=__doc__)
    parser.add_argument("--out", type=Path, default=Path("out/neurules"))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    rows = []
    for name, (X, y, names) in datasets().items():
        print(
            f"[neurules] 3-fold CV on {name} ({X.shape[0]} rows, {X.shape[1]} features) ...",
            flush=True,
        )
        r = cross_validate(_neurules(args.seed), X, y, names, seed=args.seed)
        rows.append((name, r))
    print(
        f"\n{'dataset':<14} {'accuracy':>15} {'weighted F1':>15} {'rules':>6} {'conditions':>11} {'s/fold':>7}"
    )
    for name, r in rows:
        print(
            f"{name:<14} {r['accuracy']:>8.3f} ± {r['accuracy_std']:.3f} {r['f1']:>8.3f} ± {r['f1_std']:.3f} "
            f"{r['rules']:>6.1f} {r['conditions']:>11.1f} {r['seconds']:>7.1f}"
        )
    X, y, names = datasets()["breast_cancer"]
    clf = NeuRulesClassifier(random_state=args.seed).fit(X, y, feature_names=names)
    print("\nThe rule list learned on all of breast_cancer (0 = malignant, 1 = benign):")
    print(clf.rule_list_)
    print(f"training accuracy {clf.score(X, y):.3f}; coverage by learned rules {clf.coverage_:.2f}")
    figure = _plot_history(clf, args.out)
    print(f"\ntraining curves saved to {figure}")
    return 0


def _plot_history(clf: NeuRulesClassifier, out: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.5))
    for key in ("loss", "ce", "support_penalty"):
        left.plot(clf.history_[key], label=key)
    left.set(xlabel="epoch", title="NeuRules training (breast_cancer)", yscale="log")
    left.legend()
    for key in ("predicate_temp", "selector_temp"):
        right.plot(clf.history_[key], label=key)
    right.axvline(clf.n_epochs // 2, color="grey", ls=":", label="class heads unfrozen")
    right.set(xlabel="epoch", title="annealing schedule")
    right.legend()
    fig.tight_layout()
    path = out / "neurules_training.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


if __name__ == "__main__":
    raise SystemExit(main())
