"""The estimator: planted rules recovered, a real list learned, scikit-learn's conventions, bad
input rejected."""

import numpy as np
import pandas as pd
import pytest
from paperplug_neurules import PLANTED_RULES, NeuRulesClassifier, planted_rule_data
from paperplug_neurules.classifier import EXPECTED_FAILED_CHECKS
from sklearn.datasets import load_iris
from sklearn.utils.estimator_checks import check_estimator


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


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_few_epochs_on_small_data_learn_a_real_list(seed):
    """Issue 14: with few epochs on small data the list answered the majority class only."""
    X, y = load_iris(return_X_y=True)
    clf = NeuRulesClassifier(n_epochs=60, random_state=seed).fit(X, y)
    assert set(clf.predict(X)) == {0, 1, 2}
    assert clf.score(X, y) >= 0.85


def test_rule_count_follows_the_official_code():
    X, y = planted_rule_data(n=150, seed=2)
    fit = lambda y, **kw: NeuRulesClassifier(n_epochs=1, batch_size=150, **kw).fit(X, y)  # noqa: E731
    assert fit(y).n_rules_ == 15  # 3 classes * 10 / 2
    assert fit(y == 1).n_rules_ == 10
    assert fit(y, n_rules=4).n_rules_ == 4


def test_min_support_changes_the_model():
    """Issue 14: min_support 0.2 and 0 gave identical models (the penalty had no gradient)."""
    X, y = load_iris(return_X_y=True)
    a = NeuRulesClassifier(min_support=0.2, n_epochs=60, batch_size=50, random_state=0).fit(X, y)
    b = NeuRulesClassifier(min_support=0.0, n_epochs=60, batch_size=50, random_state=0).fit(X, y)
    assert max(a.history_["support_penalty"]) > 0 and max(b.history_["support_penalty"]) == 0
    assert not np.allclose(
        a.network_.predicates.alpha.detach(), b.network_.predicates.alpha.detach()
    )


def test_reproducible_and_feature_names_from_dataframe():
    X, y = planted_rule_data(n=300, seed=5)
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(6)])
    a = NeuRulesClassifier(n_epochs=20, batch_size=30, random_state=1).fit(frame, y)
    b = NeuRulesClassifier(n_epochs=20, batch_size=30, random_state=1).fit(frame, y)
    assert str(a.rule_list_) == str(b.rule_list_) and "f" in str(a.rule_list_)
    assert all(c.name.startswith("f") for r in a.rules_ for c in r.conditions)
    named = NeuRulesClassifier(n_epochs=5, batch_size=300, random_state=1)
    named.fit(X, y, feature_names=list("abcdef"))
    assert {c.name for r in named.rules_ for c in r.conditions} <= set("abcdef")


def test_same_seed_same_list_in_a_new_process():
    """A fresh interpreter with another hash seed prints the list this process learns."""
    import subprocess
    import sys

    X, y = planted_rule_data(n=200, seed=9)
    here = str(NeuRulesClassifier(n_epochs=20, batch_size=200, random_state=4).fit(X, y).rule_list_)
    code = (
        "from paperplug_neurules import NeuRulesClassifier, planted_rule_data\n"
        "X, y = planted_rule_data(n=200, seed=9)\n"
        "print(NeuRulesClassifier(n_epochs=20, batch_size=200, random_state=4).fit(X, y).rule_list_)"
    )
    env = {"PYTHONHASHSEED": "12345", "OMP_NUM_THREADS": "1"}
    there = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True, env=env).stdout  # fmt: skip
    assert there == here + "\n" and here.startswith(("IF", "ELSE"))


def test_string_labels_multiclass():
    X, y = planted_rule_data(n=300, seed=2)
    names = np.array(["low", "mid", "high"])[y]
    clf = NeuRulesClassifier(n_epochs=40, batch_size=300, random_state=0).fit(X, names)
    assert set(clf.predict(X)) <= {"low", "mid", "high"} and clf.predict_proba(X).shape == (300, 3)


@pytest.mark.parametrize(
    ("X", "y", "kwargs", "message"),
    [
        (np.array([[0.0, np.nan], [1.0, 2.0]]), [0, 1], {}, "NaN"),
        (np.ones((4, 2)), [1, 1, 1, 1], {}, "at least two classes"),
        (
            np.ones((4, 2)),
            [0, 1, 0],
            {},
            "X and y must have the same number of rows: X has 4, y has 3",
        ),
        (np.zeros((0, 2)), [], {}, "X is empty"),
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
    ("param", "value"),
    [("n_rules", 0), ("lr", -1.0), ("min_support", 2.0), ("n_epochs", 2.5), ("batch_size", 0)],
)
def test_bad_parameters(param, value):
    with pytest.raises((ValueError, TypeError), match=param):
        NeuRulesClassifier(**{param: value}).fit(np.eye(4), [0, 1, 0, 1])


def test_wrong_feature_count_at_predict(planted_fit):
    with pytest.raises(ValueError, match="expecting 6 features"):
        planted_fit[0].predict(np.ones((2, 3)))


def test_clone_pipeline_and_grid_search():
    from sklearn.base import clone
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = planted_rule_data(n=240, seed=8)
    base = NeuRulesClassifier(n_epochs=15, batch_size=80, class_weight="balanced", random_state=2)
    copy = clone(base)
    assert copy.get_params() == base.get_params() and not hasattr(copy, "rule_list_")
    pipe = make_pipeline(StandardScaler(), copy).fit(X, y)
    assert pipe.predict(X).shape == (240,)
    search = GridSearchCV(base, {"min_support": [0.0, 0.2]}, cv=2).fit(X, y)
    assert search.best_params_["min_support"] in (0.0, 0.2)
    assert search.best_estimator_.rule_list_ is not None


def test_scikit_learn_estimator_checks():
    """Every check passes but the ones the estimator declares with why, and each of those
    really fails (a declaration that no longer holds is reported, not kept)."""
    results = check_estimator(
        NeuRulesClassifier(n_epochs=50, lr=0.05, batch_size=2048, random_state=0),
        expected_failed_checks=EXPECTED_FAILED_CHECKS,
        on_fail=None,
    )
    status = {r["check_name"]: r["status"] for r in results}
    assert len(status) >= 60
    skipped = {n for n, s in status.items() if s == "skipped"}
    assert skipped <= {"check_array_api_input"}  # array-api-strict is not installed
    assert {n for n, s in status.items() if s not in ("passed", "skipped")} == set(
        EXPECTED_FAILED_CHECKS
    )
    assert all(status[n] == "xfail" for n in EXPECTED_FAILED_CHECKS), status
    assert all(len(why) > 40 for why in EXPECTED_FAILED_CHECKS.values())
