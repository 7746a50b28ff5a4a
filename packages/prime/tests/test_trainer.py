"""The trainer on digits: the NELBO learns far below the uniform bits, samples look like
digits to a classifier, checkpoints and seeds reproduce, bad inputs are named."""

import math

import numpy as np
import pytest
from paperplug_prime import PrimeMDM
from paperplug_prime.embedded import digit_classifier, digit_tokens, sample_quality

from paperplug.checks import NotFittedError


@pytest.fixture(scope="module")
def trained():
    Xtr, Xte, ytr, _ = digit_tokens(0)
    model = PrimeMDM(ell=2, steps=600, progress=False).fit(Xtr)
    return model, Xtr, Xte, digit_classifier(Xtr, ytr)


def test_the_nelbo_is_far_below_the_uniform_bits(trained):
    model, _, Xte, _ = trained
    bits = model.nelbo(Xte, n_t=16)
    assert bits < 0.75 * math.log2(17)  # uniform: 4.09 bits per pixel; measured ≈ 2.5 here
    assert model.history_["loss_bits"][-1] < model.history_["loss_bits"][0]


def test_samples_look_more_like_digits_than_shuffled_pixels(trained):
    model, _, _, clf = trained
    for seed in range(3):
        samples, idle = model.sample(100, nfe=32, seed=seed)
        shuffled = np.random.default_rng(seed).permuted(samples, axis=1)
        # measured after 600 steps: 0.69 against 0.61 (seed 0)
        assert sample_quality(clf, samples)[0] > sample_quality(clf, shuffled)[0] + 0.03
        assert 0 <= idle < 0.1


def test_save_load_and_seeds_reproduce(trained, tmp_path):
    model, _, Xte, _ = trained
    again = PrimeMDM.load(model.save(tmp_path / "ckpt"))
    assert again.nelbo(Xte[:50], n_t=4) == model.nelbo(Xte[:50], n_t=4)
    assert np.array_equal(again.sample(5, nfe=8, seed=2)[0], model.sample(5, nfe=8, seed=2)[0])
    a = PrimeMDM(ell=3, steps=5, progress=False, seed=4).fit(Xte[:40])
    b = PrimeMDM(ell=3, steps=5, progress=False, seed=4).fit(Xte[:40])
    assert a.nelbo(Xte[:20], n_t=2) == b.nelbo(Xte[:20], n_t=2)


def test_transformer_backbone_and_any_vocabulary():
    x = np.random.default_rng(0).integers(0, 300, size=(30, 12))  # a larger vocabulary
    model = PrimeMDM(ell=3, backbone="transformer", hidden=32, steps=3, progress=False).fit(x)
    assert model.sub_.base == 7 and model.sample(2, nfe=4)[0].max() < 300


def test_bad_inputs_are_named(trained):
    model, _, Xte, _ = trained
    with pytest.raises(ValueError, match="tokens must have sequences of length 64"):
        model.nelbo(Xte[:, :10])
    with pytest.raises(ValueError, match=r"tokens must lie in \[0, 17\)"):
        model.nelbo(Xte + 20)
    with pytest.raises(ValueError, match="tokens must be >= 0"):
        model.nelbo(Xte - 1)
    with pytest.raises(ValueError, match="n_t must be >= 1"):  # issue 33: it returned nan
        model.nelbo(Xte, n_t=0)
    with pytest.raises(ValueError, match="tokens must be 2-dimensional"):
        PrimeMDM(progress=False).fit(np.arange(5))
    with pytest.raises(TypeError, match="tokens must hold integers"):
        PrimeMDM(progress=False).fit(np.full((3, 4), 0.5))
    with pytest.raises(ValueError, match="ell must be >= 1"):
        PrimeMDM(ell=0, steps=1, progress=False).fit(Xte[:3])
    with pytest.raises(ValueError, match="backbone must be one of"):
        PrimeMDM(backbone="rnn", steps=1, progress=False).fit(Xte[:3])
    with pytest.raises(ValueError, match="hidden must be a multiple of heads"):
        PrimeMDM(backbone="transformer", hidden=30, steps=1, progress=False).fit(Xte[:3])
    with pytest.raises(NotFittedError):
        PrimeMDM().sample(2)
    with pytest.raises(NotFittedError):
        PrimeMDM().nelbo(Xte)
