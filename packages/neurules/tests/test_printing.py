"""The printed rule list is the model: parsed back and applied, it gives `predict` on every row,
whatever the features' offset and spread (issue 14: features such as 182 + 0.01·noise printed as
"182 < x < 182" and disagreed with predict on 11% of rows)."""

import math
import re

import numpy as np
import pytest
from paperplug_neurules import NeuRulesClassifier, planted_rule_data, readable_threshold

LINE = re.compile(r"^(?:IF|ELSE IF) (.*) THEN (\S+)  \(p=")
NUMBER = r"(\S+)"
BOTH = re.compile(rf"^{NUMBER} < (\w+) < {NUMBER}$")
ONE = re.compile(rf"^(\w+) ([<>]) {NUMBER}$")


def parse(text: str) -> tuple[list[tuple[list[tuple[str, float, float]], str]], str]:
    """An independent reading of the printed list: [(conditions, label)], default label."""
    lines = text.splitlines()
    rules = []
    for line in lines[:-1]:
        body, label = LINE.match(line).groups()
        conditions = []
        for part in [] if body == "TRUE" else body.split(" AND "):
            if m := BOTH.match(part):
                conditions.append((m[2], float(m[1]), float(m[3])))
            else:
                name, op, value = ONE.match(part).groups()
                bound = float(value)
                conditions.append(
                    (name, bound, math.inf) if op == ">" else (name, -math.inf, bound)
                )
        rules.append((conditions, label))
    assert lines[-1].startswith("ELSE ")
    return rules, lines[-1].split()[1]


def apply_text(text: str, X: np.ndarray, names: list[str]) -> np.ndarray:
    rules, default = parse(text)
    column = {name: X[:, i] for i, name in enumerate(names)}
    answer = np.full(len(X), default, dtype=object)
    open_rows = np.ones(len(X), dtype=bool)
    for conditions, label in rules:
        hit = open_rows.copy()
        for name, low, high in conditions:
            hit &= (column[name] > low) & (column[name] < high)
        answer[hit] = label
        open_rows &= ~hit
    return answer.astype(str)


@pytest.mark.parametrize(
    ("offset", "scale", "seed"),
    [(-122.3, 0.01, 11), (182.0, 0.01, 12), (1e6, 3.0, 13), (0.0, 1e-7, 14), (-5e4, 250.0, 15)],
)
def test_printed_list_equals_predict_with_offset_features(offset, scale, seed):
    U, y = planted_rule_data(n=600, seed=seed)
    X = offset + scale * U
    names = [f"f{i}" for i in range(X.shape[1])]
    clf = NeuRulesClassifier(n_epochs=40, batch_size=100, random_state=seed).fit(
        X, y, feature_names=names
    )
    text = str(clf.rule_list_)
    assert clf.rule_list_.n_conditions > 0, text
    fresh = offset + scale * planted_rule_data(n=2000, seed=seed + 100)[0]
    beyond = offset + scale * (planted_rule_data(n=500, seed=seed + 200)[0] * 1.6 - 0.3)
    for rows in (X, fresh, beyond):
        assert (apply_text(text, rows, names) == clf.predict(rows).astype(str)).all()
    for rule in clf.rules_:  # no "182 < x < 182": every printed interval is non-empty
        for c in rule.conditions:
            assert c.low < c.high and repr(c.low) != repr(c.high)
    assert clf.score(X, y) > 0.6, "a real list, not only the default rule"


def test_default_print_of_the_planted_fit_is_the_model(planted_fit):
    clf, X, _ = planted_fit
    names = [f"x{i}" for i in range(X.shape[1])]
    X_new = planted_rule_data(n=3000, seed=7)[0]
    for rows in (X, X_new, X_new * 1.5 - 0.25):  # also outside the training range
        assert (apply_text(str(clf.rule_list_), rows, names) == clf.predict(rows).astype(str)).all()


def test_readable_threshold_is_the_shortest_decimal_in_the_gap():
    assert readable_threshold(0.7123, 0.70, 0.75, spread=0.3) == 0.71
    assert readable_threshold(0.7123, 0.69, 0.75, spread=0.3) == 0.7
    assert repr(readable_threshold(-122.30537, -122.3056, -122.3048, spread=0.01)) == "-122.305"
    assert readable_threshold(12345.6, 12001.0, 12999.0, spread=5000.0) == 12300.0
    assert readable_threshold(5.0, 5.0, 5.0, spread=1.0) == 5.0  # a cut on a value: kept as is


def test_thresholds_decide_training_rows_as_the_network_does(monkeypatch):
    """Rounding to the shortest decimal never moves a cut past a training value: the list read
    with the network's raw cut points predicts every training row as the printed one does."""
    from paperplug_neurules import extraction

    U, y = planted_rule_data(n=800, seed=21)
    X = -122.3 + 0.01 * U
    clf = NeuRulesClassifier(n_epochs=40, batch_size=200, random_state=21).fit(X, y)
    args = dict(mean=clf.mean_, scale=clf.scale_, feature_names=[f"x{i}" for i in range(6)],
                classes=clf.classes_, X_train=X, y_train=y)  # fmt: skip
    monkeypatch.setattr(extraction, "readable_threshold", lambda value, *_: value)
    raw = extraction.extract_rule_list(clf.network_, **args)
    assert str(raw) != str(clf.rule_list_)  # the raw cut points print with every digit
    np.testing.assert_array_equal(raw.predict(X), clf.predict(X))


def test_readable_threshold_stays_in_the_gap():
    rng = np.random.default_rng(0)
    for _ in range(2000):
        offset, spread = rng.normal(0, 1e4), 10 ** rng.uniform(-8, 4)
        below, above = np.sort(offset + spread * rng.uniform(size=2))
        value = below + (above - below) * rng.uniform(0.01, 0.99)
        result = readable_threshold(value, below, above, spread)
        assert below < result < above and float(repr(result)) == result
