"""A planted relation between embeddings is learned; scoring cost does not grow with the text."""

import numpy as np
import pytest
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
