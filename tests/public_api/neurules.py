"""NeuRules' public API: one valid call of each callable, for the battery (a network of 3 rules
on 4 features, a few planted rows, one or two epochs where something trains)."""

from __future__ import annotations

import math

import numpy as np
import paperplug_neurules as n
import torch

from paperplug.testing import Sweep

REASONS = {
    "Condition": "a result type (a condition of the rules extract_rule_list returns)",
    "Rule": "a result type (a rule of the list extract_rule_list returns)",
    "RuleList": "a result type (what extract_rule_list returns)",
}
TEMP = [0.0, -1.0]


def _gen() -> torch.Generator:
    return torch.Generator().manual_seed(0)


def _net() -> n.NeuralRuleList:
    lower, upper = torch.full((3, 4), -1.0), torch.full((3, 4), 1.0)
    return n.NeuralRuleList(lower, upper, 3, generator=_gen())


def _fit(X, y, names):
    model = n.NeuRulesClassifier(n_epochs=1, batch_size=40, random_state=0).fit(X, y)
    return model.predict, len(model.rule_list_), model.rule_list_.n_conditions


def sweeps() -> dict[str, Sweep]:
    X, y = n.planted_rule_data(60, 4, seed=0)
    x = torch.as_tensor((X - X.mean(0)) / X.std(0), dtype=torch.float32)
    labels, weight = torch.as_tensor(y), torch.ones(60)
    lower, upper = torch.full((3, 4), -1.0), torch.full((3, 4), 1.0)
    pi = torch.rand(5, 3, 4, generator=_gen())
    rules = torch.rand(5, 3, generator=_gen())
    names = [f"x{i}" for i in range(4)]
    model = n.NeuRulesClassifier(n_epochs=2, batch_size=60, random_state=0).fit(X, y)
    return {
        "Conjunctions": Sweep(
            n.Conjunctions, (3, 4), bad_params={"n_rules": [0], "n_features": [0], "eps": [-1.0]}
        ),
        "harmonic_and": Sweep(
            n.harmonic_and, (pi, torch.full((3, 4), 0.5), 1e-3), bad_params={"eps": [-1.0]}
        ),
        "NeuralRuleList": Sweep(
            n.NeuralRuleList,
            (lower, upper, 3),
            {"generator": _gen()},
            bad_params={
                "n_classes": [1],
                "predicate_temp": TEMP,
                "eps": [-1.0],
                "head_init": [-1.0],
                "upper": [torch.ones(2, 4)],
            },
        ),
        "RuleSelector": Sweep(
            n.RuleSelector,
            (3, 3, _gen()),
            bad_params={"n_rules": [0], "n_classes": [1], "head_init": [-1.0]},
        ),
        "gumbel_select": Sweep(
            n.gumbel_select, (rules, 1.0, _gen()), bad_params={"temperature": TEMP}, width=False
        ),
        "priorities": Sweep(n.priorities, (torch.rand(3, generator=_gen()),), width=False),
        "support_penalty": Sweep(
            n.support_penalty,
            (rules, 0.2, torch.ones(5)),
            bad_params={"min_support": [-0.1, 1.5], "weight": [torch.ones(4), -torch.ones(5)]},
            width=False,  # any number of rules
        ),
        "planted_rule_data": Sweep(
            n.planted_rule_data,
            (20,),
            bad_params={"n": [0], "n_features": [2], "noise": [-0.1, 1.5], "seed": [-1]},
        ),
        "datasets": Sweep(
            n.datasets, (("iris",),), bad_params={"names": [("mnist",), ()], "seed": [-1]}
        ),
        "IntervalPredicates": Sweep(
            n.IntervalPredicates,
            (lower, upper, 0.2),
            bad_params={"temperature": TEMP, "upper": [torch.ones(2, 4)]},
        ),
        "soft_interval": Sweep(
            n.soft_interval,
            (x[:5, None, :], lower[None], upper[None], 0.2),
            bad_params={"temperature": TEMP},
            width=False,
        ),
        "initial_cut_points": Sweep(
            n.initial_cut_points,
            (x, weight, 3, 0.1, _gen()),
            bad_params={
                "n_rules": [0],
                "spread": [-0.1, 0.6],
                "weight": [torch.ones(5), -torch.ones(60)],
            },
            width=False,  # any number of features
        ),
        "weighted_quantile": Sweep(
            n.weighted_quantile,
            (x, weight, torch.full((4, 2), 0.5)),
            bad_params={"q": [torch.full((4, 2), 1.5), torch.full((3, 2), 0.5)]},
            width=False,
        ),
        "annealed": Sweep(
            n.annealed,
            (1.0, 3, 10, 5.0),
            bad_params={"start": [0.0], "epoch": [-1, 10], "n_epochs": [0], "factor": [0.5]},
        ),
        "heads_frozen": Sweep(
            n.heads_frozen,
            (3, 10),
            bad_params={"epoch": [-1, 10], "n_epochs": [0], "fraction": [-0.1, 1.5]},
        ),
        "batch_rows": Sweep(
            n.batch_rows,
            (100, 10),
            bad_params={"n_rows": [0], "n_epochs": [0], "min_steps": [0], "max_rows": [0]},
        ),
        "cross_validate": Sweep(
            n.cross_validate,
            (_fit, X, y, names),
            {"n_splits": 2},
            bad_params={"n_splits": [1, 61], "seed": [-1], "names": [names[:2]]},
        ),
        "TrainingConfig": Sweep(
            n.TrainingConfig,
            kwargs={"n_epochs": 2},
            bad_params={
                "n_epochs": [0],
                "lr": [0.0],
                "batch_size": [0],
                "min_steps": [0],
                "min_support": [-0.1, 1.5],
                "lambda_support": [-1.0],
                "predicate_temp": TEMP,
                "selector_temp": TEMP,
                "anneal_factor": [0.5],
                "freeze_heads": [-0.1, 1.5],
            },
        ),
        "objective": Sweep(
            n.objective,
            (_net(), x, labels, weight),
            {"selector_temp": 1.0, "min_support": 0.1, "lambda_support": 0.4, "generator": _gen()},
            bad_params={
                "selector_temp": TEMP,
                "min_support": [-0.1, 1.5],
                "lambda_support": [-1.0],
                "y": [torch.full((60,), 3)],
                "weight": [-torch.ones(60)],
            },
        ),
        "readable_threshold": Sweep(
            n.readable_threshold,
            (0.123456, 0.1, 0.2, 0.5),
            bad_params={"value": [math.inf], "below": [0.3], "spread": [-1.0], "above": [0.0]},
        ),
        "train_rule_list": Sweep(
            n.train_rule_list,
            (_net(), x, labels, n.TrainingConfig(n_epochs=1, batch_size=30), _gen()),
            bad_params={"y": [torch.full((60,), 3)], "weight": [-torch.ones(60)]},
            reasons={"on_epoch": "a callable (None: no report)"},
            mutates={"net": "it trains the rule-list network passed in, in place (what it is for)"},
        ),
        "extract_rule_list": Sweep(
            n.extract_rule_list,
            (model.network_,),
            {
                "mean": X.mean(0),
                "scale": X.std(0),
                "feature_names": names,
                "classes": np.arange(3),
                "X_train": X,
                "y_train": y,
            },
            bad_params={
                "feature_names": [names[:2]],
                "scale": [np.zeros(4)],
                "y_train": [np.full(60, 3)],
                "sample_weight": [np.ones(5), -np.ones(60)],
            },
            accepts={"classes:dtype": "class labels of any kind (numbers or strings)"},
        ),
        "prune_conditions": Sweep(
            n.prune_conditions,
            (model.rule_list_, X),
            width=False,  # reads its conditions' columns
        ),
        "NeuRulesClassifier.predict_soft": Sweep(model.predict_soft, (X[:5],)),
        "NeuralRuleList.rule_activations": Sweep(_net().rule_activations, (x[:5],)),
        "NeuralRuleList.soft_proba": Sweep(
            _net().soft_proba, (x[:5], 1.0), bad_params={"selector_temp": TEMP}
        ),
        "TrainingConfig.rows": Sweep(
            n.TrainingConfig(n_epochs=2).rows, (100,), bad_params={"n_rows": [0, -1]}
        ),
    }
