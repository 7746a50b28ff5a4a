"""LLM judges read the grade out of the replies real models write (full stops, markdown, JSON,
fractions, percentages), and report what they cannot read instead of guessing."""

import math
from types import SimpleNamespace

import pytest
import torch
from paperplug_eareranker import DigitJudge, LLMJudge, label_pairs, parse_score

REPLIES = {
    "0.85": 0.85,
    "Score: 0.85.": 0.85,
    "0.6. The document covers the query.": 0.6,
    "Score: 0.85. The document answers 2 of 3 parts.": 0.85,
    " 0.95.": 0.95,
    "1.": 1.0,
    "0": 0.0,
    "1.0": 1.0,
    "0.300": 0.3,
    "0.85\n": 0.85,
    "**Score:** 0.7": 0.7,
    "Score: `0.45`": 0.45,
    "Score:0.2": 0.2,
    "Score = .5": 0.5,
    "Adequacy: 0.55 (moderate)": 0.55,
    "0.9 - precise": 0.9,
    '{"score": 0.65}': 0.65,
    "score: 0.9\nExplanation: complete and verifiable.": 0.9,
    "The adequacy score is 0.3 because the document is partial.": 0.3,
    "Query 1 asks about sorting. Score: 0.4": 0.4,  # the labelled number, not the first
    "Step 1: read it. Rating: 0.6": 0.6,
    "I would rate this 0.75 out of 1.": 0.75,
    "Rating: 0.9/1": 0.9,
    "8/10": 0.8,
    "7 out of 10": 0.7,
    "85%": 0.85,
    "0,8": 0.8,  # a decimal comma
}
UNUSABLE = [
    "Score: N/A",
    "I cannot answer that.",
    "",
    "Score: 8",  # out of [0, 1] without a scale: ambiguous
    "Score: 1.5",
    "Score: -0.2",
    "Score: 0.5/0",
    "The document answers 2 of 3 parts. 0.7.",  # no label, and the first number is 2
]


@pytest.mark.parametrize("reply", list(REPLIES))
def test_grades_are_read_from_real_formats(reply):
    assert parse_score(reply) == pytest.approx(REPLIES[reply])


@pytest.mark.parametrize("reply", UNUSABLE)
def test_unreadable_replies_are_none_never_zero(reply):
    assert parse_score(reply) is None


class Scripted:
    """A ChatModel that answers from a list, recording what it was asked."""

    def __init__(self, replies):
        self.replies, self.asked = list(replies), []

    def chat(self, messages, **kw):
        self.asked.append((messages, kw))
        return self.replies.pop(0)


def test_a_panel_that_ends_its_sentences_with_a_period_labels_pairs():
    replies = ["Score: 0.85.", "0.8. The document is complete.", "Score: 0.9.", "0.75.", "0.2."]
    judges = [LLMJudge(Scripted([r])) for r in replies]
    out = label_pairs(judges, [("how do I sort a list?", "sorted(iterable) returns a new list")])
    assert out["unusable"] == [0]
    assert out["branch"] == ["first agree"]
    assert out["label"][0] == pytest.approx((0.85 + 0.8 + 0.9 + 0.75) / 4)
    messages, kw = judges[0].chat_model.asked[0]
    assert "how do I sort a list?" in messages[0]["content"] and kw["temperature"] == 0


def test_too_few_usable_grades_give_no_label():
    judges = [LLMJudge(Scripted([r])) for r in ["Score: 0.8.", "N/A", "I can't.", "0.7."]]
    out = label_pairs(judges, [("q", "d")])
    assert out == {"label": [None], "branch": ["too few usable grades"],
                   "grades": [[0.8, None, None, 0.7]], "unusable": [2]}  # fmt: skip


def test_bad_arguments_are_named():
    with pytest.raises(TypeError, match="chat_model must be a ChatModel"):
        LLMJudge(object())
    with pytest.raises(ValueError, match="prompt must hold"):
        LLMJudge(Scripted([]), prompt="Rate {query}")
    with pytest.raises(TypeError, match=r"judges\[0\] must be LLMJudge"):
        label_pairs([object()], [("q", "d")])
    with pytest.raises(TypeError, match="document must be a str"):
        LLMJudge(Scripted(["0.5"])).grade("q", None)


class Tokens:
    """A tokenizer with one token per character (code point + 10), as SmolLM2's digits are."""

    def encode(self, text, add_special_tokens=False):
        return [ord(c) + 10 for c in text]


class Planted(torch.nn.Module):
    """A causal LM whose last position's logits are planted: digit k gets log(weights[k]),
    a non-digit token a far larger logit (renormalising over the digits must drop it)."""

    def __init__(self, weights):
        super().__init__()
        self.bias = torch.nn.Parameter(torch.zeros(200))
        with torch.no_grad():
            for k, w in enumerate(weights):
                self.bias[ord(str(k)) + 10] = math.log(w) if w > 0 else -1e4
            self.bias[3] = 50.0
        self.seen = []

    def forward(self, input_ids):
        self.seen.append(input_ids[0].tolist())
        return SimpleNamespace(logits=self.bias.expand(1, input_ids.shape[1], 200))


class LocalLM:
    def __init__(self, weights):
        self.model, self.tokenizer, self.contents = Planted(weights), Tokens(), []

    def prompt_ids(self, messages):
        self.contents.append(messages[0]["content"])
        return [1, 2]


def test_digit_judge_reads_the_planted_distribution_in_one_pass():
    lm = LocalLM([1, 1, 2, 0, 4])  # P = 1/8, 1/8, 2/8, 0, 4/8
    judge = DigitJudge(lm, max_words=3)
    assert judge.distribution("q", "d").tolist() == pytest.approx([0.125, 0.125, 0.25, 0, 0.5])
    assert judge.grade("q", "one two three four five") == pytest.approx((0.125 + 0.5 + 2) / 4)
    assert len(lm.model.seen) == 2  # one forward pass per grade, no generation
    assert lm.model.seen[-1] == [1, 2, *Tokens().encode("Grade: ")]  # the prefill is read
    assert lm.contents[-1].endswith("DOCUMENT: one two three")  # cut to max_words
    assert "from 0 to 4" in lm.contents[-1]
    out = label_pairs([DigitJudge(LocalLM([0, 0, 0, 0, 1])), judge], [("q", "d")], first=2)
    assert out["grades"] == [[pytest.approx(1.0), pytest.approx(0.65625)]]
    assert out["label"] == [pytest.approx((1 + 0.65625) / 2)]


def test_digit_judge_bad_arguments_are_named():
    with pytest.raises(TypeError, match="chat_model must be a local causal LM"):
        DigitJudge(Scripted(["0.5"]))
    with pytest.raises(ValueError, match=r"top must lie in \[1, 9\]"):
        DigitJudge(LocalLM([1, 1]), top=10)
    with pytest.raises(ValueError, match="prompt must hold"):
        DigitJudge(LocalLM([1, 1]), prompt="{query}")
    with pytest.raises(ValueError, match="max_words must be >= 1"):
        DigitJudge(LocalLM([1, 1]), max_words=0)
    with pytest.raises(TypeError, match="prefill must be a str"):
        DigitJudge(LocalLM([1, 1]), prefill=1)
    two = LocalLM([1, 1])
    two.tokenizer = SimpleNamespace(encode=lambda text, add_special_tokens=False: [1, 2])
    with pytest.raises(ValueError, match="one token"):
        DigitJudge(two)
    with pytest.raises(TypeError, match="document must be a str"):
        DigitJudge(LocalLM([1, 1])).grade("q", None)
