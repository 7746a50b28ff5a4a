"""The conversation state store: bounded and expiring in process, keyed by the history's
prefixes (two runs of one task never reset each other), JSON only, writes buffered until
committed and dropped for good once abandoned."""

import time

import pytest

from paperplug.state import (
    ConversationState,
    MemoryStore,
    StateError,
    StateStore,
    history_keys,
)

U1 = {"role": "user", "content": "pay the bill"}
A1 = {"role": "assistant", "content": None,
      "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{}"}}]}  # fmt: skip
T1 = {"role": "tool", "tool_call_id": "c1", "content": "bill: 10"}


def view(store, messages, scope="client:drift"):
    return ConversationState(store, scope, history_keys(messages))


def test_history_keys_are_prefix_digests_robust_to_reserialisation():
    keys = history_keys([U1, A1, T1])
    assert len(keys) == 3 and len(set(keys)) == 3
    assert history_keys([U1, A1]) == keys[:2]  # a prefix keeps its keys
    resent = [{"role": "user", "content": [{"type": "text", "text": "pay the bill"}]},
              {**A1, "refusal": None, "annotations": []}, T1]  # fmt: skip
    assert history_keys(resent) == keys
    assert history_keys([{**U1, "content": "pay the rent"}])[0] != keys[0]


def test_a_check_reads_the_longest_stored_prefix_and_writes_under_its_whole_history():
    store = MemoryStore()
    first = view(store, [U1])
    assert first.get("plan") is None
    first.set("plan", {"steps": ["read", "pay"]})
    assert first.get("plan") == {"steps": ["read", "pay"]}  # its own buffered write
    assert view(store, [U1]).get("plan") is None  # not written before commit
    first.commit()
    later = view(store, [U1, A1, T1])
    assert later.get("plan") == {"steps": ["read", "pay"]}
    later.set("plan", {"steps": ["read", "pay"], "done": 1})
    later.commit()
    # a second run of the same task, still at its first turn, sees the first turn's state and
    # leaves the longer run's state alone
    again = view(store, [U1])
    assert again.get("plan") == {"steps": ["read", "pay"]}
    again.set("plan", {"steps": ["other"]})
    again.commit()
    assert view(store, [U1, A1, T1]).get("plan")["done"] == 1
    assert view(store, [U1], scope="client:other").get("plan") is None  # scopes never mix


def test_an_abandoned_view_never_writes():
    store = MemoryStore()
    late = view(store, [U1])
    late.set("plan", 1)
    late.abandon()
    late.set("plan", 2)  # the check went on past its deadline
    late.commit()
    assert len(store) == 0 and view(store, [U1]).get("plan") is None


def test_values_must_be_json():
    with pytest.raises(StateError, match="state 'plan' must be JSON"):
        view(MemoryStore(), [U1]).set("plan", {1, 2})


def test_the_memory_store_is_bounded_and_expires():
    store = MemoryStore(max_items=3, ttl=0.2)
    for i in range(5):
        store.set(f"k{i}", str(i))
    assert len(store) == 3 and store.get_many(["k0", "k1", "k2", "k4"]) == [None, None, "2", "4"]
    assert store.nbytes == 3  # "2", "3", "4"
    store.get_many(["k2"])  # recently used: kept when a new key arrives
    store.set("k5", "5")
    assert store.get_many(["k2", "k3"]) == ["2", None]
    time.sleep(0.25)
    assert store.get_many(["k2", "k4", "k5"]) == [None, None, None]
    assert isinstance(store, StateStore)


@pytest.mark.parametrize(("kw", "match"), [({"max_items": 0}, "max_items"), ({"ttl": -1}, "ttl"),
                                           ({"max_items": True}, "max_items")])  # fmt: skip
def test_bad_store_arguments_are_named(kw, match):
    with pytest.raises(ValueError, match=match):
        MemoryStore(**kw)


def reply(call_id):
    return {"role": "assistant", "content": None,
            "tool_calls": [{"id": call_id, "type": "function", "function": {"name": "pay", "arguments": '{"x": 1}'}}]}  # fmt: skip


def test_a_requests_checks_share_its_state_and_persist_it_under_the_reply():
    store = MemoryStore()
    run_a = ConversationState.for_request(store, "client", [U1])
    first, second = run_a.scoped("drift"), run_a.scoped("drift")
    first.set("paid", 1)
    first.commit()
    assert second.get("paid") == 1 and len(store) == 0  # within the request, not yet stored
    # a second run of the same request at once (no header: the same conversation) starts
    # from the history's state, not from the first run's
    run_b = ConversationState.for_request(store, "client", [U1]).scoped("drift")
    assert run_b.get("paid") is None
    run_b.set("paid", 2)
    run_b.commit()
    run_a.persist(reply("call_a"))
    ConversationState.for_request(store, "client", [U1]).persist(reply("call_b"))  # nothing set
    # each run's next request continues from its own reply, re-serialised by the client
    next_a = [U1, {**reply("call_a"), "refusal": None}, {"role": "tool", "tool_call_id": "call_a", "content": "ok"}]  # fmt: skip
    next_a[1]["tool_calls"][0]["function"]["arguments"] = '{"x":1}'
    assert ConversationState.for_request(store, "client", next_a).scoped("drift").get("paid") == 1
    next_b = [U1, reply("call_b"), {"role": "tool", "tool_call_id": "call_b", "content": "ok"}]
    assert (
        ConversationState.for_request(store, "client", next_b).scoped("drift").get("paid") is None
    )
    # a retry of the first request does not see its own earlier outcome
    assert ConversationState.for_request(store, "client", [U1]).scoped("drift").get("paid") is None


def test_persist_needs_a_request_view():
    with pytest.raises(ValueError, match="persist needs a request's view"):
        view(MemoryStore(), [U1]).persist(reply("c"))
