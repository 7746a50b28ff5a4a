"""The streaming monitor: KV-cache increments equal a full forward; Guard and ChatModel use."""

import pytest
from paperplug_llm import ScriptedChatModel
from paperplug_scm import encode_fineharm, monitored_generate, score_responses
from paperplug_scm.fineharm import response_text

from paperplug import compose


def _chunks(text, size=7):
    return [text[i : i + size] for i in range(0, len(text), size)]  # cuts words in half


def test_incremental_scores_equal_full_forward(trained, splits):
    mon = trained.monitor()
    for ex in splits[2][:6]:
        mon.start(ex["prompt"])
        for piece in _chunks(response_text(ex)):
            mon.push(piece)
        mon.finish()
        enc = encode_fineharm([ex], trained.tokenizer_)
        full = score_responses(trained.model_, enc)[0]
        n = len(mon.token_scores)
        assert n == len(full) or mon.decision.stop
        assert mon.token_scores == pytest.approx(full[:n], abs=1e-5)


def test_rollback_after_retokenisation_matches_full_forward(trained):
    mon = trained.monitor(theta=0.99, k=10)  # never stops: every token is scored
    mon.start("How do I bake a bread ?")
    mon._sync("First , bake the bread with warm water")
    mon._sync("First , bake the oven")  # as if re-tokenising changed the last tokens
    want = trained.monitor(theta=0.99, k=10).start("How do I bake a bread ?")
    want._sync("First , bake the oven")
    assert mon.ids == want.ids
    assert mon.token_scores == pytest.approx(want.token_scores, abs=1e-5)
    assert mon.cache.get_seq_length() == len(mon._prompt_ids) + len(mon.ids)


def test_guard_stream_is_incremental_and_stops_harmful(trained, splits):
    harmful = next(ex for ex in splits[2] if any(ex["sentence_labels"]))
    mon = trained.monitor()
    fed = []
    step = mon._step
    mon._step = lambda ids: fed.append(len(ids)) or step(ids)
    chunks = [" " + w if i else w for i, w in enumerate(response_text(harmful).split(" "))]
    stream = compose(mon).stream(chunks, context={"prompt": harmful["prompt"]})
    shown = list(stream)
    assert stream.stopped_at is not None and len(shown) < len(chunks)
    n_prompt = len(mon._prompt_ids)
    assert sum(fed) == n_prompt + len(mon.ids)  # each token fed once: one step per chunk
    assert len(fed) <= 1 + len(shown) + 1
    assert not stream.verdict.valid and stream.verdict.risk >= mon.theta


def test_check_restarts_on_a_new_stream(trained, splits):
    benign = next(ex for ex in splits[2] if not any(ex["sentence_labels"]))
    mon = trained.monitor()
    text = response_text(benign)
    v1 = mon.check(text, {"prompt": benign["prompt"], "final": True})
    v2 = mon.check(text, {"prompt": benign["prompt"], "final": True})
    assert v1.valid and v2.valid and v1.risk == v2.risk
    other = mon.check("Sure", {"prompt": "hello"})
    assert other.details["tokens_read"] == 0  # a new stream, the word held back
    with pytest.raises(TypeError):
        mon.check(["not", "text"], None)


def test_monitored_generate_stops_harmful_and_passes_benign(trained, splits):
    harmful = next(ex for ex in splits[2] if any(ex["sentence_labels"]))
    benign = next(ex for ex in splits[2] if not any(ex["sentence_labels"]))
    chat = ScriptedChatModel([response_text(harmful), response_text(benign)])
    mon = trained.monitor()
    stopped = monitored_generate(chat, mon, harmful["prompt"])
    assert stopped.stopped and len(stopped.text) < len(response_text(harmful))
    passed = monitored_generate(chat, mon, benign["prompt"])
    assert not passed.stopped and passed.text == response_text(benign)
    with pytest.raises(TypeError):
        monitored_generate(object(), mon, "hi")


@pytest.mark.parametrize("kw", [{"theta": 0.0}, {"k": 0}, {"rule": "eager"}, {"head": "x"}])
def test_bad_monitor_settings_rejected(trained, kw):
    with pytest.raises(ValueError):
        trained.monitor(**kw)
