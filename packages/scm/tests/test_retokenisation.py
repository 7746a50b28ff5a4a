"""Hold-back of the trailing word and incremental re-tokenisation: the ids equal a full pass
at every step, the work per word is bounded, and tokenizers where the tail would be wrong
are detected and re-tokenised in full."""

import itertools
import random

import pytest
import torch
from paperplug_llm import build_tiny_decoder
from paperplug_scm import (
    IncrementalTokens,
    SCMModel,
    StreamingMonitor,
    hold_back,
    long_reply,
    tail_retokenisation_is_exact,
)
from paperplug_scm.fineharm import EncodedExample, encode_prompt
from paperplug_scm.model import score_responses
from paperplug_scm.retokenisation import PROBE

EXACT = ("bytelevel", "llama3", "wordpiece")
NOT_EXACT = ("metaspace", "prefix_space")


@pytest.mark.parametrize(
    "text,judged,max_hold,want",
    [
        ("Hello", 0, None, (0, False)),  # one word, maybe incomplete
        ("Hello ", 0, None, (5, True)),  # a word followed by whitespace is complete
        ("Hello wor", 0, None, (5, True)),
        ("Hello wor", 5, None, (5, False)),  # nothing new is complete
        ("Hello  \n\nworld", 5, None, (5, False)),  # the run starts at the frontier
        ("Hello world. Next", 5, None, (12, True)),
        ("  Hi", 0, None, (0, False)),  # leading whitespace starts no word
        ("abcdefgh", 0, 3, (8, False)),  # more than max_hold waiting: judged anyway
        ("ab cdefgh", 0, 3, (9, False)),
        ("ab cde", 0, 3, (6, False)),
        ("ab cd", 0, 3, (2, True)),
    ],
)
def test_hold_back_by_hand(text, judged, max_hold, want):
    assert hold_back(text, judged, max_hold) == want


def _stream(text, pieces, seed):
    """Random cut points: pieces of 1..pieces characters."""
    rng, at, out = random.Random(seed), 0, []
    while at < len(text):
        n = rng.randint(1, pieces)
        out.append(text[at : at + n])
        at += n
    return out


@pytest.mark.parametrize("family", [*EXACT, "word"])
def test_tail_ids_equal_a_full_pass_at_every_step(family, tokenizer_of, trained):
    tok = trained.tokenizer_ if family == "word" else tokenizer_of(family)
    assert tail_retokenisation_is_exact(tok)
    text = PROBE + " " + long_reply(150, seed=1)[1].replace(". ", ".\n\n", 3)
    for seed, max_hold in ((0, None), (1, 8)):
        inc, so_far = IncrementalTokens(tok, "tail"), ""
        for piece in _stream(text, 9, seed):
            so_far += piece
            end, boundary = hold_back(so_far, inc.end, max_hold)
            if end > inc.end:
                _keep, _new = inc.update(so_far, end, boundary)
                assert inc.ids == inc.encode(so_far[:end])
        inc.update(text, len(text), False)
        assert inc.ids == inc.encode(text)


@pytest.mark.parametrize("family", NOT_EXACT)
def test_tokenizers_where_the_tail_is_wrong_are_detected(family, tokenizer_of):
    # SentencePiece's Metaspace keeps "world.\n\nIt" in one piece; add_prefix_space changes
    # a segment's first token: re-tokenising from a boundary alone would be wrong here
    assert not tail_retokenisation_is_exact(tokenizer_of(family))


def _full_pass(model, tokenizer, prompt, text):
    ids = encode_prompt(tokenizer, prompt)
    response = tokenizer(text, add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        hidden, _ = model.hidden(torch.tensor([ids + response]))
    return model.scores(hidden[0])[len(ids) :].tolist()


def _framed_pass(model, tokenizer, prompt, text, frame):
    """One forward per reply token i over the prompt and the reply from the start of the
    frame before i's (tokens [(i // frame - 1) * frame, i]), by brute force."""
    ids = encode_prompt(tokenizer, prompt)
    response = tokenizer(text, add_special_tokens=False)["input_ids"]
    out = []
    with torch.no_grad():
        for i in range(len(response)):
            start = max(0, (i // frame - 1) * frame)
            hidden, _ = model.hidden(torch.tensor([ids + response[start : i + 1]]))
            out.append(model.scores(hidden[0])[-1].item())
    return out


@pytest.mark.parametrize("frame", [None, 8])
@pytest.mark.parametrize("family", ["llama3", "metaspace"])
def test_monitor_scores_equal_a_full_pass_for_any_tokenizer(family, frame, tokenizer_of):
    """Streamed in pieces (llama3 rolls back over ".\n\n", across frames with frame=8), the
    monitor's scores equal a full pass, or with a frame the brute-force framed pass, and so
    do the offline scores."""
    tok = tokenizer_of(family)
    decoder = build_tiny_decoder(len(tok), hidden_size=32, num_layers=2, seed=1)
    model = SCMModel(decoder, frame=frame)
    mon = StreamingMonitor(model, tok, theta=1.0, k=10**6)  # never stops: reads every token
    assert mon.retokenise_mode == ("tail" if family == "llama3" else "full")
    prompt, text = "How do I bake bread ?", PROBE + "\n" + long_reply(120, seed=2)[1]
    session = mon.start(prompt)
    for piece in _stream(text, 7, 3):
        session.push(piece)
    session.finish()
    if frame is None:
        want = _full_pass(model, tok, prompt, text)
    else:
        want = _framed_pass(model, tok, prompt, text, frame)
        assert want != pytest.approx(_full_pass(model, tok, prompt, text), abs=1e-3)
    response = tok(text, add_special_tokens=False)["input_ids"]
    assert session.ids == response
    assert session.token_scores == pytest.approx(want, abs=1e-5)
    ids = encode_prompt(tok, prompt)
    encoded = EncodedExample(ids + response, [0] * (len(ids) + len(response)), 0, len(ids))
    assert score_responses(model, [encoded], batch_size=4)[0] == pytest.approx(want, abs=1e-5)


class _Recording:
    """A tokenizer that records the length of every text it is asked to encode."""

    def __init__(self, tok):
        self.tok, self.lengths = tok, []

    def __call__(self, text, **kw):
        self.lengths.append(len(text))
        return self.tok(text, **kw)

    def __getattr__(self, name):
        return getattr(self.tok, name)

    def __len__(self):
        return len(self.tok)


@pytest.mark.parametrize("mode", ["tail", "full"])
def test_work_per_word_is_bounded_only_in_tail_mode(mode, tokenizer_of):
    tok = tokenizer_of("llama3")
    n_words = 2000 if mode == "tail" else 400  # "full" is quadratic: a shorter reply shows it
    text = long_reply(n_words, seed=3)[1].replace(". ", ".\n\n")  # merges across boundaries
    inc, rec = IncrementalTokens(tok, mode), _Recording(tok)
    inc.tokenizer = rec
    so_far, rolled = "", []
    for word in text.split(" "):
        so_far += (" " if so_far else "") + word
        end, boundary = hold_back(so_far, inc.end, 64)
        if end > inc.end:
            before = len(inc.ids)
            keep, _ = inc.update(so_far, end, boundary)
            rolled.append(before - keep)
    longest_word = max(len(w) for w in text.split())
    if mode == "tail":  # two words back at most (after a roll-back), the new word, whitespace
        assert max(rec.lengths) <= 3 * longest_word + 6
        assert 0 < max(rolled) <= 2  # ".\n\n" re-split: the cache rolls back over that only
    else:  # the whole judged prefix at every word (what the monitor did before)
        assert max(rec.lengths) > 0.99 * len(text) - longest_word
    assert inc.ids == inc.encode(so_far[: inc.end])


def test_text_without_spaces_is_judged_every_max_hold_characters(trained):
    mon = trained.monitor(max_hold=16)
    session = mon.start("")
    judged = []
    for ch in "東京タワー" * 20:
        judged.append(session.push(ch).judged)
    assert judged[15] == 0 and judged[16] == 17  # 17 characters waiting: judged
    assert max(b - a for a, b in itertools.pairwise(judged)) <= 17
    assert mon.finish().judged == 100
