"""Batched monitor steps: replies streamed at once from several threads through one batched
monitor get the decisions the unbatched monitor makes on each alone (stop or not, at the same
token), scores equal up to float rounding, and the steps really ran together."""

import concurrent.futures
import re

import pytest
from paperplug_scm import StreamingMonitor, response_text


def stream(monitor, reply_id, prompt, reply):
    """Word by word, as the gateway feeds a stream: (stop index, tokens read, last score)."""
    text = ""
    for word in re.findall(r"\S+\s*|\s+", reply):
        text += word
        verdict = monitor.check(text, {"prompt": prompt, "reply_id": reply_id})
        if not verdict.valid:
            break
    else:
        verdict = monitor.check(text, {"prompt": prompt, "reply_id": reply_id, "final": True})
    d = verdict.details
    return d["stop_index"], d["tokens_read"], d["score"]


def test_batched_streams_decide_what_each_decides_alone(checkpoint, splits):
    _, _, test = splits
    replies = [(ex["prompt"], response_text(ex)) for ex in test[:48]]
    alone = StreamingMonitor.from_pretrained(checkpoint)
    expected = [stream(alone, i, p, r) for i, (p, r) in enumerate(replies)]
    batched = StreamingMonitor.from_pretrained(checkpoint, batch=True)
    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        got = list(pool.map(lambda a: stream(batched, *a), [(i, p, r) for i, (p, r) in enumerate(replies)]))  # fmt: skip
    assert [g[:2] for g in got] == [e[:2] for e in expected]  # the same stop, the same token
    assert [g[2] for g in got] == pytest.approx([e[2] for e in expected], abs=1e-5)
    assert sum(e[0] is not None for e in expected) >= 5  # stops and passes both tested
    assert batched.batcher.largest > 1  # steps of several streams ran as one forward pass


def test_batch_must_be_a_boolean(checkpoint):
    with pytest.raises(TypeError, match="batch"):
        StreamingMonitor.from_pretrained(checkpoint, batch="yes")
