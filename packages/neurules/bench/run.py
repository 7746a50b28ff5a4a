"""NeuRules beside imodels (greedy rule list, BRL, FIGS), wittgenstein RIPPER and a CART with as
many leaves as NeuRules has rules (+ default), on the same stratified folds, in one process.

make bench PKG=neurules [ARGS="--folds 5"]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd
import torch
from paperplug_neurules import NeuRulesClassifier, cross_validate, datasets
from sklearn.preprocessing import KBinsDiscretizer
from sklearn.tree import DecisionTreeClassifier

warnings.filterwarnings("ignore")


def neurules(X, y, names):
    clf = NeuRulesClassifier(random_state=0).fit(X, y, feature_names=names)
    neurules.last_rules = len(clf.rules_)
    return clf.predict, len(clf.rules_), clf.rule_list_.n_conditions


def neurules_eps0(X, y, names):  # the paper's ablation: no gradient shaping
    clf = NeuRulesClassifier(eps=0.0, random_state=0).fit(X, y, feature_names=names)
    return clf.predict, len(clf.rules_), clf.rule_list_.n_conditions


def cart(X, y, names):  # as many leaves as the NeuRules list of the same fold has rules + default
    tree = DecisionTreeClassifier(
        max_leaf_nodes=max(2, neurules.last_rules + 1), random_state=0
    ).fit(X, y)
    return tree.predict, tree.get_n_leaves(), tree.get_n_leaves() - 1  # internal nodes = splits


def greedy(X, y, names):
    from imodels import GreedyRuleListClassifier

    model = GreedyRuleListClassifier(max_depth=10).fit(X, y, feature_names=names)
    n = len(model.rules_)  # one threshold per rule
    return (lambda Z: np.asarray(model.predict(Z)).astype(y.dtype)), n, n


def brl(X, y, names):
    from imodels import BayesianRuleListClassifier

    binner = KBinsDiscretizer(n_bins=3, encode="onehot-dense", strategy="quantile").fit(X)
    cols = [
        f"{n}_bin{b}"
        for n, e in zip(names, binner.bin_edges_, strict=True)
        for b in range(len(e) - 1)
    ]
    model = BayesianRuleListClassifier(listlengthprior=5, max_iter=2000, n_chains=2, random_state=0)
    model.fit(binner.transform(X), y, feature_names=cols)
    n = len(model.d_star) if getattr(model, "d_star", None) is not None else np.nan
    return (lambda Z: np.asarray(model.predict(binner.transform(Z))).astype(y.dtype)), n, n


def figs(X, y, names):
    from imodels import FIGSClassifier

    model = FIGSClassifier(max_rules=10, random_state=0).fit(X, y, feature_names=names)
    return (
        (lambda Z: np.asarray(model.predict(Z)).astype(y.dtype)),
        model.complexity_,
        model.complexity_,
    )


def ripper(X, y, names):
    import wittgenstein as lw

    frame = pd.DataFrame(X, columns=names).assign(y=y)
    model = lw.RIPPER(max_rules=10, random_state=0)
    model.fit(frame, class_feat="y", pos_class=1)  # returns None
    n_conditions = sum(len(rule.conds) for rule in model.ruleset_.rules)
    predict = lambda Z: np.asarray(model.predict(pd.DataFrame(Z, columns=names))).astype(int)  # noqa: E731
    return predict, len(model.ruleset_.rules), n_conditions


PEERS = {"NeuRules": neurules, "NeuRules ε=0 (ablation)": neurules_eps0, "CART (same #leaves)": cart, "imodels GreedyRuleList": greedy,
         "imodels BRL": brl, "imodels FIGS": figs, "wittgenstein RIPPER": ripper}  # fmt: skip
BINARY_ONLY = {"imodels GreedyRuleList", "imodels BRL", "wittgenstein RIPPER"}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--folds", type=int, default=5)
    args = parser.parse_args()
    torch.set_num_threads(1)
    print(
        f"{'dataset':<14} {'method':<24} {'accuracy':>15} {'weighted F1':>15} {'rules':>6} {'cond.':>6} {'s/fold':>7}"
    )
    for name, (X, y, names) in datasets().items():
        for method, fit in PEERS.items():
            if method in BINARY_ONLY and len(np.unique(y)) > 2:
                print(f"{name:<14} {method:<24} {'n/a: binary only':>15}")
                continue
            start = time.perf_counter()
            try:
                r = cross_validate(fit, X, y, names, n_splits=args.folds, seed=0)
            except Exception as exc:  # a peer's failure is reported, not fatal
                print(f"{name:<14} {method:<24} failed: {type(exc).__name__}: {str(exc)[:60]}")
                continue
            print(
                f"{name:<14} {method:<24} {r['accuracy']:>8.3f} ± {r['accuracy_std']:.3f} "
                f"{r['f1']:>8.3f} ± {r['f1_std']:.3f} {r['rules']:>6.1f} {r['conditions']:>6.1f} "
                f"{r['seconds']:>7.2f}   ({time.perf_counter() - start:.0f} s)",
                flush=True,
            )


if __name__ == "__main__":
    main()
