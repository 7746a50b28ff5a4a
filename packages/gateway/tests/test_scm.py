"""SCM configured by name in the gateway (`[[defense]] name = "scm" path = ...`, the top
README's example): on the wire, through the official SDK, each streamed reply is stopped
exactly when the monitor stops it in-process on the same reply, and a stopped stream ends with
`finish_reason: "content_filter"` before the end of the reply."""

import re

import pytest
from paperplug_scm import EMBEDDED_TRAINING, SCMTrainer, load_data, response_text
from wire import client, streamed

import paperplug


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A tiny SCM trained on the spot (seconds) and saved as a checkpoint; the test replies."""
    train, val, test = load_data(0, n_train=300, n_val=100, n_test=60)
    scm = SCMTrainer(progress=False, tiny={"hidden_size": 64, "num_layers": 1}, seed=0,
                     **EMBEDDED_TRAINING).fit(train, val)  # fmt: skip
    return scm.save(tmp_path_factory.mktemp("scm") / "ckpt"), test


def test_the_gateway_stops_a_stream_exactly_where_the_monitor_does(trained, gateway):
    """The gateway's SCM batches its steps across streams (`batch = true`); in process, the
    monitor steps each stream alone: the stops are the same."""
    path, test = trained
    replies = {ex["prompt"]: response_text(ex) for ex in test}
    url, _ = gateway(
        lambda messages, tools: {"content": replies[messages[-1]["content"]]},
        defense=[{"name": "scm", "path": str(path), "batch": True}],
    )
    monitor = paperplug.compose(paperplug.load("defense", "scm", path=str(path)))
    stopped = {True: 0, False: 0}
    for i, ex in enumerate(test):
        prompt, reply = ex["prompt"], replies[ex["prompt"]]
        # in process, on the chunks the upstream streams (a word each)
        direct = monitor.stream(re.findall(r"\S+\s*|\s+", reply),
                                context={"prompt": prompt, "reply_id": f"direct-{i}"})  # fmt: skip
        shown = "".join(direct)
        if direct.stopped_at is None:
            expected = (shown, "stop")
        else:
            refusal = "I can't help with that. [blocked by scm]"
            expected = (shown + ("\n" if shown else "") + refusal, "content_filter")
        text, finish, _ = streamed(
            client(url).chat.completions.create(
                model="m", messages=[{"role": "user", "content": prompt}], stream=True
            )
        )
        assert (text, finish) == expected  # the exact stop point, the exact text shown
        stopped[any(ex["sentence_labels"])] += direct.stopped_at is not None
    # the planted effect: the monitor stops harmful replies and passes benign ones
    n_harmful = sum(any(ex["sentence_labels"]) for ex in test)
    assert stopped[True] >= 0.8 * n_harmful and stopped[False] <= 0.2 * (len(test) - n_harmful)


@pytest.mark.parametrize("batch", [False, True])
def test_identical_requests_streamed_at_once_never_share_the_monitors_state(
    trained, gateway, batch
):
    # the gateway bench found it: 32 clients sending the same messages are one conversation,
    # and their replies fed one SCM session each other's chunks (false stops at chunk 5 of 20)
    import concurrent.futures

    path, test = trained
    monitor = paperplug.load("defense", "scm", path=str(path))
    benign = next(
        ex for ex in test
        if not any(ex["sentence_labels"])
        and monitor.check(response_text(ex), {"prompt": ex["prompt"], "final": True}).valid
    )  # fmt: skip
    reply = response_text(benign)
    url, _ = gateway(
        lambda messages, tools: {"content": reply},
        defense=[{"name": "scm", "path": str(path), "batch": batch}],
    )

    def one(_):
        stream = client(url).chat.completions.create(
            model="m", messages=[{"role": "user", "content": benign["prompt"]}], stream=True
        )
        return streamed(stream)[:2]

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        results = list(pool.map(one, range(16)))
    assert results == [(reply, "stop")] * 16
