"""A planted relation between embeddings is learned; scoring cost does not grow with the text."""

import numpy as np
import pytest
import torch
from paperplug_eareranker import EAReranker

from paperplug.checks import NotFittedError

SMALL = {"n_expand": 4, "d_model": 32, "layers": 2, "heads": 2, "epochs": 60, "lr": 3e-3,
         "batch_size": 128, "patience": 10, "progress": False}  # fmt: skip


def planted(n, seed, dim=16):
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(n, dim)).astype(np.float32)
    d = rng.normal(size=(n, dim)).astype(np.float32)
    # adequacy depends on a direction of d that q picks: not on their cosine
    y = 1 / (1 + np.exp(-2.0 * (q[:, 0] * d[:, 1] + d[:, 2])))
    return q, d, y.astype(np.float32)


@pytest.mark.parametrize("seed", [0, 1])
def test_a_planted_relation_is_learned_where_cosine_knows_nothing(seed):
    q, d, y = planted(1500, seed)
    model = EAReranker(seed=seed, **SMALL).fit(q[:1200], d[:1200], y[:1200])
    pred = model.score(q[1200:], d[1200:])
    cosine = (
        (q[1200:] * d[1200:]).sum(1)
        / np.linalg.norm(q[1200:], axis=1)
        / np.linalg.norm(d[1200:], axis=1)
    )
    assert np.corrcoef(pred, y[1200:])[0, 1] > 0.85
    assert abs(np.corrcoef(cosine, y[1200:])[0, 1]) < 0.2
    assert model.history_["val_loss"][-1] < model.history_["val_loss"][0]


def test_rerank_save_load_and_reproducible(tmp_path):
    q, d, y = planted(400, 3)
    a = EAReranker(seed=5, **{**SMALL, "epochs": 3}).fit(q, d, y)
    b = EAReranker(seed=5, **{**SMALL, "epochs": 3}).fit(q, d, y)
    assert np.array_equal(a.score(q[:50], d[:50]), b.score(q[:50], d[:50]))
    order, scores = a.rerank(q[0], d[:20], k=5)
    assert len(order) == 5 and (np.diff(scores) <= 0).all()
    kept, _ = a.rerank(q[0], d[:20], min_score=0.5)
    assert (a.score(q[:1], d[kept]) >= 0.5).all()
    loaded = EAReranker.load(a.save(tmp_path / "ear"))
    assert np.allclose(loaded.score(q[:50], d[:50]), a.score(q[:50], d[:50]), atol=1e-6)
    ours = EAReranker(seed=5, **{**SMALL, "epochs": 3}, interaction=True, cosine_residual=True,
                      rank_weight=1.0).fit(q, d, y, groups=np.arange(400) // 8)  # fmt: skip
    loaded = EAReranker.load(ours.save(tmp_path / "ours"))
    assert (loaded.cosine_residual, loaded.rank_weight) == (True, 1.0)
    assert np.allclose(loaded.score(q[:50], d[:50]), ours.score(q[:50], d[:50]), atol=1e-6)


def test_bad_inputs_are_refused_and_inputs_untouched():
    q, d, y = planted(50, 4)
    before = q.copy()
    model = EAReranker(**{**SMALL, "epochs": 1})
    with pytest.raises(ValueError, match="query_embeddings and document_embeddings and labels"):
        model.fit(q, d, y[:10])
    with pytest.raises(ValueError, match=r"labels must be adequacy scores in \[0, 1\]"):
        model.fit(q, d, y * 2)
    with pytest.raises(ValueError, match="query_embeddings holds NaN"):
        model.fit(np.full_like(q, np.nan), d, y)
    with pytest.raises(ValueError, match=r"document_embeddings must have shape \(\*, 16\)"):
        model.fit(q, d[:, :8], y)
    with pytest.raises(NotFittedError):
        EAReranker().score(q, d)
    with pytest.raises(ValueError, match="readout must be one of"):
        EAReranker(readout="mean", **{**SMALL, "epochs": 1}).fit(q, d, y)
    assert np.array_equal(q, before)


def test_the_issue_examples_raise_errors_naming_the_argument():
    q, d, y = planted(50, 4)
    with pytest.raises(ValueError, match="n_expand must be >= 1"):
        EAReranker(n_expand=0).fit(q, d, y)
    with pytest.raises(ValueError, match=r"heads must divide d_model \(32\), got heads=3"):
        EAReranker(d_model=32, heads=3).fit(q, d, y)  # was torch's AssertionError
    fitted = EAReranker(**{**SMALL, "epochs": 1}).fit(q, d, y)
    with pytest.raises(ValueError, match="k must be >= 1, got -1"):
        fitted.rerank(q[0], d[:20], k=-1)  # was all documents but the last
    with pytest.raises(ValueError, match="min_score must lie in"):
        fitted.rerank(q[0], d[:20], min_score=2.0)


def test_batches_hold_whole_queries_only_for_the_listwise_loss(monkeypatch):
    q, d, y = planted(300, 5)
    groups = np.repeat(np.arange(50), 6)[np.random.default_rng(0).permutation(300)]  # shuffled rows
    seen = []
    original = EAReranker._loss

    def spy(self, logits, t, group):
        if torch.is_grad_enabled():  # a training batch, not the validation pass
            seen.append(torch.bincount(group).tolist())
        return original(self, logits, t, group)

    monkeypatch.setattr(EAReranker, "_loss", spy)
    params = {**SMALL, "epochs": 2, "batch_size": 40, "val_fraction": 0.0}
    EAReranker(**params, rank_weight=1.0).fit(q, d, y, groups=groups)
    assert seen and all(set(counts) == {6} for counts in seen)  # every query with its 6 documents
    assert max(sum(counts) for counts in seen) <= 40 + 5
    seen.clear()
    EAReranker(**params).fit(q, d, y, groups=groups)  # the paper's loss: shuffled pairs
    assert [sum(counts) for counts in seen] == [40] * 7 + [20] + [40] * 7 + [20]
    assert any(set(counts) != {6} for counts in seen)
