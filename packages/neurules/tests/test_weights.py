"""sample_weight and class_weight as scikit-learn users expect: integer weights act like repeated
rows (exactly in the objective and the read-off list; up to the Gumbel noise in a whole fit),
weight 0 is a row left out, and class_weight="balanced" finds a minority class."""

import numpy as np
import pytest
import torch
from paperplug_neurules import NeuRulesClassifier, extract_rule_list, objective, planted_rule_data
from paperplug_neurules.network import NeuralRuleList
from sklearn.metrics import recall_score


def _weighted_and_repeated(seed: int, n: int = 120):
    X, y = planted_rule_data(n=n, seed=seed)
    w = np.random.default_rng(seed).integers(0, 4, size=n)
    return X, y, w, X.repeat(w, axis=0), y.repeat(w)


def _network(d: int, seed: int) -> NeuralRuleList:
    net = NeuralRuleList(
        -2 * torch.ones(6, d),
        2 * torch.ones(6, d),
        3,
        generator=torch.Generator().manual_seed(seed),
    )
    with torch.no_grad():  # cut points inside the data, so predicates and gradients are not flat
        net.predicates.alpha.uniform_(-1.5, 0.0, generator=torch.Generator().manual_seed(seed))
        net.predicates.beta.uniform_(0.0, 1.5, generator=torch.Generator().manual_seed(seed + 1))
    return net


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_objective_and_gradient_with_integer_weights_equal_repeated_rows(seed):
    X, y, w, X_rep, y_rep = _weighted_and_repeated(seed)
    net = _network(X.shape[1], seed)
    kw = dict(selector_temp=0.7, min_support=0.2, lambda_support=0.4, generator=None)

    def value_and_grad(x, labels, weight):
        net.zero_grad()
        terms = objective(net, torch.tensor(x, dtype=torch.float32) * 4 - 2,
                          torch.tensor(labels), torch.tensor(weight, dtype=torch.float32), **kw)  # fmt: skip
        terms[0].backward()
        return [t.item() for t in terms], [p.grad.clone() for p in net.parameters()]

    weighted, grads_w = value_and_grad(X, y, w)
    repeated, grads_r = value_and_grad(X_rep, y_rep, np.ones(len(y_rep)))
    np.testing.assert_allclose(weighted, repeated, rtol=1e-5)
    for a, b in zip(grads_w, grads_r, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-6)


def test_read_off_list_with_weights_equals_repeated_rows(planted_fit):
    clf, X, y = planted_fit
    w = np.random.default_rng(5).integers(1, 4, size=len(y))
    kw = dict(mean=clf.mean_, scale=clf.scale_, feature_names=[f"x{i}" for i in range(6)],
              classes=clf.classes_)  # fmt: skip
    weighted = extract_rule_list(clf.network_, X_train=X, y_train=y, sample_weight=w, **kw)
    repeated = extract_rule_list(clf.network_, X_train=X.repeat(w, 0), y_train=y.repeat(w), **kw)
    assert str(weighted) == str(repeated)
    np.testing.assert_allclose(weighted.default_proba, repeated.default_proba)
    np.testing.assert_allclose(
        [r.support for r in weighted.rules], [r.support for r in repeated.rules]
    )


def test_zero_weight_is_a_row_left_out_and_scale_does_not_matter():
    X, y = planted_rule_data(n=300, seed=4)
    w = np.random.default_rng(4).integers(0, 3, size=300).astype(float)

    def fit(*args, **kwargs):
        return NeuRulesClassifier(n_epochs=40, batch_size=64, random_state=3).fit(*args, **kwargs)

    weighted = fit(X, y, sample_weight=w)
    assert str(weighted.rule_list_) == str(
        fit(X[w > 0], y[w > 0], sample_weight=w[w > 0]).rule_list_
    )
    assert str(weighted.rule_list_) == str(fit(X, y, sample_weight=4 * w).rule_list_)
    ones = fit(X, y, sample_weight=np.ones(300))
    assert str(ones.rule_list_) == str(fit(X, y).rule_list_)


def test_class_weight_dict_is_the_same_as_sample_weight():
    X, y = planted_rule_data(n=300, seed=6)
    by_class = NeuRulesClassifier(n_epochs=40, batch_size=300, class_weight={0: 1.0, 1: 3.0, 2: 2.0},
                                  random_state=0).fit(X, y)  # fmt: skip
    by_row = NeuRulesClassifier(n_epochs=40, batch_size=300, random_state=0).fit(
        X, y, sample_weight=np.array([1.0, 3.0, 2.0])[y]
    )
    assert str(by_class.rule_list_) == str(by_row.rule_list_)


def _noise_free(scores, temperature, generator):
    return torch.softmax(scores / temperature, dim=-1)


@pytest.mark.parametrize("seed", [0, 1])
def test_deterministic_fit_with_integer_weights_equals_fit_on_repeated_rows(seed, monkeypatch):
    """With the training made deterministic (Gumbel noise off, one full batch, so the batch
    order is moot), a whole fit with integer weights is the fit on repeated rows up to float
    rounding (summation order), which a long fit amplifies a little: same standardisation and
    loss curve, parameters within 0.1 standardised units, the same answer on 99.5% of rows."""
    from paperplug_neurules import ordering

    monkeypatch.setattr(ordering, "_gumbel_select", _noise_free)
    X, y, w, X_rep, y_rep = _weighted_and_repeated(seed, n=200)
    fit = lambda *a, **k: NeuRulesClassifier(  # noqa: E731
        n_epochs=150, batch_size=1000, random_state=seed
    ).fit(*a, **k)
    weighted, repeated = fit(X, y, sample_weight=w), fit(X_rep, y_rep)
    np.testing.assert_allclose(weighted.mean_, repeated.mean_)
    np.testing.assert_allclose(weighted.scale_, repeated.scale_)
    np.testing.assert_allclose(weighted.history_["loss"], repeated.history_["loss"], rtol=1e-2)
    for a, b in zip(weighted.network_.parameters(), repeated.network_.parameters(), strict=True):
        torch.testing.assert_close(a.detach(), b.detach(), rtol=0, atol=0.1)
    test = planted_rule_data(n=2000, seed=seed + 50)[0]
    assert np.mean(weighted.predict(test) == repeated.predict(test)) >= 0.995


def _imbalanced(seed: int, n: int = 800):
    """Minority class 1 only in a box where it is 40% of the rows: an unweighted list answers 0
    there, a balanced one answers 1."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 4))
    box = (X[:, 0] > 0.6) & (X[:, 1] < 0.4)
    y = (rng.uniform(size=n) < np.where(box, 0.4, 0.02)).astype(int)
    return X, y


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_balanced_class_weight_raises_minority_recall(seed):
    X, y = _imbalanced(seed)
    X_test, y_test = _imbalanced(seed + 10, n=4000)
    plain = NeuRulesClassifier(n_epochs=60, batch_size=200, random_state=seed).fit(X, y)
    balanced = NeuRulesClassifier(
        n_epochs=60, batch_size=200, class_weight="balanced", random_state=seed
    ).fit(X, y)
    assert recall_score(y_test, plain.predict(X_test)) < 0.3
    assert recall_score(y_test, balanced.predict(X_test)) > 0.7


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"sample_weight": -np.ones(4)}, "[Nn]egative"),
        ({"sample_weight": np.ones(3)}, "sample_weight"),
        ({"sample_weight": np.zeros(4)}, "weight.*zero"),
    ],
)
def test_bad_sample_weight(kwargs, message):
    with pytest.raises(ValueError, match=message):
        NeuRulesClassifier(n_epochs=2).fit(np.eye(4), [0, 1, 0, 1], **kwargs)


def test_bad_class_weight():
    with pytest.raises(ValueError, match="class_weight"):
        NeuRulesClassifier(n_epochs=2, class_weight="equal").fit(np.eye(4), [0, 1, 0, 1])
