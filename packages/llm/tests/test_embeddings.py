"""MeanPoolEncoder on a tiny BERT built from a config: mean pooling over the attention mask
(a text's vector does not depend on the longer texts padded beside it), unit norm, and equal
to the pooling computed by hand from the model's hidden states."""

import numpy as np
import pytest
import torch
from paperplug_llm import MeanPoolEncoder
from transformers import BertConfig, BertModel, BertTokenizerFast

WORDS = ["the", "tool", "pays", "bill", "send", "mail", "to", "a", "user", "now"]


@pytest.fixture(scope="module")
def encoder(tmp_path_factory):
    path = tmp_path_factory.mktemp("tiny-bert")
    (path / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", *WORDS]))
    BertTokenizerFast(vocab_file=str(path / "vocab.txt")).save_pretrained(path)
    config = BertConfig(
        vocab_size=len(WORDS) + 4, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=32, max_position_embeddings=32,
    )  # fmt: skip
    torch.manual_seed(0)
    BertModel(config).save_pretrained(path)
    return MeanPoolEncoder(path, batch_size=2)


def test_mean_pooling_ignores_padding_and_matches_by_hand(encoder):
    short, long = "the tool pays", "send the mail to a user now the bill"
    alone = encoder.encode([short])
    padded = encoder.encode([short, long])  # one batch: short is padded to long's length
    np.testing.assert_allclose(padded[0], alone[0], atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(padded, axis=1), 1.0, atol=1e-6)
    ids = encoder.tokenizer(long, return_tensors="pt")
    with torch.no_grad():
        hidden = encoder.model(**ids).last_hidden_state[0].numpy()
    by_hand = hidden.mean(0) / np.linalg.norm(hidden.mean(0))
    np.testing.assert_allclose(padded[1], by_hand, atol=1e-6)
    assert encoder.encode([]).shape == (0, 16)


def test_bad_arguments_named(encoder):
    with pytest.raises((TypeError, ValueError), match="batch_size"):
        MeanPoolEncoder(encoder.path, batch_size=0)
