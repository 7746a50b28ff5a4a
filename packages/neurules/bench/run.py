"""NeuRules beside a CART with as many leaves as NeuRules has rules plus its default (the goal:
at least its accuracy), imodels (FIGS at the same number of splits; greedy rule list and BRL
on binary labels) and wittgenstein RIPPER (binary), on the same stratified folds, in one
process, over several seeds: mean ± 95% CI over the seeds of each seed's CV mean.

A dataset is `name[:rules][/param=value,...]`: `digits:10` gives NeuRules 10 rules (CART 11
leaves), `digits:50/n_epochs=150` also sets NeuRules parameters for that dataset only.
`rulelist` is a planted rule list drawn fresh for each seed here (`planted_rule_list`),
independently of the package's own generator in embedded.py.

make bench PKG=neurules [ARGS="--seeds 3 --folds 3 --datasets iris,wine,digits:10 --variants 'eps=0;n_epochs=60'"]
"""

from __future__ import annotations

import argparse
import ast
import warnings
from collections.abc import Callable

import numpy as np
from paperplug_neurules import NeuRulesClassifier, cross_validate
from paperplug_neurules.embedded import datasets
from sklearn.preprocessing import KBinsDiscretizer
from sklearn.tree import DecisionTreeClassifier

from paperplug.harness import fmt_ci, mean_ci, progress, single_thread, table

warnings.filterwarnings("ignore")
DATASETS = ("breast_cancer", "wine", "iris", "digits", "planted", "synthetic", "rulelist")


def planted_rule_list(
    seed: int, n: int = 1500, n_features: int = 8, n_rules: int = 5, n_classes: int = 3,
    noise: float = 0.05,
) -> tuple[np.ndarray, np.ndarray, list[str], list]:  # fmt: skip
    """A random rule list of `n_rules` two-condition rules (an interval, or one side of it, on
    each of two random features, cut at random quantiles in [0.15, 0.85]) with random labels
    and a default, over Gaussian features of random offsets and scales; `noise` of the labels
    redrawn. Returns X, y, names and the planted list [(conditions, label)] + [default]."""
    rng = np.random.default_rng([7919, seed])
    X = rng.normal(size=(n, n_features)) * rng.uniform(0.5, 20, n_features)
    X += rng.uniform(-50, 50, n_features)
    labels = rng.permutation(np.arange(n_rules + 1) % n_classes)
    rules = []
    for label in labels[:-1]:
        conditions = []
        for feature in rng.choice(n_features, size=2, replace=False):
            low, high = np.quantile(X[:, feature], np.sort(rng.uniform(0.15, 0.85, 2)))
            side = rng.integers(3)  # 0: both cuts, 1: below `high` only, 2: above `low` only
            conditions.append(
                (feature, -np.inf if side == 1 else low, np.inf if side == 2 else high)
            )
        rules.append((conditions, label))
    y = np.full(n, labels[-1])
    open_rows = np.ones(n, dtype=bool)
    for conditions, label in rules:
        hit = open_rows.copy()
        for feature, low, high in conditions:
            hit &= (X[:, feature] > low) & (X[:, feature] < high)
        y[hit] = label
        open_rows &= ~hit
    flip = rng.uniform(size=n) < noise
    y[flip] = rng.integers(0, n_classes, size=flip.sum())
    return X, y, [f"x{i}" for i in range(n_features)], [*rules, labels[-1]]


def load(name: str, seed: int) -> tuple[np.ndarray, np.ndarray, list[str]]:
    if name == "rulelist":
        return planted_rule_list(seed)[:3]
    return datasets((name,), seed=seed)[name]


def parse_dataset(item: str) -> tuple[str, dict]:
    """'digits:50/n_epochs=150' -> ('digits', {'n_rules': 50, 'n_epochs': 150})."""
    item, _, extra = item.partition("/")
    name, _, rules = item.partition(":")
    params = parse_params(extra) if extra else {}
    return name, ({"n_rules": int(rules)} if rules else {}) | params


class Budget:
    """NeuRules' rule budget per fold, handed to the peers fitted after it on the same fold."""

    def __init__(self) -> None:
        self.sizes: list[int] = []

    def next_for(self) -> Callable[[], int]:
        sizes = iter(self.sizes)
        return lambda: next(sizes)


def neurules(seed: int, budget: Budget, **params):
    def fit(X, y, names):
        clf = NeuRulesClassifier(random_state=seed, **params).fit(X, y, feature_names=names)
        budget.sizes.append(clf.n_rules_)
        return clf.predict, len(clf.rules_), clf.rule_list_.n_conditions

    return fit


def cart(seed: int, size: Callable[[], int]):
    def fit(X, y, names):
        tree = DecisionTreeClassifier(max_leaf_nodes=size() + 1, random_state=seed).fit(X, y)
        return tree.predict, tree.get_n_leaves(), tree.get_n_leaves() - 1  # splits

    return fit


def figs(seed: int, size: Callable[[], int]):
    def fit(X, y, names):
        from imodels import FIGSClassifier

        model = FIGSClassifier(max_rules=size(), random_state=seed).fit(X, y, feature_names=names)
        predict = lambda Z: np.asarray(model.predict(Z)).astype(y.dtype)  # noqa: E731
        return predict, model.complexity_, model.complexity_

    return fit


def greedy(seed: int, size: Callable[[], int]):
    def fit(X, y, names):
        from imodels import GreedyRuleListClassifier

        model = GreedyRuleListClassifier(max_depth=10).fit(X, y, feature_names=names)
        predict = lambda Z: np.asarray(model.predict(Z)).astype(y.dtype)  # noqa: E731
        return predict, len(model.rules_), len(model.rules_)  # one threshold per rule

    return fit


def brl(seed: int, size: Callable[[], int]):
    def fit(X, y, names):
        from imodels import BayesianRuleListClassifier

        binner = KBinsDiscretizer(n_bins=3, encode="onehot-dense", strategy="quantile").fit(X)
        columns = [f"{n}_bin{b}" for n, e in zip(names, binner.bin_edges_, strict=True)
                   for b in range(len(e) - 1)]  # fmt: skip
        model = BayesianRuleListClassifier(
            listlengthprior=5, max_iter=2000, n_chains=2, random_state=seed
        ).fit(binner.transform(X), y, feature_names=columns)
        n = len(model.d_star) if getattr(model, "d_star", None) is not None else np.nan
        predict = lambda Z: np.asarray(model.predict(binner.transform(Z))).astype(y.dtype)  # noqa: E731
        return predict, n, n

    return fit


def ripper(seed: int, size: Callable[[], int]):
    def fit(X, y, names):
        import pandas as pd
        import wittgenstein as lw

        model = lw.RIPPER(max_rules=size(), random_state=seed)
        model.fit(pd.DataFrame(X, columns=names).assign(y=y), class_feat="y", pos_class=1)
        conditions = sum(len(rule.conds) for rule in model.ruleset_.rules)
        predict = lambda Z: np.asarray(model.predict(pd.DataFrame(Z, columns=names))).astype(int)  # noqa: E731
        return predict, len(model.ruleset_.rules), conditions

    return fit


PEERS = {"CART (same size)": cart, "imodels FIGS": figs, "imodels GreedyRuleList": greedy,
         "imodels BRL": brl, "wittgenstein RIPPER": ripper}  # fmt: skip
BINARY_ONLY = {"imodels GreedyRuleList", "imodels BRL", "wittgenstein RIPPER"}


def parse_params(text: str) -> dict[str, float | int | None]:
    """'eps=0,n_epochs=60' -> {'eps': 0, 'n_epochs': 60} (numbers and None only)."""
    params: dict[str, float | int | None] = {}
    for item in text.split(","):
        key, value = item.split("=")
        params[key.strip()] = None if value == "None" else ast.literal_eval(value)
    return params


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, default=3, help="seeds 0..N-1 (folds and models)")
    parser.add_argument("--folds", type=int, default=3)
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--peers", default=",".join(PEERS), help="comma list, '' for none")
    parser.add_argument(
        "--variants",
        default="",
        help="NeuRules variants beside the default, ';'-separated, each 'param=value,...' "
        "(e.g. 'eps=0;freeze_heads=0.5')",
    )
    args = parser.parse_args()
    single_thread()
    peers = [p for p in args.peers.split(",") if p]
    rows, summary = [], []
    for item in args.datasets.split(","):
        dataset, fixed = parse_dataset(item)
        name = dataset + (f":{fixed['n_rules']}" if "n_rules" in fixed else "")
        per_method: dict[str, list[list[dict]]] = {}
        for seed in progress(range(args.seeds), f"{name}: seeds", total=args.seeds):
            X, y, names = load(dataset, seed)
            budget = Budget()
            methods = {"NeuRules": neurules(seed, budget, **fixed)}
            for variant in filter(None, args.variants.split(";")):
                params = fixed | parse_params(variant)
                methods[f"NeuRules {variant}"] = neurules(seed, Budget(), **params)
            for method, fit in methods.items():
                folds = cross_validate(fit, X, y, names, n_splits=args.folds, seed=seed)
                per_method.setdefault(method, []).append(folds)
            for peer in peers:
                if peer in BINARY_ONLY and len(np.unique(y)) > 2:
                    continue
                try:
                    fit = PEERS[peer](seed, budget.next_for())
                    folds = cross_validate(fit, X, y, names, n_splits=args.folds, seed=seed)
                except Exception as exc:  # a peer's failure is reported, not fatal
                    print(f"{name} {peer} failed: {type(exc).__name__}: {str(exc)[:80]}")
                    continue
                per_method.setdefault(peer, []).append(folds)
        for method, seeds in per_method.items():
            acc = [np.mean([f["accuracy"] for f in folds]) for folds in seeds]
            f1 = [np.mean([f["f1"] for f in folds]) for folds in seeds]
            flat = [f for folds in seeds for f in folds]
            rows.append((name, method, fmt_ci(acc), fmt_ci(f1),
                         float(np.mean([f["rules"] for f in flat])),
                         float(np.mean([f["conditions"] for f in flat])),
                         float(np.mean([f["seconds"] for f in flat]))))  # fmt: skip
        if "CART (same size)" in per_method:
            ours = [np.mean([f["accuracy"] for f in s]) for s in per_method["NeuRules"]]
            theirs = [np.mean([f["accuracy"] for f in s]) for s in per_method["CART (same size)"]]
            gap, half = mean_ci(np.subtract(ours, theirs))
            secs = [f["seconds"] for s in per_method["NeuRules"] for f in s]
            cart_secs = [f["seconds"] for s in per_method["CART (same size)"] for f in s]
            summary.append(
                (name, f"{gap:+.3f} ± {half:.3f}", float(np.mean(secs) / np.mean(cart_secs)))
            )
        print(f"{name} done", flush=True)
    header = ["dataset", "method", "accuracy", "weighted F1", "rules", "cond.", "s/fold"]
    print(table(rows, header, digits=2))
    print("\nNeuRules against CART of the same size (paired by seed and fold):")
    print(table(summary, ["dataset", "accuracy gap (NeuRules - CART)", "time ratio"], digits=0))


if __name__ == "__main__":
    main()
