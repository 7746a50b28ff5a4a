"""The planted GPT-2 (2 layers, built from a config, trained here for ~10 s): hook capture
equals output_hidden_states, loading by path, PA detection of planted words, grafting."""

import numpy as np
import pytest
import torch
from paperplug_chunking import (
    PopulationAveraging,
    capture_activations,
    grafting_effect,
    hf_hidden_states,
)
from paperplug_chunking.embedded import gpt2_states, planted_stream, planted_words, train_gpt2


@pytest.fixture(scope="module")
def planted():
    words = planted_words(seed=0)
    model = train_gpt2(planted_stream(20000, words, seed=0), steps=200, seed=0)
    test = planted_stream(4096, words, seed=1000)
    return model, test, gpt2_states(model, test.tokens)


def test_hook_capture_equals_hidden_states(planted):
    model, test, states = planted
    ids = torch.as_tensor(test.tokens[:64])[None]
    hooked = capture_activations(model, ids, "transformer.h.0")["transformer.h.0"]
    np.testing.assert_allclose(hooked, states[1, :64], atol=1e-5)


def test_hidden_states_by_path(planted, tmp_path):
    model, test, states = planted
    model.save_pretrained(tmp_path)
    by_path, tokens = hf_hidden_states(str(tmp_path), test.tokens[:64])
    assert tokens is None  # no tokenizer saved
    np.testing.assert_allclose(by_path[1], states[1, :64], atol=1e-5)


def test_pa_detects_every_planted_word(planted):
    """Template from 5 occurrences of a word's last symbol; held-out AUC >= 0.9 per word."""
    _, test, states = planted
    half = len(test.tokens) // 2
    for w, word in enumerate(test.words):
        ends = np.flatnonzero((test.word == w) & (test.position == len(word) - 1))
        pa = PopulationAveraging(seed=w).fit(states[1, :half], ends[ends < half])
        result = pa.evaluate(states[1, half:], ends[ends >= half] - half)
        assert result["auc"] >= 0.9, (w, result)


def test_grafting_pa_template_raises_next_planted_symbol(planted):
    """Graft the template of word w's second-to-last symbol into noise positions: p(word's
    last symbol) rises at >= 80% of them (stated rate; measured 100% on seed 0)."""
    model, test, states = planted
    rises = []
    for w, word in enumerate(test.words):
        j = len(word) - 2
        at = np.flatnonzero((test.word == w) & (test.position == j))
        pa = PopulationAveraging(seed=w).fit(states[1], at)
        noise = np.flatnonzero(test.word[:-1] == -1)
        noise = noise[(noise % 64 > 0) & (test.tokens[noise + 1] != word[j + 1])][:10]
        for p in noise:
            start = p - p % 64
            ids = torch.as_tensor(test.tokens[start : start + 64])[None]
            t = pa.template_
            effect = grafting_effect(model, ids, "transformer.h.0", t.values, mask=t.mask,
                                     position=int(p - start), target=word[j + 1])  # fmt: skip
            rises.append(effect["p_after"] > effect["p_before"])
    assert np.mean(rises) >= 0.8
