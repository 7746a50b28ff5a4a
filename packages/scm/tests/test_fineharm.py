"""Sentence/word labels to token labels, and the loaders."""

import copy
import json

import pytest
from paperplug_scm import (
    IGNORE_INDEX,
    build_word_tokenizer,
    encode_fineharm,
    load_fineharm,
    make_fineharm_like,
    read_jsonl,
    token_labels,
)
from paperplug_scm.synthetic import example_texts

EXAMPLE = {
    "prompt": "How can I hack the alarm ?",
    "sentences": ["Sure , it is easy .", "First , disable the alarm with a fuse ."],
    "sentence_labels": [0, 1],
    "words": [
        ["Sure", ",", "it", "is", "easy", "."],
        ["First", ",", "disable", "the", "alarm", "with", "a", "fuse", "."],
    ],
    "word_labels": [[0, 0, 0, 0, 0, 0], [0, 0, 1, 0, 1, 0, 0, 1, 0]],
}


@pytest.fixture(scope="module")
def tok():
    return build_word_tokenizer(example_texts([EXAMPLE]))


def test_token_labels_by_hand(tok):
    before = copy.deepcopy(EXAMPLE)
    enc = token_labels(EXAMPLE, tok)
    assert before == EXAMPLE
    n_prompt = len(tok("How can I hack the alarm ?\n\n", add_special_tokens=False)["input_ids"])
    assert enc.response_start == n_prompt == 7
    assert enc.token_labels[:n_prompt] == [IGNORE_INDEX] * n_prompt  # the prompt is ignored
    assert enc.token_labels[n_prompt:] == [0] * 6 + [0, 0, 1, 0, 1, 0, 0, 1, 0]
    assert enc.response_label == 1
    words = tok.convert_ids_to_tokens(enc.input_ids[n_prompt:])
    assert words[8] == "disable" and enc.token_labels[n_prompt + 8] == 1


def test_truncated_reply_is_judged_on_what_is_kept(tok):
    """Cut by max_length before its first harmful word, a harmful reply is a benign training
    reply (else the logic loss asks a benign prefix for a harmful token); cut after it, or
    not cut, it stays harmful."""
    n_prompt = 7  # "disable" is response token 8 (see above)
    assert token_labels(EXAMPLE, tok, max_length=n_prompt + 8).response_label == 0
    assert token_labels(EXAMPLE, tok, max_length=n_prompt + 9).response_label == 1
    assert token_labels(EXAMPLE, tok, max_length=n_prompt + 15).response_label == 1
    cut = token_labels(EXAMPLE, tok, max_length=n_prompt + 8)
    assert len(cut.input_ids) == len(cut.token_labels) == n_prompt + 8


def test_unaligned_tokens_are_ignored(tok):
    # words cover only part of the sentence: tokens outside every word get -100
    ex = {**EXAMPLE, "words": [["Sure"], ["disable", "alarm"]], "word_labels": [[0], [1, 1]]}
    labels = token_labels(ex, tok).token_labels[7:]
    assert labels[0] == 0 and labels[1:6] == [IGNORE_INDEX] * 5
    assert [y for y in labels[6:] if y != IGNORE_INDEX] == [1, 1]


def test_synthetic_labels_follow_the_lexicon():
    data = make_fineharm_like(50, seed=1)
    for ex in data:
        for s, y, w, wl in zip(
            ex["sentences"], ex["sentence_labels"], ex["words"], ex["word_labels"], strict=True
        ):
            assert " ".join(w) == s
            assert (sum(wl) > 0) == bool(y)  # harmful sentences have notional words, benign none
    assert make_fineharm_like(20, seed=3) == make_fineharm_like(20, seed=3)
    assert {any(ex["sentence_labels"]) for ex in data} == {True, False}


@pytest.mark.parametrize(
    "bad,err",
    [
        ({k: v for k, v in EXAMPLE.items() if k != "words"}, ValueError),
        ({**EXAMPLE, "sentence_labels": [0]}, ValueError),
        ({**EXAMPLE, "sentence_labels": [0, 2]}, ValueError),
        ({**EXAMPLE, "word_labels": [[0], [1]]}, ValueError),
        ({**EXAMPLE, "prompt": 3}, TypeError),
        ("not a dict", TypeError),
    ],
)
def test_bad_examples_rejected(tok, bad, err):
    before = copy.deepcopy(bad)
    with pytest.raises(err, match=r"examples\[1\]"):  # the message names the bad row
        encode_fineharm([EXAMPLE, bad], tok)
    assert bad == before


def test_word_missing_from_sentence_rejected(tok):
    ex = {**EXAMPLE, "words": [["Sure"], ["explode"]], "word_labels": [[0], [1]]}
    with pytest.raises(ValueError, match="explode"):
        token_labels(ex, tok)


def test_read_jsonl_and_load_fineharm(tmp_path):
    data = make_fineharm_like(6, seed=2)
    (tmp_path / "own.jsonl").write_text("\n".join(json.dumps(d) for d in data) + "\n")
    assert read_jsonl(tmp_path / "own.jsonl") == data
    release = tmp_path / "FineHarm"
    release.mkdir()
    (release / "train_new.json").write_text(json.dumps(data[:4]))  # the released layout
    (release / "valid_new.json").write_text(json.dumps(data[4:]))
    assert load_fineharm(release, "train") == data[:4]
    assert load_fineharm(release, "validation") == data[4:]
    with pytest.raises(ValueError, match="split 'test' is not in"):
        load_fineharm(release, "test")
    (tmp_path / "broken.jsonl").write_text('{"prompt": "x"\n')
    with pytest.raises(ValueError, match=r"broken\.jsonl:1"):
        read_jsonl(tmp_path / "broken.jsonl")
