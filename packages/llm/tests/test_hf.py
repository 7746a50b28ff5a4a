"""The Hugging Face backend on a tiny Llama built from a config, loaded by path."""

import math

import pytest
import torch
from paperplug_llm import ChatServer, HFChatModel, OpenAIChatModel, get_chat_model
from paperplug_llm.hf import sample_next

MSGS = [{"role": "user", "content": "héllo wörld"}]


def test_decoding_loop_equals_transformers_generate(tiny):
    done = tiny.complete(MSGS, max_tokens=12)
    ids = tiny.prompt_ids(MSGS)
    ref = tiny.model.generate(torch.tensor([ids]), max_new_tokens=12, do_sample=False)
    assert done.token_ids == ref[0, len(ids) :].tolist()
    assert done.usage == {
        "prompt_tokens": len(ids),
        "completion_tokens": 12,
        "total_tokens": len(ids) + 12,
    }
    assert done.finish_reason == "length"


def test_logprobs_equal_a_teacher_forced_forward_pass(tiny):
    done = tiny.complete(MSGS, max_tokens=10)
    scored = tiny.token_logprobs(MSGS, done.token_ids)
    assert [t for t, _ in scored] == done.tokens
    assert max(abs(a - b) for (_, a), b in zip(scored, done.logprobs, strict=True)) < 1e-4
    assert all(lp <= 0 for lp in done.logprobs)


def test_stream_equals_complete_and_greedy_is_deterministic(tiny):
    pieces = list(tiny.stream(MSGS))
    assert len(pieces) > 1 and "".join(pieces) == tiny.chat(MSGS) == tiny.complete(MSGS).text


def test_seeded_sampling_is_reproducible(tiny):
    a = tiny.complete(MSGS, temperature=1.0, seed=3).token_ids
    assert a == tiny.complete(MSGS, temperature=1.0, seed=3).token_ids
    assert a != tiny.complete(MSGS, temperature=1.0, seed=4).token_ids


def test_sampling_filters_by_closed_form():
    logits = torch.log(torch.tensor([0.5, 0.3, 0.15, 0.05]))
    gen = torch.Generator().manual_seed(0)
    draws = {sample_next(logits, temperature=1.0, top_p=0.7, generator=gen) for _ in range(200)}
    assert draws == {0, 1}  # the smallest head whose mass reaches 0.7
    draws = {sample_next(logits, temperature=1.0, top_k=1, generator=gen) for _ in range(50)}
    assert draws == {0}
    assert sample_next(logits, temperature=0) == 0


def test_stop_strings_cut_the_reply(tiny):
    full = tiny.chat(MSGS)
    stop = full[3:5]
    cut = tiny.complete(MSGS, stop=[stop])
    assert cut.text == full[: full.find(stop)] and cut.finish_reason == "stop"
    assert "".join(tiny.stream(MSGS, stop=stop)) == cut.text


def test_hf_spec_and_served_model_agree(tiny, tiny_path):
    model = get_chat_model(f"hf:{tiny_path}", max_tokens=12)
    assert isinstance(model, HFChatModel) and model.chat(MSGS) == tiny.chat(MSGS)
    with ChatServer(model) as server:
        remote = OpenAIChatModel("tiny", server.url, timeout=30)
        assert remote.chat(MSGS) == tiny.chat(MSGS)
        assert "".join(remote.stream(MSGS)) == tiny.chat(MSGS)
        assert remote.chat(MSGS, max_tokens=3) == tiny.chat(MSGS, max_tokens=3)


def test_bad_inputs_are_rejected_and_messages_untouched(tiny):
    msgs = [{"role": "user", "content": "x"}]
    before = [dict(m) for m in msgs]
    with pytest.raises(TypeError, match="unknown decoding options"):
        tiny.chat(msgs, max_new_tokens=3)
    with pytest.raises(ValueError, match="temperature"):
        tiny.chat(msgs, temperature=-1)
    with pytest.raises(ValueError, match="empty"):
        tiny.chat([])
    with pytest.raises(TypeError, match="content"):
        tiny.chat([{"role": "user", "content": 3}])
    with pytest.raises(TypeError, match="tokenizer"):
        HFChatModel(tiny.model)
    with pytest.raises(ValueError, match="continuation"):
        tiny.token_logprobs(msgs, [])
    assert msgs == before


def test_continuation_logprobs_follow_the_chain_rule(tiny):
    # log p(ab | prompt) = log p(a | prompt) + log p(b | prompt, a), each from its own forward pass
    prompt = tiny.prompt_ids(MSGS)
    a, b = tiny.encode("a")[0], tiny.encode("b")[0]
    with torch.no_grad():
        first = torch.log_softmax(tiny.model(input_ids=torch.tensor([prompt])).logits[0, -1], -1)[a]
        second = torch.log_softmax(
            tiny.model(input_ids=torch.tensor([[*prompt, a]])).logits[0, -1], -1
        )[b]
    (scored,) = tiny.continuation_logprobs(MSGS, ["ab"])
    assert math.isclose(sum(scored), float(first + second), abs_tol=1e-4)


def test_a_chat_template_given_leaves_the_callers_tokenizer_alone(tiny):
    # the override is used for the prompt; the tokenizer passed in keeps its own template
    own = tiny.tokenizer.chat_template
    plain = "{% for m in messages %}{{ m['content'] }}|{% endfor %}"
    model = HFChatModel(tiny.model, tiny.tokenizer, chat_template=plain)
    assert tiny.tokenizer.chat_template == own
    assert model.prompt_ids(MSGS) == tiny.encode("héllo wörld|")
    assert tiny.prompt_ids(MSGS) != model.prompt_ids(MSGS)
    with pytest.raises(ValueError, match="dtype"):  # a loaded model is not converted silently
        HFChatModel(tiny.model, tiny.tokenizer, dtype=torch.float16)
