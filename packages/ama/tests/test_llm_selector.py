"""The LLM tool selector scores names through paperplug-llm's public continuation_logprobs
(batched over one prompt cache), never through the backend's internals."""

import pytest
from paperplug_ama import LLMToolSelector, selection_messages
from paperplug_llm import ScriptedChatModel

TOOLS = [
    {"name": "book_flight", "description": "Books flights."},
    {"name": "find_hotel", "description": "Finds hotels."},
    {"name": "weather", "description": "Forecasts."},
]


class Scored(ScriptedChatModel):
    """A chat model exposing only the public scoring call, with fixed per-token log-probs."""

    def __init__(self, table):
        super().__init__(["unused"])
        self.table, self.asked = table, []

    def continuation_logprobs(self, messages, candidates, *, prefix="", tools=None):
        self.asked.append((messages, list(candidates)))
        return [self.table[c] for c in candidates]


def test_loglik_selects_the_highest_summed_name_logprob():
    llm = Scored({"book_flight": [-1.0, -2.5], "find_hotel": [-0.5, -0.4], "weather": [-1.2]})
    victim = LLMToolSelector(llm)
    assert victim.scoring == "loglik"
    assert victim.scores("q", TOOLS) == pytest.approx([-3.5, -0.9, -1.2])
    assert victim.select("a hotel in Rome", TOOLS) == [1]
    messages, names = llm.asked[-1]
    assert names == ["book_flight", "find_hotel", "weather"]
    assert messages == selection_messages("a hotel in Rome", TOOLS)


def test_loglik_on_a_real_model_equals_one_teacher_forced_pass_per_name():
    from paperplug_llm import HFChatModel
    from paperplug_llm.tiny import build_tiny_model

    llm = HFChatModel(*build_tiny_model(seed=3))
    victim = LLMToolSelector(llm)
    messages = selection_messages("a hotel in Rome", TOOLS)
    alone = [sum(v for _, v in llm.token_logprobs(messages, t["name"])) for t in TOOLS]
    assert victim.scores("a hotel in Rome", TOOLS) == pytest.approx(alone, abs=1e-4)


def test_generate_mode_follows_the_reply_and_loglik_needs_a_scoring_model():
    victim = LLMToolSelector(ScriptedChatModel(["I would use find_hotel.", "no idea"]))
    assert victim.scoring == "generate"
    assert victim.select("q", TOOLS) == [1]
    assert victim.select("q", TOOLS) == []  # a reply naming no tool selects nothing
    with pytest.raises(TypeError, match="continuation_logprobs"):
        LLMToolSelector(ScriptedChatModel(["x"]), scoring="loglik")
    with pytest.raises(ValueError, match="scoring"):
        LLMToolSelector(ScriptedChatModel(["x"]), scoring="vibes")
