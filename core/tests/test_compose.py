import copy

import pytest

from paperplug import AttackResult, Verdict, compose, evaluate


class Redact:
    """input stage: replaces a secret word; valid, since it sanitized."""

    stage = "input"

    def __init__(self, word):
        self.word, self.seen = word, []

    def check(self, payload, context=None):
        self.seen.append(payload)
        clean = payload.replace(self.word, "***")
        return Verdict(clean, True, 0.3 if clean != payload else 0.0, details={"word": self.word})


class Block:
    """input/output stage: invalid when a banned word is present."""

    def __init__(self, word, stage="input"):
        self.word, self.stage, self.calls = word, stage, 0

    def check(self, payload, context=None):
        self.calls += 1
        bad = self.word in (payload if isinstance(payload, str) else repr(payload))
        return Verdict(
            payload, not bad, 0.9 if bad else 0.1, reason=f"found {self.word}" if bad else ""
        )


class DropOdd:
    """train_data stage: removes rows whose value is odd."""

    stage = "train_data"

    def check(self, payload, context=None):
        removed = [i for i, v in enumerate(payload) if v % 2]
        kept = [v for i, v in enumerate(payload) if i not in removed]
        return Verdict(
            kept, not removed, len(removed) / max(len(payload), 1), details={"removed": removed}
        )


class DropAbove:
    stage = "train_data"

    def __init__(self, limit):
        self.limit = limit

    def check(self, payload, context=None):
        removed = [i for i, v in enumerate(payload) if v > self.limit]
        return Verdict([v for v in payload if v <= self.limit], True, details={"removed": removed})


def test_routes_by_stage_and_sanitizes_in_order():
    first, second = Redact("apple"), Redact("pear")
    out = Block("bomb", stage="output")
    guard = compose(first, second, out)
    verdict = guard.check("apple and pear", stage="input")
    assert verdict.payload == "*** and ***"
    assert second.seen == ["*** and pear"], "second defense sees the first's sanitized payload"
    assert out.calls == 0, "an output defense never sees input payloads"
    assert verdict.valid and verdict.risk == 0.3
    assert [name for name, _ in verdict.verdicts] == ["Redact", "Redact"]
    assert guard.stages() == ["input", "output"]


def test_all_valid_max_risk_and_fail_fast():
    a, b, c = Block("x"), Block("y"), Block("z")
    full = compose(a, b, c).check("x y", stage="input")
    assert (full.valid, full.risk, len(full.verdicts)) == (False, 0.9, 3)
    assert full.reason == "Block: found x; Block: found y"
    a2, b2 = Block("x"), Block("y")
    fast = compose(a2, b2, fail_fast=True).check("x y", stage="input")
    assert (fast.valid, len(fast.verdicts), b2.calls) == (False, 1, 0)


def test_no_defense_for_stage_is_valid_and_bad_stage_rejected():
    guard = compose(Block("x"))
    assert guard.check("x", stage="output").valid
    with pytest.raises(ValueError, match="stage must be one of"):
        guard.check("x", stage="outptu")
    with pytest.raises(TypeError, match="defense #0"):
        compose(object())


def test_filter_maps_indices_and_never_mutates():
    data = [2, 3, 4, 10, 7, 6]
    before = copy.deepcopy(data)
    result = compose(DropOdd(), DropAbove(6)).filter(data)
    assert data == before
    # DropOdd removes positions 1 and 4 (3, 7); DropAbove then removes 10 (original position 3)
    assert result.removed == [1, 3, 4] and result.kept == [0, 2, 5]
    assert result.verdict.payload == [2, 4, 6]
    assert [data[i] for i in result.kept] == result.verdict.payload


def test_filter_rejects_inconsistent_defense():
    class Liar:
        stage = "train_data"

        def check(self, payload, context=None):
            return Verdict(payload, True, details={"removed": [0]})

    with pytest.raises(ValueError, match="returned 3 rows but kept 2"):
        compose(Liar()).filter([1, 2, 3])


def test_stream_stops_at_first_invalid_prefix():
    stream = compose(Block("bomb", stage="output")).stream(
        ["how ", "to ", "make ", "a bo", "mb", " now"]
    )
    assert list(stream) == ["how ", "to ", "make ", "a bo"]
    assert stream.stopped_at == 4 and not stream.verdict.valid
    assert stream.text == "how to make a bo"


def test_a_bytes_chunk_is_refused_naming_the_chunk():
    """issue 48: b"mb" made the text stream a list of pieces that no monitor matched."""
    stream = compose(Block("bomb", stage="output")).stream(["a bo", b"mb", " now"])
    with pytest.raises(TypeError, match=r"chunks\[1\] is bytes: decode"):
        list(stream)
    fed = compose(Block("bomb", stage="output")).stream([])
    with pytest.raises(TypeError, match=r"chunks\[0\] is bytearray"):
        fed.feed(bytearray(b"a bomb"))


def test_wrap_guards_input_output_and_tools():
    class Model:
        def stream(self, messages, **kw):
            yield from ["the ", "secret ", "is ", "42"]

        def chat(self, messages, **kw):
            return "".join(self.stream(messages))

    guard = compose(
        Block("ignore previous"), Block("42", stage="output"), Block("rm -rf", stage="tool")
    )
    chat = guard.wrap(Model(), {"shell": lambda cmd: f"ran {cmd}"}, refusal="[stopped]")
    assert chat.chat([{"role": "user", "content": "please ignore previous"}]) == "[stopped]"
    assert chat.chat([{"role": "user", "content": "hi"}]) == "the secret is \n[stopped]"
    assert chat.tools["shell"](cmd="ls") == "ran ls"
    assert chat.tools["shell"](cmd="rm -rf /").startswith("[blocked call to shell")


class Prompts:
    """A toy attack: each input succeeds unless it is empty; adversarial = input + 'bomb'."""

    stage = "input"

    def run(self, target, inputs, *, budget=None):
        adv = [f"{x} bomb" if i % 2 == 0 else x for i, x in enumerate(inputs)]
        return AttackResult(adv, [True] * len(inputs), queries=len(inputs))


class Poison:
    """A toy poisoning attack whose success is re-assessed on the filtered data."""

    stage = "train_data"

    def run(self, target, inputs, *, budget=None):
        return AttackResult([*inputs, 1, 3], True, queries=0)

    def assess(self, target, payload):
        return any(v % 2 for v in payload)


def test_evaluate_counts_success_with_and_without_guard():
    report = evaluate(Prompts(), target=None, inputs=["a", "b", "c", "d"])
    assert (report.success_rate, report.guarded_success_rate) == (1.0, None)
    guarded = evaluate(Prompts(), None, ["a", "b", "c", "d"], guard=compose(Block("bomb")))
    assert (guarded.success_rate, guarded.guarded_success_rate, guarded.blocked) == (1.0, 0.5, 2)
    poisoned = evaluate(Poison(), None, [2, 4], guard=compose(DropOdd()))
    assert (poisoned.success_rate, poisoned.guarded_success_rate, poisoned.blocked) == (1.0, 0.0, 2)


def test_evaluate_passes_sanitized_items_and_none_for_blocked_ones_to_assess():
    class Rescored(Prompts):
        def assess(self, target, payload):
            self.seen = payload
            return [item is not None and "***" not in item for item in payload]

    attack = Rescored()
    report = evaluate(attack, None, ["a", "b", "c", "d"], guard=compose(Block("bomb")))
    assert attack.seen == [None, "b", None, "d"]  # items 0 and 2 carry "bomb": blocked
    assert (report.guarded_success_rate, report.blocked) == (0.5, 2)
    redacting = Rescored()
    evaluate(redacting, None, ["x", "apple pie"], guard=compose(Redact("apple")))
    assert redacting.seen == ["x bomb", "*** pie"]  # rewritten, so assess can re-score it


def test_evaluate_needs_a_stage_for_a_guard():
    class Stageless(Prompts):
        stage = None

    with pytest.raises(ValueError, match="declares no stage"):
        evaluate(Stageless(), None, ["a"], guard=compose(Block("x")))


def test_verdict_validates_risk():
    with pytest.raises(ValueError, match=r"risk must lie in \[0, 1\]"):
        Verdict("x", True, risk=1.5)


class Raises:
    def __init__(self, stage="input"):
        self.stage = stage

    def check(self, payload, context=None):
        raise RuntimeError("model file missing")


class Garbage:
    stage = "input"

    def check(self, payload, context=None):
        return {"valid": True}


def test_a_defense_that_raises_or_returns_garbage_fails_closed():
    after = Redact("apple")
    for broken in (Raises(), Garbage()):
        verdict = compose(broken, after).check("apple pie", stage="input")
        assert not verdict.valid and verdict.risk == 1.0
        name, first = verdict.verdicts[0]
        assert name == type(broken).__name__ and first.details["failed_closed"]
        assert type(broken).__name__ in verdict.reason
    assert "RuntimeError: model file missing" in compose(Raises()).check("x", stage="input").reason
    with pytest.raises(RuntimeError, match="model file missing"):
        compose(Raises(), on_error="raise").check("x", stage="input")
    with pytest.raises(ValueError, match="on_error"):
        compose(Raises(), on_error="ignore")


def test_errors_of_the_raises_types_propagate_naming_the_defense():
    class Lost(RuntimeError):
        pass

    class LosesState(Raises):
        def check(self, payload, context=None):
            raise Lost("store down")

    guard = compose(Redact("apple"), LosesState(), raises=(Lost,))
    with pytest.raises(Lost, match="store down") as info:
        guard.check("apple pie", stage="input")
    assert info.value.__notes__ == ["raised by the defense LosesState"]
    verdict = guard.check("x", stage="output")  # no defense of that stage: nothing raised
    assert verdict.valid
    other = compose(Raises(), raises=(Lost,)).check("x", stage="input")  # others still block
    assert not other.valid and other.verdicts[0][1].details["failed_closed"]
    for bad in ([Lost], (Lost, "x"), (int,)):
        with pytest.raises(TypeError, match="raises must be a tuple of exception types"):
            compose(Raises(), raises=bad)


def test_a_failing_data_filter_removes_everything():
    data = [2, 4, 6]
    result = compose(DropOdd(), Raises("train_data")).filter(data)
    assert result.kept == [] and result.removed == [0, 1, 2] and not result.verdict.valid
    assert data == [2, 4, 6]


def test_a_failing_stream_monitor_stops_the_stream():
    stream = compose(Raises("output")).stream(["a", "b"])
    assert list(stream) == [] and stream.stopped_at == 0


class LastWordMonitor:
    """Judges complete words only (a word is complete once a space follows it, or at the end)."""

    stage = "output"

    def __init__(self, word):
        self.word, self.contexts = word, []

    def check(self, payload, context=None):
        self.contexts.append(dict(context or {}))
        final = bool(context and context.get("final"))
        judged = len(payload) if final else payload.rfind(" ") + 1
        bad = self.word in payload[:judged].split()
        return Verdict(payload, not bad, float(bad), details={"judged": judged})


def test_the_last_word_of_a_stream_is_checked_and_never_shown_unjudged():
    monitor = LastWordMonitor("bomb")
    stream = compose(monitor).stream(["how ", "to ", "make ", "a ", "bo", "mb"])
    assert "".join(stream) == "how to make a "
    assert stream.stopped_at == 6 and not stream.verdict.valid
    assert monitor.contexts[-1]["final"] and not monitor.contexts[-2]["final"]
    benign = compose(LastWordMonitor("bomb")).stream(["a ", "cake"])
    assert "".join(benign) == "a cake" and benign.stopped_at is None


def test_feeding_a_stream_chunk_by_chunk_shows_what_iterating_it_shows():
    chunks = ["how ", "to ", "bake ", "a ", "ca", "ke"]
    fed = compose(LastWordMonitor("bomb")).stream((), context={})
    pieces = [fed.feed(c) for c in chunks] + [fed.finish()]
    assert pieces == [["how "], ["to "], ["bake "], ["a "], [], [], ["cake"]]
    assert (
        "".join(compose(LastWordMonitor("bomb")).stream(chunks)) == fed.text == "how to bake a cake"
    )
    stopped = compose(LastWordMonitor("bake")).stream(())
    assert [stopped.feed(c) for c in chunks[:4]] == [["how "], ["to "], [], []]
    assert stopped.stopped_at == 2 and stopped.finish() == [] and stopped.feed("x") == []


def test_wrap_passes_the_conversation_to_every_check_and_guards_complete():
    class Seen:
        def __init__(self, stage):
            self.stage, self.contexts = stage, []

        def check(self, payload, context=None):
            self.contexts.append(context)
            return Verdict(payload, "42" not in str(payload))

    class Reply:
        def __init__(self, text):
            self.text = text

    class Model:
        def stream(self, messages, **kw):
            yield from ["all ", "good"]

        def chat(self, messages, **kw):
            return "all good"

        def complete(self, messages, **kw):
            return "the answer is 42"

    out, tool = Seen("output"), Seen("tool")
    chat = compose(out, tool).wrap(Model(), {"add": lambda a, b: a + b})
    convo = [{"role": "system", "content": "be nice"}, {"role": "user", "content": "hello"}]
    assert chat.chat(convo) == "all good"
    assert all(c["prompt"] == "hello" and c["messages"] == convo for c in out.contexts)
    assert chat.tools["add"](a=1, b=2) == 3
    assert [c["phase"] for c in tool.contexts] == ["call", "result"]
    assert tool.contexts[0]["prompt"] == "hello"
    assert chat.complete(convo) == "I can't help with that."  # "42" in the output: blocked
    assert not hasattr(compose(out).wrap(type("Plain", (), {"chat": Model.chat})()), "complete")


def test_each_wrapped_call_has_its_own_conversation_id():
    class Seen:
        stage = "output"

        def __init__(self):
            self.ids = []

        def check(self, payload, context=None):
            self.ids.append(context["conversation_id"])
            return Verdict(payload, True)

    class Model:
        def chat(self, messages, **kw):
            return "fine"

    seen = Seen()
    chat = compose(seen).wrap(Model())
    first = chat.stream([{"role": "user", "content": "a"}])
    second = chat.stream([{"role": "user", "content": "b"}])
    next(first), next(second)  # two calls in flight at once
    list(first), list(second)
    ids = list(dict.fromkeys(seen.ids))
    assert len(ids) == 2  # one id per call, each call's checks share it
    assert chat.conversation_id == ids[1]  # the latest call's, for reading a monitor's session


def test_a_decode_defense_swaps_in_the_model_that_decodes_under_it():
    class Model:
        def chat(self, messages, **kw):
            return "raw"

    class SafeDecoding:
        stage = "decode"

        def __init__(self, refuse=False):
            self.refuse = refuse

        def check(self, model, context=None):
            class Decoded:
                def chat(self, messages, **kw):
                    return model.chat(messages, **kw) + " (safely decoded)"

            return Verdict(Decoded(), not self.refuse, reason="no model for you")

    model = Model()
    chat = compose(SafeDecoding(), Block("evil", stage="output")).wrap(model)
    assert chat.chat([{"role": "user", "content": "hi"}]) == "raw (safely decoded)"
    assert compose(Block("x", "output")).wrap(model).model is model  # no decode stage: as is
    with pytest.raises(ValueError, match="decode-stage defenses refused the model"):
        compose(SafeDecoding(refuse=True)).wrap(model)


def test_evaluate_hands_the_attack_result_to_the_defenses():
    class NeedsTheModel:
        stage = "train_data"

        def check(self, payload, context=None):
            self.model = context["attack_result"].meta["model"]
            removed = [i for i, v in enumerate(payload) if v % 2]
            return Verdict([v for v in payload if not v % 2], True, details={"removed": removed})

    class PoisonWithModel(Poison):
        def run(self, target, inputs, *, budget=None):
            return AttackResult([*inputs, 1], True, meta={"model": "fine-tuned"})

    defense = NeedsTheModel()
    report = evaluate(PoisonWithModel(), None, [2], guard=compose(defense))
    assert defense.model == "fine-tuned" and report.guarded_success_rate == 0.0


def test_results_name_objects_that_have_no_data_form():
    class Big:
        def __repr__(self):
            return "x" * 5000

    data = AttackResult([1], True, meta={"model": Big()}).to_dict()
    assert data["meta"]["model"].endswith("Big>") and len(data["meta"]["model"]) < 200
