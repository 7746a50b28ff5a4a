"""The embedded SmolLM2-135M-Instruct, offline from the cache (built on first use: ~25 s once)."""

import pytest
from paperplug_llm import HFChatModel, run_agent
from paperplug_llm.smollm2 import GGUF_NAME, locate_gguf

QUESTION = [{"role": "user", "content": "What is the capital of France? Answer in one sentence."}]


@pytest.fixture(scope="module")
def smol():
    from paperplug_llm.smollm2 import is_cached, load_smollm2

    if not is_cached():
        try:
            locate_gguf()
        except (RuntimeError, FileNotFoundError) as exc:  # no cache and no way to fetch the wheel
            pytest.skip(f"SmolLM2 GGUF unavailable: {exc}")
    return load_smollm2(max_tokens=24)


def test_answers_a_short_chat(smol):
    assert isinstance(smol, HFChatModel) and smol.model.config.num_hidden_layers == 30
    assert "Paris" in smol.chat(QUESTION)


def test_greedy_is_deterministic_and_stream_equals_complete(smol):
    first = smol.complete(QUESTION)
    assert smol.complete(QUESTION).token_ids == first.token_ids
    assert "".join(smol.stream(QUESTION)) == first.text
    assert first.finish_reason == "stop" and len(first.logprobs) == len(first.token_ids)


def test_tool_round_trip_with_the_embedded_model(smol):
    def add(a: int, b: int) -> int:
        """Add two integers.

        Args:
            a: the first integer
            b: the second integer
        """
        return a + b

    def get_weather(city: str) -> str:
        """Get the current weather in a city."""
        return f"Sunny in {city}"

    result = run_agent(
        smol,
        [{"role": "user", "content": "What is 17 plus 25?"}],
        [add, get_weather],
        first_tool_choice="required",
        max_steps=2,
        max_tokens=16,
    )
    run = result.tool_runs[0]
    assert (run.name, run.arguments, run.result, run.error) == ("add", {"a": 17, "b": 25}, 42, None)
    assert result.messages[2] == {
        "role": "tool",
        "tool_call_id": "call_0",
        "name": "add",
        "content": "42",
    }
    assert "42" in result.text


def test_explicit_gguf_path_must_exist(tmp_path):
    with pytest.raises(FileNotFoundError, match="no GGUF"):
        locate_gguf(tmp_path / GGUF_NAME)


def test_arguments_are_checked_before_the_gguf_is_fetched_or_dequantized(tmp_path, monkeypatch):
    import paperplug_llm.smollm2 as smollm2

    def reached(*args, **kw):
        raise AssertionError("fetched or de-quantized before the arguments were checked")

    monkeypatch.setattr(smollm2, "locate_gguf", reached)
    monkeypatch.setattr(smollm2, "dequantize_to_cache", reached)
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    bad = {
        "max_tokens": 0,
        "device": "nowhere",
        "dtype": "float13",
        "refresh": "yes",
        "gguf_path": tmp_path / GGUF_NAME,
        "cache": a_file,
    }
    for name, value in bad.items():
        kw = {"cache": tmp_path / "empty", name: value}  # an empty cache: loading would start
        with pytest.raises((ValueError, TypeError), match=name):
            smollm2.load_smollm2(**kw)
