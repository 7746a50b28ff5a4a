"""Each conversation has its own defense state, keyed by the client's header or by its opening
messages, always scoped by the client's key: never shared between clients."""

import collections
import itertools

import pytest
from wire import client

import paperplug
from paperplug import Verdict

KEYS = ["a" * 20, "b" * 20]
counter = itertools.count()


class Seen:
    """Records every conversation id it is asked about (a stateful defense's key)."""

    stage = "output"
    calls = collections.Counter()

    def check(self, payload, context=None):
        Seen.calls[context["conversation_id"]] += 1
        return Verdict(payload, True)


@pytest.fixture
def url(gateway):
    name = f"seen-{next(counter)}"
    paperplug.register_component("defense", name, summary="records", paper="(test)")(Seen)
    Seen.calls.clear()
    return gateway(lambda m, t: {"content": "ok"}, defense=[{"name": name}], api_keys=KEYS)[0]


def ask(url, key, messages, header=None):
    headers = {"x-paperplug-conversation": header} if header else {}
    client(url, key=key, default_headers=headers).chat.completions.create(
        model="m", messages=messages
    )
    return list(Seen.calls)[-1]


def test_same_messages_from_two_clients_are_two_conversations(url):
    messages = [{"role": "user", "content": "hello"}]
    first, second = ask(url, KEYS[0], messages), ask(url, KEYS[1], messages)
    assert first != second and first.startswith("key0:") and second.startswith("key1:")


def test_a_conversation_keeps_its_key_across_turns_and_a_new_one_gets_another(url):
    turn = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hello"}]
    one = ask(url, KEYS[0], turn)
    two = ask(
        url,
        KEYS[0],
        [*turn, {"role": "assistant", "content": "ok"}, {"role": "user", "content": "and?"}],
    )
    other = ask(url, KEYS[0], [{"role": "user", "content": "a new topic"}])
    assert one == two != other


def test_the_clients_header_names_the_conversation_within_its_key(url):
    a = ask(url, KEYS[0], [{"role": "user", "content": "x"}], header="thread-7")
    b = ask(url, KEYS[1], [{"role": "user", "content": "x"}], header="thread-7")
    assert a == "key0:h:thread-7" and b == "key1:h:thread-7"


def test_two_runs_of_one_task_at_once_keep_their_own_drift_state(gateway):
    """The same opening, no header: one conversation id. Run B starting while run A goes on
    neither inherits A's payment (B's first pay is no repeat) nor resets A's history (A's
    second pay is still caught as a repeat)."""
    pay = {"name": "send_money", "arguments": {"recipient": "UK12", "amount": 10}}
    url, _ = gateway(lambda m, t: {"content": "", "tool_calls": [pay]},
                     defense=[{"name": "drift", "planner": "query"}])  # fmt: skip
    tools = [{"type": "function", "function": {"name": "send_money", "parameters": {"type": "object"}}}]  # fmt: skip
    opening = [{"role": "user", "content": "Please pay UK12 10 euros."}]

    def turn(history):
        choice = client(url).chat.completions.create(model="m", messages=history, tools=tools).choices[0]  # fmt: skip
        if choice.message.tool_calls:
            call = choice.message.tool_calls[0]
            history = [*history, choice.message.model_dump(exclude_none=True),
                       {"role": "tool", "tool_call_id": call.id, "content": "sent"}]  # fmt: skip
        return choice.finish_reason, history

    a1, run_a = turn(opening)
    b1, _ = turn(opening)
    a2, _ = turn(run_a)
    assert (a1, b1, a2) == ("tool_calls", "tool_calls", "content_filter")
