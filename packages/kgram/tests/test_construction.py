"""The construction equals the estimator to float64 precision; its parts do what they claim."""

import itertools

import numpy as np
import pytest
import torch
from paperplug_kgram import (
    KGramConfig,
    KGramForCausalLM,
    KGramTransformer,
    code_margin,
    conditional_kgram,
    verify,
)

CASES = [(S, k) for S, k in itertools.product([2, 3, 4, 6], [1, 2, 3, 4]) if S**k <= 1296]


@pytest.mark.parametrize(("S", "k"), CASES)
def test_construction_error_is_below_1e_8(S, k):
    rng = np.random.default_rng(S * 7 + k)
    model = KGramTransformer(S, k, max_len=256)
    assert verify(model, rng.integers(0, S, size=(2, 256))) <= 1e-8
    # low-entropy sequences: many matches per context
    chain = np.repeat(rng.integers(0, S, size=(2, 64)), 4, axis=1)
    assert verify(model, chain) <= 1e-8


@pytest.mark.parametrize("alpha", [0.1, 1.0])
def test_the_sink_gives_the_add_alpha_bayes_estimate(alpha):
    model = KGramTransformer(3, 2, alpha=alpha, max_len=200)
    x = np.random.default_rng(1).integers(0, 3, size=(2, 200))
    assert verify(model, x) <= 1e-8


def test_layer_one_weights_decay_by_the_base_and_the_width_is_4s_plus_6():
    model = KGramTransformer(3, 2, base=5.0, max_len=20)
    model(torch.zeros(1, 10, dtype=torch.long))
    w = model.attention_maps[0][0, 5, :]  # token position 6 (BOS at 0): keys 6, 5, 4
    assert w[6].item() / w[5].item() == pytest.approx(5.0) and w[5].item() / w[
        4
    ].item() == pytest.approx(5.0)
    assert w[:4].sum() == 0 and w[7:].sum() == 0
    assert model.layout.width == 18 and model.mlp_width == 3 * 2**3
    assert code_margin(4.0, 1) == pytest.approx(2 * (2 / 3) ** 2)


def test_layer_two_attends_to_the_matches():
    x = torch.tensor([[0, 1, 0, 2, 0, 1, 2, 0]])
    model = KGramTransformer(3, 1, max_len=16)
    model(x)
    w = model.attention_maps[1][
        0, 7
    ]  # query: last token 0; earlier 0s at 0, 2, 4 → keys 1, 3, 5 (+1 for BOS)
    assert w[[2, 4, 6]].sum().item() == pytest.approx(1.0, abs=1e-12)


def test_float32_is_not_enough_at_higher_order():
    x = np.random.default_rng(0).integers(0, 2, size=(1, 200))
    exact = KGramTransformer(2, 4, max_len=200)
    single = KGramTransformer(2, 4, max_len=200, dtype=torch.float32)
    assert verify(exact, x) <= 1e-8 < verify(single, x)


def test_hugging_face_round_trip(tmp_path):
    model = KGramForCausalLM(KGramConfig(vocab_size=3, k=2, max_len=64))
    model.save_pretrained(tmp_path)
    loaded = KGramForCausalLM.from_pretrained(tmp_path)
    x = torch.as_tensor(np.random.default_rng(2).integers(0, 3, size=(2, 50)))
    probs = loaded(input_ids=x).logits.exp().detach().numpy()
    assert np.abs(probs - conditional_kgram(x.numpy(), 3, 2)).max() <= 1e-8
