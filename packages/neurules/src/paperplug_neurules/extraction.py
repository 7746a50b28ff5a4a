"""Stage 5: the hard rule list in the user's units, with a learned default rule (§3.4).

Rule j keeps the features with w_ji > 0 as conditions α < x < β, mapped back through the
standardisation; a cut point beyond the training range becomes ±∞ (the condition is
vacuous there), and the others the shortest decimal that decides every training row as the
cut point does. Thresholds print exactly (`repr`), so the printed list and `predict` are the
same function everywhere, whatever the features' offset and spread. Conditions that decide
no training row's label are pruned. Rules are tried by descending priority; the first that
fires answers with softmax(H[:, j]). The official code has no default rule (uncovered rows
fall to class 0); here the default answers with the Laplace-smoothed class frequencies of
the training rows no rule covers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import torch

from paperplug.checks import check_array, check_scalar, check_sequence, check_type
from paperplug_neurules.network import NeuralRuleList
from paperplug_neurules.validation import check_class_indices, check_weight


@dataclass(frozen=True)
class Condition:
    """low < x[feature] < high, in the user's units (±inf where unbounded).

    Printed with `repr` of each float, the shortest text that reads back as the same float, so
    the printed condition is exactly the one `holds` evaluates.
    """

    feature: int
    name: str
    low: float
    high: float

    def holds(self, X: np.ndarray) -> np.ndarray:
        column = X[:, self.feature]
        return (column > self.low) & (column < self.high)

    def __str__(self) -> str:
        if math.isinf(self.low):
            return f"{self.name} < {self.high!r}"
        if math.isinf(self.high):
            return f"{self.name} > {self.low!r}"
        return f"{self.low!r} < {self.name} < {self.high!r}"


@dataclass(frozen=True)
class Rule:
    """IF all conditions THEN `label` (class probabilities `proba`); `support`: the (weighted)
    fraction of training rows this rule answers."""

    conditions: tuple[Condition, ...]
    label: object
    proba: tuple[float, ...]
    priority: float
    support: float

    def fires(self, X: np.ndarray) -> np.ndarray:
        mask = np.ones(X.shape[0], dtype=bool)
        for condition in self.conditions:
            mask &= condition.holds(X)
        return mask

    def __str__(self) -> str:
        return " AND ".join(str(c) for c in self.conditions) or "TRUE"


@dataclass(frozen=True)
class RuleList:
    """An ordered rule list with a default rule; the shipped NeuRules model. `str()` prints it,
    and the printed text is the model: parsed and applied, it gives `predict` on every row."""

    rules: tuple[Rule, ...]
    default_label: object
    default_proba: tuple[float, ...]
    classes: tuple[object, ...]

    def decide(self, X: np.ndarray) -> np.ndarray:
        """Index of the rule that answers each row (len(rules) for the default)."""
        return first_firing([rule.fires(X) for rule in self.rules], X.shape[0])

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        table = np.array([r.proba for r in self.rules] + [self.default_proba])
        return table[self.decide(X)]

    def predict(self, X: np.ndarray) -> np.ndarray:
        return np.asarray(self.classes)[self.predict_proba(X).argmax(axis=1)]

    @property
    def n_conditions(self) -> int:
        return sum(len(r.conditions) for r in self.rules)

    def __len__(self) -> int:
        return len(self.rules)

    def __str__(self) -> str:
        """IF / ELSE IF / ELSE text, every threshold printed exactly."""
        lines = [
            f"{'IF' if j == 0 else 'ELSE IF'} {rule} THEN {rule.label}  "
            f"(p={max(rule.proba):.2f}, support={rule.support:.2f})"
            for j, rule in enumerate(self.rules)
        ]
        lines.append(f"ELSE {self.default_label}  (p={max(self.default_proba):.2f})")
        return "\n".join(lines)


def readable_threshold(value: float, below: float, above: float, spread: float) -> float:
    """The number with the fewest decimals in the open gap (below, above) nearest `value`.

    `below` and `above` are the training values on either side of the cut, so every training
    row is decided as by `value` itself. Decimals start at the feature's spread (a feature at
    -122.3 ± 0.01 gets hundredths at least) and grow until the number falls in the gap; the
    result is a float whose `repr` is that short decimal.
    """
    value = check_scalar(value, "value")
    if not math.isfinite(value):
        raise ValueError(f"value must be finite, got {value!r}")
    below, above = check_scalar(below, "below"), check_scalar(above, "above")
    if below > above:
        raise ValueError(f"below must be <= above, got below={below!r} > above={above!r}")
    check_scalar(spread, "spread", low=0)
    if not below < value < above:
        return value
    start = -math.floor(math.log10(spread)) if spread > 0 else 0
    for decimals in range(start, start + 18):
        candidate = round(value, decimals) if decimals < 0 else float(f"{value:.{decimals}f}")
        if below < candidate < above:
            return candidate
    return value


def first_firing(fires: list[np.ndarray], n: int) -> np.ndarray:
    """Per row, the index of the first rule whose mask `fires[j]` holds there (len(fires), the
    default, where none does): a rule list's decision from its rules' firing masks."""
    answer = np.full(n, len(fires))
    open_rows = np.ones(n, dtype=bool)
    for j, fire in enumerate(fires):
        hit = open_rows & fire
        answer[hit] = j
        open_rows &= ~hit
    return answer


def prune_conditions(rule_list: RuleList, X: np.ndarray) -> RuleList:
    """Drop, rule by rule and condition by condition, every condition whose removal changes
    the label of no row of `X` (the training rows), keeping one condition a rule at least:
    the same answers on those rows, a shorter list. Cut points that training left inside the
    data on a feature the rule does not need (a start at a quantile) go this way."""
    check_type(rule_list, "rule_list", RuleList)
    X = check_array(X, "X", ndim=2)
    rules = rule_list.rules
    holds = [[c.holds(X) for c in r.conditions] for r in rules]
    codes = np.array(
        [int(np.argmax(r.proba)) for r in rules] + [np.argmax(rule_list.default_proba)]
    )

    def labels(fires: list[np.ndarray]) -> np.ndarray:
        return codes[first_firing(fires, len(X))]

    kept = [list(range(len(h))) for h in holds]
    fires = [np.logical_and.reduce(h) if h else np.ones(len(X), dtype=bool) for h in holds]
    reference = labels(fires)
    for j in range(len(rules)):
        for k in list(kept[j]):
            if len(kept[j]) == 1:
                break
            rest = [i for i in kept[j] if i != k]
            trial = np.logical_and.reduce([holds[j][i] for i in rest])
            if np.array_equal(labels([*fires[:j], trial, *fires[j + 1 :]]), reference):
                kept[j], fires[j] = rest, trial
    pruned = tuple(
        replace(r, conditions=tuple(r.conditions[i] for i in keep))
        for r, keep in zip(rules, kept, strict=True)
    )
    return replace(rule_list, rules=pruned)


def _gap(values: np.ndarray, cut: float) -> tuple[float, float]:
    """The sorted distinct training values just below and just above `cut` (±inf at the ends);
    an empty gap where `cut` is itself a training value."""
    i = int(np.searchsorted(values, cut, side="left"))
    if i < len(values) and values[i] == cut:
        return cut, cut
    below = float(values[i - 1]) if i > 0 else -math.inf
    above = float(values[i]) if i < len(values) else math.inf
    return below, above


def extract_rule_list(
    net: NeuralRuleList,
    *,
    mean: np.ndarray,
    scale: np.ndarray,
    feature_names: list[str],
    classes: np.ndarray,
    X_train: np.ndarray,
    y_train: np.ndarray,
    sample_weight: np.ndarray | None = None,
    prune: bool = True,
) -> RuleList:
    """Read the hard rule list off a trained network; `y_train` holds class indices.

    A cut at or beyond the training range becomes ±inf (the condition is dropped); the others
    become the shortest decimal between the same two training values (`readable_threshold`),
    so training rows are decided exactly as by the network's cut points. With `prune`, the
    conditions that decide no training row's label are dropped (`prune_conditions`). A rule
    that answers no training row (an empty interval, or shadowed by the rules before it) is
    left out.
    """
    check_type(net, "net", NeuralRuleList)
    n_classes, d = net.selector.heads.shape[0], net.predicates.alpha.shape[1]
    mean = check_array(mean, "mean", shape=(d,))
    scale = check_array(scale, "scale", shape=(d,))
    if (scale <= 0).any():
        raise ValueError("scale must be positive (the features' spread)")
    names = check_sequence(feature_names, "feature_names", str, what="feature names")
    if len(names) != d:
        raise ValueError(f"feature_names has {len(names)} names for {d} features")
    classes = np.asarray(check_sequence(classes, "classes", what="class labels"))
    if len(classes) != n_classes:
        raise ValueError(f"classes has {len(classes)} labels for the network's {n_classes}")
    X_train = check_array(X_train, "X_train", shape=(None, d))
    y_train = check_class_indices(y_train, "y_train", len(X_train), n_classes)
    weight = np.ones(len(X_train))
    if sample_weight is not None:
        weight = check_weight(sample_weight, "sample_weight", len(X_train)).astype(float)
    check_type(prune, "prune", bool, what="True or False")
    with torch.no_grad():
        weights = net.conjunctions.weights.numpy()  # (R, d)
        alpha = net.predicates.alpha.numpy().astype(np.float64) * scale + mean  # user's units
        beta = net.predicates.beta.numpy().astype(np.float64) * scale + mean
        order = net.selector.order.numpy()
        proba = torch.softmax(net.selector.heads, dim=0).T.numpy()  # (R, C)
    columns = [np.unique(X_train[:, i]) for i in range(X_train.shape[1])]
    spread = X_train.std(axis=0)

    def cut(i: int, value: float, unbounded: float) -> float:
        values = columns[i]
        if (value <= values[0] and unbounded < 0) or (value >= values[-1] and unbounded > 0):
            return unbounded
        return readable_threshold(value, *_gap(values, value), float(spread[i]))

    rules: list[Rule] = []
    for j in np.argsort(-order, kind="stable"):
        conditions = []
        for i in np.flatnonzero(weights[j] > 0):
            low, high = cut(int(i), alpha[j, i], -math.inf), cut(int(i), beta[j, i], math.inf)
            if not (math.isinf(low) and math.isinf(high)):
                conditions.append(Condition(int(i), feature_names[i], float(low), float(high)))
        if any(c.low >= c.high for c in conditions):  # an empty interval: never fires
            continue
        p = tuple(float(v) for v in proba[j])
        rules.append(Rule(tuple(conditions), classes[int(np.argmax(p))], p, float(order[j]), 0.0))
        if not conditions:  # fires on everything: later rules can never answer
            break
    if rules and not rules[-1].conditions:
        last = rules.pop()
        default_proba = last.proba
    else:
        draft = RuleList(tuple(rules), None, (0.0,) * len(classes), tuple(classes))
        uncovered = draft.decide(X_train) == len(rules)
        counts = np.bincount(y_train[uncovered], weight[uncovered], minlength=len(classes)) + 1.0
        default_proba = tuple(float(v) for v in counts / counts.sum())
    draft = RuleList(tuple(rules), None, default_proba, tuple(classes))
    if prune:
        rules = list(prune_conditions(draft, X_train).rules)
    decided = RuleList(tuple(rules), None, default_proba, tuple(classes)).decide(X_train)
    support = np.bincount(decided, weight, minlength=len(rules) + 1) / weight.sum()
    rules = [  # a rule that answers no training row is left out: no row stands behind it
        Rule(r.conditions, r.label, r.proba, r.priority, float(support[j]))
        for j, r in enumerate(rules)
        if support[j] > 0
    ]
    default_label = classes[int(np.argmax(default_proba))]
    return RuleList(tuple(rules), default_label, default_proba, tuple(classes))
