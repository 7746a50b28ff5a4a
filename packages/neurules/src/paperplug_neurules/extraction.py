"""Stage 5: the hard rule list in the user's units, with a learned default rule (§3.4).

Rule j keeps the features with w_ji > 0 as conditions α < x < β, mapped back through the
standardisation; a cut point beyond the training range becomes ±∞ (the condition is
vacuous there), so the printed list and `predict` are the same function everywhere. Rules
are tried by descending priority; the first that fires answers with softmax(H[:, j]). The
official code has no default rule (uncovered rows fall to class 0); here the default
answers with the Laplace-smoothed class frequencies of the training rows no rule covers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from paperplug_neurules.network import NeuralRuleList


@dataclass(frozen=True)
class Condition:
    """low < x[feature] < high, in the user's units (±inf where unbounded)."""

    feature: int
    name: str
    low: float
    high: float

    def holds(self, X: np.ndarray) -> np.ndarray:
        column = X[:, self.feature]
        return (column > self.low) & (column < self.high)

    def format(self, digits: int = 4) -> str:
        low, high = f"{self.low:.{digits}g}", f"{self.high:.{digits}g}"
        if math.isinf(self.low):
            return f"{self.name} < {high}"
        if math.isinf(self.high):
            return f"{self.name} > {low}"
        return f"{low} < {self.name} < {high}"

    def __str__(self) -> str:
        return self.format()


@dataclass(frozen=True)
class Rule:
    """IF all conditions THEN `label` (class probabilities `proba`); `support` on training rows."""

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

    def format(self, digits: int = 4) -> str:
        return " AND ".join(c.format(digits) for c in self.conditions) or "TRUE"

    def __str__(self) -> str:
        return self.format()


@dataclass(frozen=True)
class RuleList:
    """An ordered rule list with a default rule; the shipped NeuRules model."""

    rules: tuple[Rule, ...]
    default_label: object
    default_proba: tuple[float, ...]
    classes: tuple[object, ...]

    def decide(self, X: np.ndarray) -> np.ndarray:
        """Index of the rule that answers each row (len(rules) for the default)."""
        answer = np.full(X.shape[0], len(self.rules))
        open_rows = np.ones(X.shape[0], dtype=bool)
        for j, rule in enumerate(self.rules):
            hit = open_rows & rule.fires(X)
            answer[hit] = j
            open_rows &= ~hit
        return answer

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

    def format(self, digits: int = 4) -> str:
        """IF / ELSE IF / ELSE text; digits=17 prints every threshold exactly."""
        lines = [
            f"{'IF' if j == 0 else 'ELSE IF'} {rule.format(digits)} THEN {rule.label}  "
            f"(p={max(rule.proba):.2f}, support={rule.support:.2f})"
            for j, rule in enumerate(self.rules)
        ]
        lines.append(f"ELSE {self.default_label}  (p={max(self.default_proba):.2f})")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.format()


def extract_rule_list(
    net: NeuralRuleList,
    *,
    mean: np.ndarray,
    scale: np.ndarray,
    feature_names: list[str],
    classes: np.ndarray,
    X_train: np.ndarray,
    y_train: np.ndarray,
) -> RuleList:
    """Read the hard rule list off a trained network; `y_train` holds class indices."""
    with torch.no_grad():
        weights = net.conjunctions.weights.numpy()  # (R, d)
        alpha = net.predicates.alpha.numpy() * scale + mean  # back to the user's units
        beta = net.predicates.beta.numpy() * scale + mean
        order = net.selector.order.numpy()
        proba = torch.softmax(net.selector.heads, dim=0).T.numpy()  # (R, C)
    lo, hi = X_train.min(axis=0), X_train.max(axis=0)
    rules: list[Rule] = []
    for j in np.argsort(-order, kind="stable"):
        conditions = tuple(
            Condition(
                int(i),
                feature_names[i],
                -math.inf if alpha[j, i] <= lo[i] else float(alpha[j, i]),
                math.inf if beta[j, i] >= hi[i] else float(beta[j, i]),
            )
            for i in np.flatnonzero(weights[j] > 0)
            if alpha[j, i] > lo[i] or beta[j, i] < hi[i]
        )
        p = tuple(float(v) for v in proba[j])
        rules.append(Rule(conditions, classes[int(np.argmax(p))], p, float(order[j]), 0.0))
        if not conditions:  # fires on everything: later rules can never answer
            break
    if rules and not rules[-1].conditions:
        last = rules.pop()
        default_proba = last.proba
    else:
        draft = RuleList(tuple(rules), None, (0.0,) * len(classes), tuple(classes))
        uncovered = draft.decide(X_train) == len(rules)
        counts = np.bincount(y_train[uncovered], minlength=len(classes)) + 1.0
        default_proba = tuple(float(v) for v in counts / counts.sum())
    decided = RuleList(tuple(rules), None, default_proba, tuple(classes)).decide(X_train)
    support = np.bincount(decided, minlength=len(rules) + 1) / len(X_train)
    rules = [
        Rule(r.conditions, r.label, r.proba, r.priority, float(support[j]))
        for j, r in enumerate(rules)
    ]
    default_label = classes[int(np.argmax(default_proba))]
    return RuleList(tuple(rules), default_label, default_proba, tuple(classes))
