"""Dual-supervision training: the seeded outcome over several seeds, reproducibility in a new
process, the caller's random state, checkpoints, bad input."""

import json
import os
import random
import subprocess
import sys

import pytest
import torch
from paperplug_scm import (
    EMBEDDED_TRAINING,
    SCMTrainer,
    StreamingMonitor,
    load_data,
    long_reply,
    make_fineharm_like,
    n_words,
    stitch_replies,
)
from paperplug_scm.training import length_batches

from paperplug.checks import NotFittedError
from paperplug.testing import global_rng_untouched

SEEDS = range(6)
TINIER = {"epochs": 1, "progress": False, "tiny": {"hidden_size": 16, "num_layers": 1}}


def test_scm_detects_early_over_seeds():
    """Stated rate: on at least 5 of 6 seeds (fresh data, backbone, order and dropout each),
    streaming macro-F1 >= 0.9 while reading < 60% of harmful responses' tokens, and the
    loss falls. Measured here: 6 of 6, macro-F1 0.99-1.00, 28-41% read."""
    good, seen = 0, []
    for seed in SEEDS:
        train, val, test = load_data(seed, n_train=200, n_val=100, n_test=200)
        tr = SCMTrainer(
            seed=seed,
            progress=False,
            tiny={"hidden_size": 64, "num_layers": 1},
            **EMBEDDED_TRAINING,
        ).fit(train, val)
        m = tr.evaluate(test)
        seen.append((seed, round(m["macro_f1"], 3), round(m["frac_read_harmful"], 2)))
        falls = tr.history_["loss"][-1] < tr.history_["loss"][0]
        good += m["macro_f1"] >= 0.9 and m["frac_read_harmful"] < 0.6 and falls
    assert good >= 5, seen


def test_schedule_and_history(trained):
    assert trained.history_["lr"][-1] < EMBEDDED_TRAINING["learning_rate"]  # decays per step
    assert {"loss", "token", "response", "logic"} <= set(trained.history_.records[0])
    assert trained.history_["val_macro_f1"] and trained.history_["theta"] == [trained.theta_]


def test_fit_leaves_the_callers_random_state_alone(splits):
    torch.manual_seed(123)
    with global_rng_untouched("SCMTrainer.fit"):
        SCMTrainer(seed=1, **TINIER).fit(splits[0][:16])


SCRIPT = """
import hashlib, json
from paperplug_scm import load_data, long_reply
data = [load_data(3, n_train=50, n_val=20, n_test=20), long_reply(300, seed=2)]
print(hashlib.sha256(json.dumps(data).encode()).hexdigest())
"""


def test_same_seed_same_model_whatever_the_process_state():
    """Everything process-dependent (hash seeds order sets and dicts of strings) lives in the
    data and vocabulary, built in pure Python: a new process with another hash seed builds
    the same. The model's draws come from the seed alone, whatever the global generators."""
    import hashlib
    import random

    data = [load_data(3, n_train=50, n_val=20, n_test=20), long_reply(300, seed=2)]
    here = hashlib.sha256(json.dumps(data).encode()).hexdigest()
    env = {**os.environ, "PYTHONHASHSEED": "7"}
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, check=True
    )
    assert out.stdout.strip() == here
    small = make_fineharm_like(24, seed=4)
    first = SCMTrainer(seed=5, **TINIER).fit(small).score(small[:3])[0]
    torch.manual_seed(999)  # another global state: the method must not depend on it
    random.seed(999)
    again = SCMTrainer(seed=5, **TINIER).fit(small).score(small[:3])[0]
    assert again == first
    assert SCMTrainer(seed=6, **TINIER).fit(small).score(small[:3])[0] != first


def test_checkpoint_round_trip(trained, checkpoint, splits):
    loaded = SCMTrainer.load(checkpoint)
    assert (loaded.theta_, loaded.k_, loaded.window) == (trained.theta_, trained.k_, 16)
    assert loaded.frame_ == loaded.model_.frame == trained.frame_
    a, _ = trained.score(splits[2][:5])
    b, _ = loaded.score(splits[2][:5])
    assert [x for r in a for x in r] == pytest.approx([x for r in b for x in r], abs=1e-6)
    assert loaded.optimizer_.state_dict()["state"].keys() == (
        trained.optimizer_.state_dict()["state"].keys()
    )
    mon = StreamingMonitor.from_pretrained(checkpoint, k=2, window=5)
    assert (mon.k, mon.window, mon.theta) == (2, 5, trained.theta_)


def test_windowed_rule_is_kept_through_fit_and_checkpoint(splits, tmp_path):
    tr = SCMTrainer(seed=0, window=4, ks=(1, 2, 3), **TINIER).fit(splits[0][:24], splits[1][:24])
    assert tr.k_ <= 4 and tr.monitor().window == 4
    assert StreamingMonitor.from_pretrained(tr.save(tmp_path / "w")).window == 4


def test_bad_training_input_rejected(splits):
    before = json.dumps(splits[0][:2])
    with pytest.raises(ValueError):
        SCMTrainer().fit([])
    with pytest.raises(TypeError):
        SCMTrainer().fit("FineHarm")
    with pytest.raises(ValueError, match="tokenizer"):
        SCMTrainer(torch.nn.Linear(2, 2)).fit(splits[0][:2])
    with pytest.raises(TypeError, match="backbone"):
        SCMTrainer(backbone=3).fit(splits[0][:2])
    with pytest.raises(ValueError, match="epochs"):
        SCMTrainer(epochs=0).fit(splits[0][:2])
    with pytest.raises(NotFittedError, match="not fitted"):
        SCMTrainer().monitor()
    with pytest.raises(FileNotFoundError, match="not an SCM checkpoint"):
        SCMTrainer.load("/nonexistent/ckpt")
    assert json.dumps(splits[0][:2]) == before


def test_stitched_replies_join_each_epoch(splits, monkeypatch):
    """`long_replies=0.5` adds half as many stitched benign replies, fresh each epoch, from the
    longest training reply up to `long_words`; `long_replies=0` trains on the data alone."""
    import paperplug_scm.training as training

    calls = []

    def spy(examples, n, **kw):
        calls.append((len(examples), n, kw))
        return stitch_replies(examples, n, **kw)

    monkeypatch.setattr(training, "stitch_replies", spy)
    train = splits[0][:24]
    settings = {**TINIER, "epochs": 2}
    tr = SCMTrainer(seed=3, long_replies=0.5, long_words=150, **settings).fit(train)
    longest = max(n_words(ex) for ex in train)
    assert [c[:2] for c in calls] == [(24, 12), (24, 12)]
    assert {c[2]["seed"] for c in calls} == {3000, 3001}  # fresh replies each epoch
    assert all(c[2]["min_words"] == longest and c[2]["max_words"] == 150 for c in calls)
    assert all(c[2]["harmful_fraction"] == 0.0 for c in calls)
    assert len(tr.history_) == 2 * 5  # ceil((24 + 12) / 8) batches an epoch
    calls.clear()
    assert len(SCMTrainer(seed=3, long_replies=0, **settings).fit(train).history_) == 2 * 3
    assert not calls


def test_length_batches_cover_the_epoch_once_sorted_within_pools():
    rng = random.Random(0)
    lengths = [rng.randrange(5, 500) for _ in range(100)]
    batches = length_batches(lengths, 8, random.Random(1), pool=4)
    assert sorted(i for b in batches for i in b) == list(range(100))
    assert [len(b) for b in batches].count(8) == 12
    spread = [lengths[b[-1]] - lengths[b[0]] for b in batches]
    assert all(s >= 0 for s in spread)  # each batch sorted by length
    # a pool of 4 batches sorted: a batch spans about a quarter of the range (random: 7/9)
    assert sum(spread) / len(spread) < 0.5 * (max(lengths) - min(lengths))


def test_default_monitor_lets_long_benign_replies_through_and_stops_deep_harm(splits):
    """Issue 48: with the paper's settings (whole-reply context, cumulative delay-k, θ/k from
    short validation replies) a small monitor stops 9 of 10 benign 1,000-word replies; the
    default (frames, stitched benign replies, θ/k that also pass stitched long benign
    validation replies, a 16-token window) stops none, and still every harmful test reply
    and every harmful reply placed 300-1,000 words deep."""
    from paperplug_scm.stitching import stitch_replies
    from paperplug_scm.stopping import delay_k_stop

    train, val, test = splits
    settings = {"progress": False, "tiny": {"hidden_size": 64, "num_layers": 2}, "seed": 0}
    settings.update(EMBEDDED_TRAINING)
    paper = SCMTrainer(frame=None, long_replies=0, val_long=0, window=None, **settings)
    paper.fit(train, val)
    default = SCMTrainer(**settings).fit(train, val)
    replies = []
    for i in range(10):
        prompt, text = long_reply(1000, seed=100 + i)
        words = text.split(" ")
        replies.append(
            {"prompt": prompt, "sentences": [text], "sentence_labels": [0], "words": [words]}
            | {"word_labels": [[0] * len(words)]}
        )

    def stopped(tr, examples):
        return sum(
            delay_k_stop(s, tr.theta_, tr.k_, tr.window) is not None for s in tr.score(examples)[0]
        )

    assert default.frame_ == default.model_.frame == 60  # half the longest training reply
    assert stopped(paper, replies) >= 7  # measured: 9
    assert stopped(default, replies) == 0
    harmful = [ex for ex in test if any(ex["sentence_labels"])]
    deep = stitch_replies(test, 10, min_words=300, max_words=1000, harmful_fraction=1.0, seed=1)
    assert stopped(default, harmful) == len(harmful)
    assert stopped(default, deep) == len(deep)
