"""Embedded default: NeuRules beside a CART of the same size on breast_cancer, wine, iris and a
planted rule list (stratified 3-fold CV); prints the table and one learned list, saves the
training curves."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from sklearn.tree import DecisionTreeClassifier

from paperplug.harness import (
    demo_parser,
    fmt_ci,
    progress,
    pyplot,
    save_figure,
    single_thread,
    table,
)
from paperplug_neurules.classifier import NeuRulesClassifier
from paperplug_neurules.embedded import datasets
from paperplug_neurules.evaluation import cross_validate


def neurules_fit(seed: int, sizes: list[int]):
    """A cross_validate fit for NeuRules at its defaults; records its rule budget in `sizes`."""

    def fit(X: np.ndarray, y: np.ndarray, names: list[str]):
        clf = NeuRulesClassifier(random_state=seed).fit(X, y, feature_names=names)
        sizes.append(clf.n_rules_)
        return clf.predict, len(clf.rules_), clf.rule_list_.n_conditions

    return fit


def cart_fit(seed: int, sizes: list[int]):
    """CART with as many leaves as NeuRules' rule budget plus its default rule, fold by fold."""
    budgets = iter(sizes)

    def fit(X: np.ndarray, y: np.ndarray, names: list[str]):
        tree = DecisionTreeClassifier(max_leaf_nodes=next(budgets) + 1, random_state=seed)
        tree.fit(X, y)
        return tree.predict, tree.get_n_leaves(), tree.get_n_leaves() - 1

    return fit


def plot_history(clf: NeuRulesClassifier, path: Path) -> Path:
    plt = pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.5))
    for key in ("loss", "ce", "support_penalty"):
        left.plot(clf.history_[key], label=key)
    left.set(xlabel="epoch", title="NeuRules training (breast_cancer)", yscale="log")
    left.legend()
    for key in ("predicate_temp", "selector_temp"):
        right.plot(clf.history_[key], label=key)
    right.axvline(clf.n_epochs // 2, color="grey", ls=":", label="annealing starts")
    right.set(xlabel="epoch", title="annealing schedule")
    right.legend()
    fig.tight_layout()
    return save_figure(fig, path)


def main(argv: list[str] | None = None) -> int:
    args = demo_parser("neurules", __doc__).parse_args(argv)
    single_thread()
    data = datasets(seed=args.seed)
    rows = []
    for name, (X, y, names) in progress(data.items(), "datasets", total=len(data)):
        sizes: list[int] = []
        ours = cross_validate(neurules_fit(args.seed, sizes), X, y, names, seed=args.seed)
        cart = cross_validate(cart_fit(args.seed, sizes), X, y, names, seed=args.seed)
        for method, folds in (("NeuRules", ours), ("CART, same size", cart)):
            rows.append(
                (
                    name,
                    method,
                    fmt_ci(f["accuracy"] for f in folds),
                    float(np.mean([f["rules"] for f in folds])),
                    float(np.mean([f["conditions"] for f in folds])),
                    float(np.mean([f["seconds"] for f in folds])),
                )
            )
    print(table(rows, ["dataset", "method", "accuracy", "rules", "conditions", "s/fold"], digits=1))
    X, y, names = data["breast_cancer"]
    clf = NeuRulesClassifier(random_state=args.seed).fit(X, y, feature_names=names)
    print("\nThe rule list learned on all of breast_cancer (0 = malignant, 1 = benign):")
    print(clf.rule_list_)
    print(f"training accuracy {clf.score(X, y):.3f}; coverage by learned rules {clf.coverage_:.2f}")
    plot_history(clf, args.out / "neurules_training.png")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
