"""Continuation scoring over a shared prompt cache equals separate teacher-forced passes."""

import subprocess
import sys

import pytest
import torch
from paperplug_llm import (
    build_tiny_decoder,
    cache_keyword,
    continuation_logprobs,
    crop_cache,
    forward_with_cache,
)

from paperplug.testing import global_rng_untouched


def teacher_forced(model, prompt, cont):
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([prompt + cont])).logits[0]
    logp = torch.log_softmax(logits[len(prompt) - 1 : -1].float(), -1)
    return logp[torch.arange(len(cont)), torch.tensor(cont)].tolist()


@pytest.mark.parametrize("family", ["llama", "qwen2", "gpt2"])
def test_batched_scores_equal_one_pass_per_candidate(family):
    model = build_tiny_decoder(50, family=family, hidden_size=32, causal_lm=True, seed=1)
    prompt = [3, 7, 11, 2]
    candidates = [[5], [9, 1, 4, 4, 8], [6, 6], [1, 2, 3]]
    for batch_size in (1, 3, 16):
        got = continuation_logprobs(model, prompt, candidates, batch_size=batch_size)
        for cont, scores in zip(candidates, got, strict=True):
            assert scores == pytest.approx(teacher_forced(model, prompt, cont), abs=1e-5)


@pytest.mark.parametrize("family", ["llama", "gpt2"])
def test_a_cropped_cache_continues_like_a_fresh_pass(family):
    model = build_tiny_decoder(40, family=family, hidden_size=32, causal_lm=True, seed=2)
    ids = torch.tensor([[4, 9, 1, 7, 3, 5]])
    with torch.no_grad():
        _, cache = forward_with_cache(model, ids)
        cache = crop_cache(cache, 3)  # roll back to after the third token
        assert cache.get_seq_length() == 3
        rolled, _ = forward_with_cache(model, torch.tensor([[8, 2]]), cache)
        fresh = model(input_ids=torch.tensor([[4, 9, 1, 8, 2]])).logits[0, 3:]
    assert torch.allclose(rolled.logits[0], fresh, atol=1e-5)
    assert crop_cache(cache, 0) is None
    with pytest.raises(ValueError, match="cannot crop a cache of 5 positions to 9"):
        crop_cache(cache, 9)


def test_candidates_and_prompt_are_checked():
    model = build_tiny_decoder(20, family="llama", hidden_size=16, causal_lm=True)
    with pytest.raises(ValueError, match=r"candidates\[1\] is empty"):
        continuation_logprobs(model, [1], [[2], []])
    with pytest.raises(ValueError, match="prompt_ids is empty"):
        continuation_logprobs(model, [], [[2]])
    with pytest.raises(TypeError, match="token-id lists"):
        continuation_logprobs(model, [1], "ab")


def test_tiny_decoders_are_seeded_and_leave_the_global_generator_alone():
    with global_rng_untouched("build_tiny_decoder"):
        a = build_tiny_decoder(30, family="qwen2", hidden_size=16, seed=4)
        b = build_tiny_decoder(30, family="qwen2", hidden_size=16, seed=4)
    assert all(torch.equal(x, y) for x, y in zip(a.parameters(), b.parameters(), strict=True))
    assert cache_keyword(a) in ("cache", "past_key_values")
    with pytest.raises(ValueError, match="family"):
        build_tiny_decoder(30, family="bert")


def test_import_is_lazy():
    code = "import sys, paperplug_llm; print([m for m in ('torch', 'transformers') if m in sys.modules])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
