"""Stitched long replies: every stitched reply is made of whole replies of the data with
their labels, of the drawn length, and the trainer mixes them into each epoch."""

import copy

import pytest
from paperplug_scm import make_fineharm_like, n_words, stitch_replies

PARTS = ("sentences", "sentence_labels", "words", "word_labels")


def decompose(reply, examples):
    """The source examples a stitched reply is made of, in order (depth-first search)."""
    if not reply["sentences"]:
        return []
    for ex in examples:
        m = len(ex["sentences"])
        if all(reply[key][:m] == ex[key] for key in PARTS):
            rest = decompose({key: reply[key][m:] for key in PARTS}, examples)
            if rest is not None:
                return [ex, *rest]
    return None


def harmful(ex):
    return any(ex["sentence_labels"])


def test_stitched_replies_are_whole_labelled_replies_of_the_drawn_length():
    data = make_fineharm_like(60, seed=5)
    before = copy.deepcopy(data)
    out = stitch_replies(data, 60, min_words=100, max_words=800, harmful_fraction=0.5, seed=1)
    assert data == before  # the inputs are untouched
    assert out == stitch_replies(
        data, 60, min_words=100, max_words=800, harmful_fraction=0.5, seed=1
    )
    longest = max(n_words(ex) for ex in data)
    n_harmful = 0
    for reply in out:
        parts = decompose(reply, data)
        assert parts, "a stitched reply is a sequence of the data's replies, labels included"
        inserted = [p for p in parts if harmful(p)]
        assert len(inserted) <= 1  # at most one harmful reply
        if inserted:
            n_harmful += 1
            assert reply["prompt"] == inserted[0]["prompt"]  # it answers the harmful prompt
            assert n_words(reply) < 800 + longest
        else:
            assert reply["prompt"] == parts[0]["prompt"]
            # benign replies are added until the drawn length is reached, and no further
            assert 100 <= n_words(reply) < 800 + longest
            assert n_words(reply) - n_words(parts[-1]) < 800
    assert 15 <= n_harmful <= 45  # about half of 60
    lengths = sorted(n_words(r) for r in out if not harmful(r))  # drawn log-uniformly:
    assert lengths[len(lengths) // 4] < 300 and lengths[-len(lengths) // 4] > 450  # 168, 476


def test_benign_only_stitching_and_bad_inputs():
    data = make_fineharm_like(40, seed=6)
    out = stitch_replies(data, 20, min_words=200, max_words=400, harmful_fraction=0.0, seed=2)
    assert len(out) == 20 and not any(harmful(r) for r in out)
    assert all(n_words(r) >= 200 for r in out)
    assert all(all(y == 0 for wl in r["word_labels"] for y in wl) for r in out)
    benign_only = [ex for ex in data if not harmful(ex)]
    with pytest.raises(ValueError, match="harmful"):
        stitch_replies(benign_only, 3, harmful_fraction=0.5)
    with pytest.raises(ValueError, match="benign"):
        stitch_replies([ex for ex in data if harmful(ex)], 3)
    with pytest.raises(ValueError, match="max_words"):
        stitch_replies(data, 3, min_words=500, max_words=100)
    with pytest.raises(TypeError, match=r"examples\[0\]"):
        stitch_replies(["not a reply"], 3)
    assert stitch_replies(data, 0) == []
