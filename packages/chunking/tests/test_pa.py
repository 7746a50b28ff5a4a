"""PA: template, threshold and sweep exact on small cases; planted subpopulations detected;
nothing found when there is nothing to find."""

import numpy as np
import pytest
from paperplug_chunking import (
    TAUS,
    PopulationAveraging,
    detection_rates,
    pa_deviation,
    pa_layers,
    pa_template,
    sweep_auc,
)


def test_template_by_hand():
    H = np.array([[1.0, 0.0, 5.0], [1.2, 3.0, 5.0], [0.8, -3.0, 5.0], [9.0, 9.0, 9.0]])
    t = pa_template(H, [0, 1, 2], tau=0.5)
    assert t.mask.tolist() == [True, False, True]  # neuron 1 deviates by 3 > tau
    np.testing.assert_allclose(t.values, [1.0, 5.0])
    # training MSEs over the subpopulation: 0, 0.04/2, 0.04/2 -> threshold 0.02
    assert t.threshold == pytest.approx(0.02)
    np.testing.assert_allclose(pa_deviation(H, t), [0.0, 0.02, 0.02, (64 + 16) / 2])


def test_taus_are_the_papers():
    assert TAUS[:5] == (100.0, 30.0, 20.0, 10.0, 3.0)
    assert len(TAUS) == 40 and TAUS[-1] == pytest.approx(0.8**34)


def test_rates_and_sweep_auc_closed_form():
    r = detection_rates(np.array([1, 1, 0, 0, 1], bool), np.array([1, 0, 0, 0, 1], bool))
    assert (r["tpr"], r["fpr"]) == (1.0, 1 / 3)
    assert r["balanced_accuracy"] == pytest.approx((1 + 2 / 3) / 2)
    assert sweep_auc([0.5], [1.0]) == pytest.approx(0.75)
    assert sweep_auc([], []) == pytest.approx(0.5)


def planted(seed, n=2000, d=40, k=8, rate=0.03, spread=0.05):
    """Gaussian activity; at concept positions neurons 0..k-1 take a fixed pattern."""
    rng = np.random.default_rng(seed)
    H = rng.normal(size=(n, d))
    pos = np.flatnonzero(rng.random(n) < rate)
    H[pos, :k] = 2.0 + spread * rng.normal(size=(len(pos), k))
    return H, pos


@pytest.mark.parametrize(
    "setting", [{}, {"d": 100, "k": 20}, {"spread": 0.3}, {"d": 200, "k": 20, "spread": 0.5}]
)
def test_planted_subpopulation_found_over_seeds(setting):
    """5 training occurrences; on held-out data AUC >= 0.98, TPR >= 0.9 at FPR <= 0.05 with
    the threshold set on the fit sequence's negatives (issue 35: the paper's max-of-5
    threshold gave TPR 0.09–0.64 here), on each of 5 seeds; in the first setting the chosen
    subpopulation lies in the planted one."""
    for seed in range(5):
        H, pos = planted(seed, **setting)
        Ht, post = planted(seed + 100, **setting)
        pa = PopulationAveraging(seed=seed).fit(H, pos)
        if not setting:  # wider, noisier settings also keep a few noise neurons within τ
            assert set(np.flatnonzero(pa.template_.mask)) <= set(range(8))
        r = pa.evaluate(Ht, post)
        assert r["auc"] >= 0.98 and r["fpr"] <= 0.05 and r["tpr"] >= 0.9, (seed, r)


def test_the_papers_threshold_is_kept_and_the_default_holds_its_fpr():
    H, pos = planted(0)
    paper = PopulationAveraging(threshold="max-train").fit(H, pos)
    t = paper.template_
    train = H[paper.train_positions_][:, t.mask]
    assert t.threshold == pytest.approx(((train - t.values) ** 2).mean(1).max())
    ours = PopulationAveraging(fpr=0.02).fit(H, pos)
    negatives = np.setdiff1d(np.arange(len(H)), pos)
    assert ours.predict(H)[negatives].mean() <= 0.02
    with pytest.raises(ValueError, match="threshold must be one of"):
        PopulationAveraging(threshold="loo").fit(H, pos)


def test_balanced_accuracy_not_plain_accuracy():
    """A weak, rare concept (3%), the paper's threshold (its FPR varies with τ): the τ that
    plain accuracy would pick has a lower balanced accuracy than PA's choice, on 3 seeds."""
    for seed in range(3):
        rng = np.random.default_rng(seed)
        H = rng.normal(size=(2000, 40))
        pos = np.flatnonzero(rng.random(2000) < 0.03)
        H[pos, :8] = 1.0 + 0.8 * rng.normal(size=(len(pos), 8))
        pa = PopulationAveraging(seed=0, threshold="max-train").fit(H, pos)
        chosen = next(r for r in pa.sweep_ if r["tau"] == pa.template_.tau)
        by_accuracy = max(pa.sweep_, key=lambda r: r["accuracy"])
        assert by_accuracy["balanced_accuracy"] < chosen["balanced_accuracy"]


def test_nothing_found_on_noise():
    rng = np.random.default_rng(0)
    H = rng.normal(size=(1500, 30))
    pos = np.arange(10, 1500, 50)
    pa = PopulationAveraging(seed=0).fit(H[:750], pos[pos < 750])
    r = pa.evaluate(H[750:], pos[pos >= 750] - 750)
    assert 0.3 < r["auc"] < 0.7


def test_offset_shifts_the_concept():
    H, pos = planted(1)
    pos = pos[(pos > 2) & (pos < len(H) - 3)]
    pa = PopulationAveraging(offset=-1, seed=0).fit(np.roll(H, -1, axis=0), pos)
    assert pa.evaluate(np.roll(H, -1, axis=0), pos)["auc"] >= 0.95


def test_empty_subpopulation_detects_nothing():
    t = pa_template(np.array([[0.0, 0.0], [1.0, 1.0]]), [0, 1], tau=0.1)
    assert t.n_neurons == 0 and np.isinf(pa_deviation(np.zeros((3, 2)), t)).all()


def test_bad_inputs():
    H = np.zeros((20, 3))
    with pytest.raises(ValueError, match="positions"):
        PopulationAveraging().fit(H, [])
    with pytest.raises(ValueError, match="positions"):
        PopulationAveraging().fit(H, [0, 25])
    with pytest.raises(TypeError, match="positions"):
        PopulationAveraging().fit(H, [0.5, 1.0])
    with pytest.raises(ValueError, match="n_train"):
        PopulationAveraging(n_train=5).fit(H, [1, 2, 3])
    with pytest.raises(ValueError, match="offset"):
        PopulationAveraging(offset=3).fit(H, [1, 2, 3, 4, 5])
    with pytest.raises(ValueError, match="tau"):
        pa_template(H, [1, 2], tau=0)
    with pytest.raises(ValueError, match="H must be 2-dimensional"):
        pa_template(np.zeros(5), [1], tau=1)
    with pytest.raises(ValueError, match=r"taus\[1\] must be > 0"):
        PopulationAveraging(taus=[1.0, -1.0]).fit(H, [1, 2, 3, 4, 5])


def test_pa_layers_finds_the_informative_layer():
    """Three 'layers': noise, the planted concept, noise; only layer 1 reaches AUC >= 0.99."""
    H, pos = planted(0)
    Ht, post = planted(100)
    rng = np.random.default_rng(5)
    states = np.stack([rng.normal(size=H.shape), H, rng.normal(size=H.shape)])
    tests = np.stack([rng.normal(size=Ht.shape), Ht, rng.normal(size=Ht.shape)])
    rows = pa_layers(states, pos, tests, post)
    assert [r["layer"] for r in rows] == [0, 1, 2]
    assert rows[1]["test_auc"] >= 0.99 and max(rows[0]["test_auc"], rows[2]["test_auc"]) < 0.8
