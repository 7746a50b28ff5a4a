"""The streaming monitor: KV-cached increments equal a full pass; the guard's end-of-stream
check and hold-back; the prompt through `guard.wrap`; one session per conversation."""

import pytest
from paperplug_llm import ScriptedChatModel
from paperplug_scm import (
    delay_k_stop,
    encode_fineharm,
    monitored_generate,
    response_text,
    score_responses,
)

from paperplug import compose


def _words(text):
    """A reply as an LLM streams it: words with their leading space."""
    return [" " + w if i else w for i, w in enumerate(text.split(" "))]


def _full(trained, ex):
    """P(harmful) of every response token in one full forward with the prompt."""
    return score_responses(trained.model_, encode_fineharm([ex], trained.tokenizer_))[0]


def _stop(trained, scores, window=None):
    return delay_k_stop(scores, trained.theta_, trained.k_, window)


def test_incremental_scores_equal_a_full_pass(trained, splits):
    mon = trained.monitor(theta=1.0, k=10**6, window=None)  # never stops: every token is scored
    for ex in splits[2][:8]:
        session = mon.start(ex["prompt"])
        text = response_text(ex)
        for i in range(0, len(text), 7):  # cuts words in half
            session.push(text[i : i + 7])
        session.finish()
        assert session.ids == trained.tokenizer_(text, add_special_tokens=False)["input_ids"]
        assert session.token_scores == pytest.approx(_full(trained, ex), abs=1e-5)


@pytest.mark.parametrize("window", [None, 3])
def test_guard_stream_stops_where_the_offline_rule_does(trained, splits, window):
    mon = trained.monitor(window=window)
    guard = compose(mon)
    stops = 0
    for ex in splits[2][:20]:
        want = _stop(trained, _full(trained, ex), window)
        stream = guard.stream(_words(response_text(ex)), context={"prompt": ex["prompt"]})
        shown = "".join(stream)
        assert (stream.stopped_at is not None) == (want is not None)
        if want is None:
            assert shown == response_text(ex)
        else:
            stops += 1
            assert stream.verdict.verdicts[0][1].details["stop_index"] == want
            assert len(shown) < len(response_text(ex))
    assert stops > 0


def _harmful_word_last(trained, splits):
    """A harmful test reply cut right after the word holding the token at which the rule
    fires on a full pass: only its last word makes it harmful."""
    for ex in splits[2]:
        stop = _stop(trained, _full(trained, ex))
        if stop is None:
            continue
        text = response_text(ex)
        enc = trained.tokenizer_(text, add_special_tokens=False, return_offsets_mapping=True)
        end = text.find(" ", enc["offset_mapping"][stop][1])
        cut = text if end < 0 else text[:end]
        if " " in cut:
            return ex, cut
    raise AssertionError("the trained monitor stopped no harmful test reply")


def test_a_harmful_last_word_is_stopped_at_the_end_and_never_shown(trained, splits):
    ex, text = _harmful_word_last(trained, splits)
    words = _words(text)
    stream = compose(trained.monitor()).stream(words, context={"prompt": ex["prompt"]})
    shown = "".join(stream)
    assert stream.stopped_at == len(words)  # only the final check saw the last word
    assert shown == "".join(words[:-1])  # every word before it, never the last one
    assert not stream.verdict.valid and stream.verdict.risk >= trained.theta_
    mid = trained.monitor().check(text, {"prompt": ex["prompt"]})  # not final: word held back
    assert mid.valid and mid.details["judged"] == len(text) - len(words[-1])


def test_each_word_is_shown_once_judged(trained, splits):
    benign = next(ex for ex in splits[2] if _stop(trained, _full(trained, ex)) is None)
    words = _words(response_text(benign))
    stream = compose(trained.monitor()).stream(words, context={"prompt": benign["prompt"]})
    assert list(stream) == words  # word i is shown when word i + 1 arrives, the last at the end
    assert stream.verdict.verdicts[0][1].details["judged"] == len(response_text(benign))


def test_wrap_passes_the_prompt_to_the_monitor(trained, splits):
    test = splits[2][:16]
    mon = trained.monitor()
    chat = compose(mon).wrap(ScriptedChatModel([response_text(ex) for ex in test]))
    for ex in test:
        reply = chat.chat([{"role": "user", "content": ex["prompt"]}])
        session, full = mon.session(chat.conversation_id), _full(trained, ex)
        assert session.prompt == ex["prompt"]
        assert session.token_scores == pytest.approx(full[: len(session.token_scores)], abs=1e-5)
        stopped = _stop(trained, full) is not None
        assert chat.last_verdict.valid == (not stopped)
        assert (reply == response_text(ex)) == (not stopped)
    # the conversation alone (no "prompt" key) gives the same reading
    ex = test[0]
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": ex["prompt"]},
    ]
    a = trained.monitor().check(response_text(ex), {"messages": messages, "final": True})
    b = trained.monitor().check(response_text(ex), {"prompt": ex["prompt"], "final": True})
    assert a.details == b.details


@pytest.mark.parametrize("key", ["conversation_id", "reply_id"])
def test_interleaved_conversations_match_separate_runs(trained, splits, monkeypatch, key):
    # reply_id: two replies of one conversation streamed at once (paperplug-gateway's case)
    harmful = next(ex for ex in splits[2] if _stop(trained, _full(trained, ex)) is not None)
    benign = next(ex for ex in splits[2] if _stop(trained, _full(trained, ex)) is None)

    def run(mon, conversations):
        """Check each conversation's growing reply, taking turns word by word."""
        verdicts = {cid: [] for cid in conversations}
        streams = {cid: (ex, _words(response_text(ex))) for cid, ex in conversations.items()}
        for i in range(max(len(w) for _, w in streams.values()) + 1):
            for cid, (ex, words) in streams.items():
                if i <= len(words):
                    ctx = {"prompt": ex["prompt"], "conversation_id": "one", key: cid,
                           "final": i == len(words)}  # fmt: skip
                    v = mon.check("".join(words[: i + 1]), ctx)
                    verdicts[cid].append((v.valid, v.details["tokens_read"], v.details["judged"]))
        return verdicts

    alone = {**run(trained.monitor(), {"a": harmful}), **run(trained.monitor(), {"b": benign})}
    fed = []
    mon = trained.monitor()
    step = mon.model.hidden
    monkeypatch.setattr(
        mon.model, "hidden", lambda ids, **kw: fed.append(ids.shape[1]) or step(ids, **kw)
    )
    together = run(mon, {"a": harmful, "b": benign})
    assert together == alone
    assert not together["a"][-1][0] and together["b"][-1][0]
    read = sum(len(mon.session(c).prompt_ids) + len(mon.session(c).ids) for c in "ab")
    assert sum(fed) == read  # every token fed once: nothing recomputed when streams alternate


def test_interleaved_guard_streams(trained, splits):
    a, b = splits[2][0], splits[2][1]
    mon = trained.monitor()
    guard = compose(mon)
    streams = [
        iter(
            guard.stream(
                _words(response_text(ex)), context={"prompt": ex["prompt"], "conversation_id": i}
            )
        )
        for i, ex in enumerate((a, b))
    ]
    shown = [[], []]
    live = [True, True]
    while any(live):
        for i, it in enumerate(streams):
            if live[i]:
                piece = next(it, None)
                live[i] = piece is not None
                shown[i] += [piece] if piece is not None else []
    for i, ex in enumerate((a, b)):
        alone = compose(trained.monitor()).stream(
            _words(response_text(ex)), context={"prompt": ex["prompt"]}
        )
        assert shown[i] == list(alone)


def test_least_recent_conversation_is_dropped_and_restarts_correctly(trained, splits):
    mon = trained.monitor(max_sessions=2)
    exs = splits[2][:3]
    for cid, ex in enumerate(exs):
        mon.check(response_text(ex)[:20], {"prompt": ex["prompt"], "conversation_id": cid})
    assert list(mon._sessions) == [1, 2]
    v = mon.check(
        response_text(exs[0]), {"prompt": exs[0]["prompt"], "conversation_id": 0, "final": True}
    )
    want = trained.monitor().check(
        response_text(exs[0]), {"prompt": exs[0]["prompt"], "final": True}
    )
    assert v.details == want.details


def test_check_starts_a_new_stream_when_the_text_does_not_continue(trained, splits):
    benign = next(ex for ex in splits[2] if not any(ex["sentence_labels"]))
    mon = trained.monitor()
    text = response_text(benign)
    v1 = mon.check(text, {"prompt": benign["prompt"], "final": True})
    v2 = mon.check(text, {"prompt": benign["prompt"], "final": True})  # the same end again
    assert v1.details == v2.details
    longer = mon.check(text + " More words", {"prompt": benign["prompt"]})  # ended: restarts
    assert longer.details["judged"] == len(text + " More")
    other = mon.check("Sure", {"prompt": "hello"})
    assert other.details["tokens_read"] == 0 and other.details["judged"] == 0
    with pytest.raises(TypeError):
        mon.check(["not", "text"], None)
    with pytest.raises(TypeError, match="prompt"):
        mon.check("text", {"prompt": 3})


def test_monitored_generate_shows_only_judged_text(trained, splits):
    ex, text = _harmful_word_last(trained, splits)
    benign = next(e for e in splits[2] if _stop(trained, _full(trained, e)) is None)
    chat = ScriptedChatModel([text, response_text(benign)])
    mon = trained.monitor()
    stopped = monitored_generate(chat, mon, ex["prompt"], conversation_id="x")
    assert stopped.stopped and stopped.text == text[: text.rfind(" ")]
    passed = monitored_generate(chat, mon, benign["prompt"])
    assert not passed.stopped and passed.text == response_text(benign)
    with pytest.raises(TypeError):
        monitored_generate(object(), mon, "hi")


def test_a_stream_is_fed_by_text_or_ids_not_both(trained):
    session = trained.monitor().start("hi")
    session.push("Sure ,")
    with pytest.raises(ValueError, match="not both"):
        session.push_ids([3, 4])
    session.finish()
    with pytest.raises(ValueError, match="ended"):
        session.push("more")
    ids = trained.tokenizer_("Sure , here is", add_special_tokens=False)["input_ids"]
    session = trained.monitor(theta=1.0, k=10**6, window=None).start("hi")
    assert session.push_ids(ids).tokens_read == len(ids)


@pytest.mark.parametrize(
    "kw",
    [
        {"theta": 0.0},
        {"k": 0},
        {"rule": "eager"},
        {"head": "x"},
        {"k": 4, "window": 2},
        {"retokenise": "some"},
        {"max_hold": 0},
        {"max_sessions": 0},
    ],
)
def test_bad_monitor_settings_rejected(trained, kw):
    with pytest.raises(ValueError):
        trained.monitor(**kw)
