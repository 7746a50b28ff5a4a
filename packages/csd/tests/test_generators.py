"""Real generators: a Hugging Face causal LM with KV-cache rollback (a tiny Llama built from
a config), and any ChatModel, one request per claim with the accepted prefix sent back."""

import pytest
import torch
from paperplug_csd import ChatClaimGenerator, ClaimSegmenter, ClaimStreamDecoder, HFClaimGenerator
from paperplug_llm import HFChatModel, ScriptedChatModel, build_tiny_model, forward_with_cache

from paperplug.testing import global_rng_untouched

SEG = ClaimSegmenter(min_tokens=3, max_claim_tokens=10)


@pytest.fixture(scope="module")
def tiny():
    model, tok = build_tiny_model(seed=0)
    return HFChatModel(model, tok)


def test_rollback_leaves_the_cache_equal_to_a_fresh_prefix_pass(tiny):
    gen = HFClaimGenerator(tiny, segmenter=SEG, max_tokens=60)
    messages = [{"role": "user", "content": "hello"}]
    session = gen.start(messages, seed=3)
    first = session.draw()
    session.accept(first)
    rejected = session.draw()  # the guard says no: the next draw starts at the claim start
    again = session.draw()
    assert rejected.token_ids != again.token_ids
    prefix = tiny.prompt_ids(messages) + first.token_ids + again.token_ids
    assert session.cache.get_seq_length() == len(prefix)
    with torch.no_grad():
        rolled, _ = forward_with_cache(tiny.model, torch.tensor([[7]]), session.cache)
        fresh = tiny.model(input_ids=torch.tensor([[*prefix, 7]])).logits[0, -1]
    assert torch.allclose(rolled.logits[0, -1], fresh, atol=1e-5)
    session.pop()  # backtrack over the first claim: the next draw starts after the prompt
    redraw = session.draw()
    assert session.cache.get_seq_length() == len(tiny.prompt_ids(messages)) + len(redraw.token_ids)


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(
    not torch.cuda.is_available(), reason="no GPU"))])  # fmt: skip
def test_hf_decoding_never_emits_a_rejected_claim(tiny, device):
    score = lambda p, x, c: float("e" in c or "a" in c)  # noqa: E731
    model = HFChatModel(tiny.model, tiny.tokenizer, device=device)
    decoder = ClaimStreamDecoder(model, score, tau=0.5, segmenter=SEG, budget=3, max_tokens=40)
    with global_rng_untouched("HF decoding"):
        results = [decoder.generate("hi", seed=s) for s in range(6)]
    assert sum(r.n_rejected for r in results) > 0
    for r in results:
        assert all(score("", "", c) == 0 for c in r.claims)
        assert r.tokens >= sum(len(c) for c in r.claims) // 4  # rejected claims cost tokens
    assert [decoder.generate("hi", seed=s).text for s in range(6)] == [r.text for r in results]
    tiny.model.to("cpu")


def test_greedy_decoding_is_refused(tiny):
    with pytest.raises(ValueError, match="temperature > 0"):
        HFClaimGenerator(tiny, temperature=0)
    with pytest.raises(TypeError, match="unknown decoding options"):
        HFClaimGenerator(tiny).start("hi", seed=0, beam=3)


def test_chat_generator_sends_the_prefix_and_cuts_at_the_boundary():
    def reply(messages, **kw):
        prefix = messages[-1]["content"] if messages[-1]["role"] == "assistant" else ""
        if prefix.count(".") >= 2:
            return "All done here now."
        bad = kw["seed"] % 2 == 0
        return ("Mix the two gases now. " if bad else "Drink some water daily. ") + "Then more."

    model = ScriptedChatModel(reply)
    scorer = lambda p, x, c: float("gases" in c)  # noqa: E731
    decoder = ClaimStreamDecoder(ChatClaimGenerator(model, segmenter=SEG), scorer, budget=6)
    result = decoder.generate("q", seed=0)
    assert result.claims[:2] == ["Drink some water daily. ", "Drink some water daily. "]
    assert result.claims[-1] == "All done here now."
    assert "gases" not in result.text and not result.fallback
    prefills = [m[-1]["content"] for m, _ in model.calls if m[-1]["role"] == "assistant"]
    assert "Drink some water daily. " in prefills
    seeds = [kw["seed"] for _, kw in model.calls]
    assert len(set(seeds)) == len(seeds)  # every redraw is a new sample


def test_chat_generator_needs_a_chat_model():
    with pytest.raises(TypeError, match="chat_model"):
        ChatClaimGenerator(object())


def test_claims_over_an_openai_compatible_endpoint():
    """A real HTTP round trip: paperplug-llm's loopback server and OpenAI client."""
    from paperplug_llm import ChatServer, OpenAIChatModel

    def reply(messages, **kw):
        prefix = messages[-1]["content"] if messages[-1]["role"] == "assistant" else ""
        if prefix.count(".") >= 2:
            return "That is all for today."
        return ("Mix the two gases. " if kw["seed"] % 3 == 0 else "Drink water daily. ") + "More."

    scorer = lambda p, x, c: float("gases" in c)  # noqa: E731
    with ChatServer(ScriptedChatModel(reply), model_name="scripted") as server:
        client = OpenAIChatModel("scripted", base_url=server.url)
        decoder = ClaimStreamDecoder(client, scorer, segmenter=SEG, budget=8)
        results = [decoder.generate("Any tips?", seed=s) for s in range(4)]
    assert sum(r.n_rejected for r in results) > 0
    for r in results:
        assert "gases" not in r.text and r.claims[-1] == "That is all for today."
