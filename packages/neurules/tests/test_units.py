"""issue 48: a rule list is read in the user's units. The same data in other units (each
feature x·s + b, s > 0: metres for kilometres, an offset) gives the same rule list with the
thresholds mapped, on data the package did not generate, over several seeds."""

import numpy as np
import pytest
from paperplug_neurules import NeuRulesClassifier
from sklearn.datasets import load_breast_cancer, load_wine


def _in_other_units(X, seed):
    """Each feature scaled by 10^-3 .. 10^3 and shifted by N(0, 100²): kilometres to
    millimetres, an offset. (Before the grid, breast cancer at seed 1 gave 2.6% other
    predictions; an offset of ~10⁷ spreads would leave the new data only ~9 exact digits,
    a rounding no method can undo.)"""
    rng = np.random.default_rng(seed)
    scale = 10.0 ** rng.uniform(-3, 3, X.shape[1])
    shift = rng.normal(size=X.shape[1]) * 100
    return X * scale + shift, scale, shift


@pytest.mark.parametrize("load", [load_wine, load_breast_cancer], ids=["wine", "breast_cancer"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_same_data_in_other_units_gives_the_same_rules_with_mapped_thresholds(load, seed):
    X, y = load(return_X_y=True)
    X2, scale, shift = _in_other_units(X, seed)
    a = NeuRulesClassifier(n_epochs=15, random_state=seed).fit(X, y)
    b = NeuRulesClassifier(n_epochs=15, random_state=seed).fit(X2, y)
    assert np.array_equal(a.predict(X), b.predict(X2))
    assert np.array_equal(a.rule_list_.decide(X), b.rule_list_.decide(X2))
    assert len(a.rules_) == len(b.rules_) >= 2
    for ra, rb in zip(a.rules_, b.rules_, strict=True):
        assert ra.label == rb.label and ra.proba == rb.proba and ra.support == rb.support
        assert [c.feature for c in ra.conditions] == [c.feature for c in rb.conditions]
        for ca, cb in zip(ra.conditions, rb.conditions, strict=True):
            f = ca.feature
            assert np.array_equal(ca.holds(X), cb.holds(X2))  # each condition on every row
            # a threshold is the shortest decimal between the same two training values
            # (readable_threshold): mapped, it lies in the same gap of the other units' data
            for mine, theirs in ((ca.low, cb.low), (ca.high, cb.high)):
                if np.isinf(mine):
                    assert theirs == mine
                    continue
                mapped = mine * scale[f] + shift[f]
                below = X2[X2[:, f] < min(mapped, theirs), f].max(initial=-np.inf)
                above = X2[X2[:, f] > max(mapped, theirs), f].min(initial=np.inf)
                between = (X2[:, f] >= min(mapped, theirs)) & (X2[:, f] <= max(mapped, theirs))
                assert below < theirs < above and not between.any(), (mine, theirs, mapped)
