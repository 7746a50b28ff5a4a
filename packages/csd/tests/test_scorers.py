"""The claim-scorer interface: any output-stage Defense, a ChatModel judge, a classifier
head on embeddings, a function; values checked in closed form."""

import math

import numpy as np
import pytest
from paperplug_csd import ClaimClassifier, DefenseScorer, FunctionScorer, JudgeScorer, as_scorer
from paperplug_csd.embedded import claim_corpus, judge_claim
from paperplug_llm import ScriptedChatModel

from paperplug import Verdict


class KeywordMonitor:
    """A user's own output-stage Defense: risk = share of the banned words in the text."""

    stage = "output"

    def __init__(self, words=("gas", "bomb")):
        self.words, self.contexts = words, []

    def check(self, payload, context=None):
        self.contexts.append(dict(context or {}))
        hits = sum(w in payload for w in self.words)
        return Verdict(payload, hits == 0, hits / len(self.words))


def test_any_output_defense_scores_prefix_plus_claim():
    monitor = KeywordMonitor()
    scorer = as_scorer(monitor)
    assert isinstance(scorer, DefenseScorer)
    assert scorer.score_claim("q", "Make a bomb. ", "Add the gas.") == 1.0  # both words seen
    assert scorer.score_claim("q", "", "Add the gas.") == 0.5
    assert scorer.score_claim("q", "", "Drink water.") == 0.0
    ctx = monitor.contexts[-1]
    assert ctx["prompt"] == "q" and ctx["final"] is True
    assert len({c["conversation_id"] for c in monitor.contexts}) == 3  # no state shared
    assert DefenseScorer(monitor, use="valid").score_claim("q", "", "Add the gas.") == 1.0


def test_scripted_judge_and_fail_closed():
    judge = JudgeScorer(ScriptedChatModel(["unsafe", "Safe.", "maybe?"]))
    assert [judge.score_claim("q", "", "c") for _ in range(3)] == [1.0, 0.0, 1.0]
    assert judge.n_unparsed == 1
    assert isinstance(as_scorer(ScriptedChatModel(["safe"])), JudgeScorer)


def test_hf_judge_reads_answer_probabilities():
    from paperplug_llm import HFChatModel, build_tiny_model

    chat = HFChatModel(*build_tiny_model(seed=1))
    judge = JudgeScorer(chat)
    got = judge.score_claim("q", "", "Mix the gases.")
    text = judge.template.format(prompt="q", prefix="(nothing)", claim="Mix the gases.")
    unsafe, safe = (sum(x) for x in chat.continuation_logprobs(
        [{"role": "user", "content": text}], ["unsafe", "safe"]))  # fmt: skip
    assert got == pytest.approx(math.exp(unsafe) / (math.exp(unsafe) + math.exp(safe)))


def bag_of_harm(texts):
    """A planted encoder: one feature per harm word of the judge's lexicon, plus a bias."""
    from paperplug_csd.embedded import HARM_WORDS, REFUSAL_MARKERS

    return np.array(
        [[float(w in t.lower()) for w in HARM_WORDS + REFUSAL_MARKERS] + [1.0] for t in texts]
    )


def test_classifier_head_learns_the_planted_rule():
    claims, labels = claim_corpus(seed=0)
    head = ClaimClassifier(bag_of_harm, C=10.0).fit(claims[:90], labels[:90])
    held = claims[90:]
    pred = head.predict_proba(held) > 0.5
    assert np.mean(pred == np.array([judge_claim(c) for c in held])) >= 0.95
    assert head.score_claim("q", "", held[0]) == pytest.approx(head.predict_proba(held[:1])[0])


def test_bad_scorer_inputs():
    with pytest.raises(TypeError, match="stage 'output'"):
        DefenseScorer(object())
    with pytest.raises(ValueError, match="use must be"):
        DefenseScorer(KeywordMonitor(), use="x")
    with pytest.raises(ValueError, match="both classes"):
        ClaimClassifier(bag_of_harm).fit(["a", "b"], [0, 0])
    with pytest.raises(ValueError, match="labels must be"):
        ClaimClassifier(bag_of_harm).fit(["a", "b"], [0, 2])
    with pytest.raises(RuntimeError, match="not fitted"):
        ClaimClassifier(bag_of_harm).predict_proba(["a"])
    with pytest.raises(ValueError, match="encoder returned"):
        ClaimClassifier(lambda t: np.zeros((1, 2))).fit(["a", "b"], [0, 1])
    with pytest.raises(TypeError, match="callable"):
        FunctionScorer(3)
    with pytest.raises(ValueError, match="template lacks"):
        JudgeScorer(ScriptedChatModel([]), template="{prompt}")


def test_minilm_encoder_takes_a_sequence_of_texts():
    """Unit vectors of width 384, equal for equal texts; a bare string is no list of texts
    (it was encoded letter by letter)."""
    from paperplug_csd import minilm_encoder

    encode = minilm_encoder()
    vectors = encode(["a cat", "a cat", "the stock market"])
    assert vectors.shape == (3, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    assert np.array_equal(vectors[0], vectors[1])
    with pytest.raises(TypeError, match="texts must be a sequence"):
        encode("a cat")
    with pytest.raises(ValueError, match="device"):
        minilm_encoder(device="nodevice")
