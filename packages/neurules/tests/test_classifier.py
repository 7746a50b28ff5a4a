"""The estimator: planted rules recovered, list and predict agree, bad input rejected."""

import re

import numpy as np
import pandas as pd
import pytest
from paperplug_neurules import PLANTED_RULES, NeuRulesClassifier, planted_rule_data
from sklearn.utils.estimator_checks import check_estimator

from paperplug.testing import TrainerContract


class TestContract(TrainerContract):
    component = "neurules"
    params = {"n_epochs": 30, "random_state": 0}

    @pytest.fixture
    def fit_case(self):
        X, y = planted_rule_data(n=200, seed=3)
        return (X, y), {}


def test_planted_thresholds_recovered(planted_fit):
    clf, _, _ = planted_fit
    X_test, y_test = planted_rule_data(n=4000, seed=1, noise=0.0)
    assert clf.score(X_test, y_test) >= 0.9
    for feature, low, high, _ in PLANTED_RULES:
        learned = [
            (c.low, c.high) for rule in clf.rules_ for c in rule.conditions if c.feature == feature
        ]
        for planted in (low, high):
            if np.isfinite(planted):
                gaps = [min(abs(lo - planted), abs(hi - planted)) for lo, hi in learned]
                assert min(gaps) <= 0.05, f"threshold {planted} of x{feature}: nearest {gaps}"


PATTERN = re.compile(r"^(?:IF|ELSE IF) (.*) THEN (\S+)  \(")


def _evaluate_text(text: str, X: np.ndarray) -> np.ndarray:
    """An independent reading of the printed list: parse it and apply it row by row."""
    lines = text.splitlines()
    default = lines[-1].split()[1]
    rules = []
    for line in lines[:-1]:
        body, label = PATTERN.match(line).groups()
        rules.append(([] if body == "TRUE" else body.split(" AND "), label))
    out = []
    for row in X:
        env = {f"x{i}": v for i, v in enumerate(row)}
        answer = default
        for conditions, label in rules:
            if all(eval(c, {"inf": np.inf}, env) for c in conditions):  # "0.3 < x2 < 0.6"
                answer = label
                break
        out.append(answer)
    return np.array(out)


def test_printed_list_and_predict_agree_on_every_row(planted_fit):
    clf, X, _ = planted_fit
    X_new, _ = planted_rule_data(n=3000, seed=7)
    for data in (X, X_new, X_new * 1.5 - 0.25):  # also outside the training range
        printed = _evaluate_text(clf.rule_list_.format(digits=17), data)
        assert (printed == clf.predict(data).astype(str)).all()


def test_probabilities_and_default_rule(planted_fit):
    clf, X, _ = planted_fit
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(clf.classes_[proba.argmax(1)], clf.predict(X))
    decided = clf.rule_list_.decide(X)
    assert 0 < clf.coverage_ <= 1
    assert clf.coverage_ == pytest.approx(np.mean(decided < len(clf.rules_)))
    assert clf.rule_list_.default_label in clf.classes_
    np.testing.assert_allclose(clf.predict_soft(X).sum(axis=1), 1.0, rtol=1e-5)


def test_reproducible_and_feature_names_from_dataframe():
    X, y = planted_rule_data(n=300, seed=5)
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(6)])
    a = NeuRulesClassifier(n_epochs=40, random_state=1).fit(frame, y)
    b = NeuRulesClassifier(n_epochs=40, random_state=1).fit(frame, y)
    assert str(a.rule_list_) == str(b.rule_list_) and "f" in str(a.rule_list_)
    assert all(c.name.startswith("f") for r in a.rules_ for c in r.conditions)
    named = NeuRulesClassifier(n_epochs=5, random_state=1).fit(X, y, feature_names=list("abcdef"))
    assert {c.name for r in named.rules_ for c in r.conditions} <= set("abcdef")


def test_string_labels_multiclass():
    X, y = planted_rule_data(n=300, seed=2)
    names = np.array(["low", "mid", "high"])[y]
    clf = NeuRulesClassifier(n_epochs=40, random_state=0).fit(X, names)
    assert set(clf.predict(X)) <= {"low", "mid", "high"} and clf.predict_proba(X).shape == (300, 3)


@pytest.mark.parametrize(
    ("X", "y", "kwargs", "message"),
    [
        (np.array([[0.0, np.nan], [1.0, 2.0]]), [0, 1], {}, "NaN"),
        (np.ones((4, 2)), [1, 1, 1, 1], {}, "at least two classes"),
        (np.ones((4, 2)), [0, 1, 0], {}, "inconsistent numbers of samples"),
        (np.zeros((0, 2)), [], {}, "0 sample"),
        (np.eye(4), [0, 1, 0, 1], {"feature_names": ["a"]}, "feature_names has 1 names for 4"),
    ],
)
def test_bad_inputs_rejected_and_untouched(X, y, kwargs, message):
    X_before, y_before = np.array(X, copy=True), list(y)
    with pytest.raises(ValueError, match=message):
        NeuRulesClassifier(n_epochs=2).fit(X, y, **kwargs)
    np.testing.assert_array_equal(X, X_before)
    assert list(y) == y_before


@pytest.mark.parametrize(
    ("param", "value"), [("n_rules", 0), ("lr", -1.0), ("min_support", 2.0), ("n_epochs", 2.5)]
)
def test_bad_parameters(param, value):
    with pytest.raises(ValueError, match=param):
        NeuRulesClassifier(**{param: value}).fit(np.eye(4), [0, 1, 0, 1])


def test_wrong_feature_count_at_predict(planted_fit):
    with pytest.raises(ValueError, match="expecting 6 features"):
        planted_fit[0].predict(np.ones((2, 3)))


def test_scikit_learn_estimator_checks():
    check_estimator(NeuRulesClassifier(n_epochs=200, random_state=0))
