"""Training, scoring, reranking, saving (paper §3.4): AdamW on the bin-aware loss with early
stopping on held-out queries; then `score`, `rerank` and `adequacy_bin` from embeddings only."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import torch

from paperplug import History, seeded_torch
from paperplug.harness import progress
from paperplug_eareranker.bins import BIN_NAMES, adequacy_bin
from paperplug_eareranker.loss import bin_aware_mse
from paperplug_eareranker.scorer import EARScorer

ARCHITECTURE = (
    "n_expand",
    "d_model",
    "layers",
    "heads",
    "causal",
    "readout",
    "interaction",
    "dropout",
)


def _matrix(x: Any, name: str) -> np.ndarray:
    if hasattr(x, "detach"):
        x = x.detach().cpu().numpy()
    arr = np.asarray(x, dtype=np.float32)
    if arr.ndim != 2 or arr.shape[0] == 0:
        raise ValueError(
            f"{name} must be a non-empty (n, dim) array of embeddings, got shape {arr.shape}"
        )
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} holds NaN or infinite values")
    return arr


class EAReranker:
    """Embedding-based adequacy reranker (the Trainer component).

    fit(query_embeddings, document_embeddings, labels in [0, 1], groups=query ids) trains with
    early stopping on a held-out share of the queries; `history_` has the train and validation
    loss per epoch."""

    def __init__(
        self,
        n_expand: int = 8,
        d_model: int = 256,
        layers: int = 4,
        heads: int = 4,
        causal: bool = True,
        readout: str = "last",
        interaction: bool = False,
        dropout: float = 0.1,
        alpha: float = 1.0,
        lr: float = 3e-4,
        weight_decay: float = 0.01,
        epochs: int = 50,
        batch_size: int = 256,
        patience: int = 5,
        val_fraction: float = 0.15,
        seed: int = 0,
        device: str = "cpu",
        progress: bool = True,
    ) -> None:
        self.n_expand, self.d_model, self.layers, self.heads = n_expand, d_model, layers, heads
        self.causal, self.readout, self.interaction, self.dropout = (
            causal,
            readout,
            interaction,
            dropout,
        )
        self.alpha, self.lr, self.weight_decay, self.epochs = alpha, lr, weight_decay, epochs
        self.batch_size, self.patience, self.val_fraction = batch_size, patience, val_fraction
        self.seed, self.device, self.progress = seed, device, progress

    def _build(self, dim: int) -> EARScorer:
        with seeded_torch(self.seed):
            return EARScorer(dim, **{k: getattr(self, k) for k in ARCHITECTURE}).to(self.device)

    def fit(
        self, query_embeddings: Any, document_embeddings: Any, labels: Any, groups: Any = None
    ) -> EAReranker:
        Q, D = (
            _matrix(query_embeddings, "query_embeddings"),
            _matrix(document_embeddings, "document_embeddings"),
        )
        y = np.asarray(labels, dtype=np.float32).ravel()
        if not (len(Q) == len(D) == len(y)):
            raise ValueError(
                f"one label per pair: got {len(Q)} queries, {len(D)} documents, {len(y)} labels"
            )
        if Q.shape[1] != D.shape[1]:
            raise ValueError(
                f"query and document embeddings differ in width: {Q.shape[1]} vs {D.shape[1]}"
            )
        if not np.isfinite(y).all() or (y < 0).any() or (y > 1).any():
            raise ValueError("labels must be adequacy scores in [0, 1]")
        if (
            not 0 <= self.val_fraction < 1
            or self.epochs < 1
            or self.batch_size < 1
            or self.alpha < 0
        ):
            raise ValueError("need 0 <= val_fraction < 1, epochs >= 1, batch_size >= 1, alpha >= 0")
        rng = np.random.default_rng(self.seed)
        groups = np.arange(len(y)) if groups is None else np.asarray(groups)
        unique = np.unique(groups)
        held = rng.permutation(unique)[: round(self.val_fraction * len(unique))]
        val = np.isin(groups, held)
        train = np.flatnonzero(~val)
        self.model_ = self._build(Q.shape[1])
        optimizer = torch.optim.AdamW(
            self.model_.parameters(), lr=self.lr, weight_decay=self.weight_decay
        )
        tensors = [torch.from_numpy(a) for a in (Q, D, y)]
        self.history_ = History()
        with seeded_torch(
            self.seed
        ):  # dropout draws from torch's generator: the caller's is restored
            best_state = self._train(Q, D, y, tensors, train, val, optimizer)
        if best_state is not None:
            self.model_.load_state_dict(best_state)
        self.model_.eval()
        self.embedding_dim_ = Q.shape[1]
        return self

    def _train(self, Q, D, y, tensors, train, val, optimizer) -> dict | None:
        """Epochs of AdamW on the bin-aware loss, early stopping on the validation loss."""
        best, best_state, waited = np.inf, None, 0
        epochs = range(1, self.epochs + 1)
        generator = torch.Generator().manual_seed(self.seed)
        for epoch in progress(epochs, "train EAR") if self.progress else epochs:
            self.model_.train()
            order = train[torch.randperm(len(train), generator=generator).numpy()]
            total = 0.0
            for start in range(0, len(order), self.batch_size):
                idx = order[start : start + self.batch_size]
                q, d, t = (a[idx].to(self.device) for a in tensors)
                loss = bin_aware_mse(self.model_(q, d), t, self.alpha)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                total += loss.item() * len(idx)
            record = {"epoch": epoch, "train_loss": total / len(order)}
            if val.any():
                pred = self._predict(Q[val], D[val])
                record["val_loss"] = float(
                    bin_aware_mse(torch.from_numpy(pred), tensors[2][val], self.alpha)
                )
                if record["val_loss"] < best - 1e-6:
                    best, waited = record["val_loss"], 0
                    best_state = {k: v.clone() for k, v in self.model_.state_dict().items()}
                else:
                    waited += 1
            self.history_.log(**record)
            if val.any() and waited >= self.patience:
                break
        return best_state

    @torch.no_grad()
    def _predict(self, Q: np.ndarray, D: np.ndarray) -> np.ndarray:
        self.model_.eval()
        out = [
            self.model_(
                torch.from_numpy(Q[i : i + 1024]).to(self.device),
                torch.from_numpy(D[i : i + 1024]).to(self.device),
            )
            for i in range(0, len(Q), 1024)
        ]
        return torch.cat(out).cpu().numpy()

    def score(self, query_embeddings: Any, document_embeddings: Any) -> np.ndarray:
        """Adequacy in [0, 1] of each (query, document) pair of embeddings."""
        if not hasattr(self, "model_"):
            raise RuntimeError("call fit() (or EAReranker.load) before score()")
        Q, D = (
            _matrix(query_embeddings, "query_embeddings"),
            _matrix(document_embeddings, "document_embeddings"),
        )
        if len(Q) == 1 and len(D) > 1:
            Q = np.repeat(Q, len(D), axis=0)
        if Q.shape != D.shape or Q.shape[1] != self.embedding_dim_:
            raise ValueError(
                f"expected pairs of {self.embedding_dim_}-dim embeddings, got {Q.shape} and {D.shape}"
            )
        return self._predict(Q, D)

    def rerank(self, query_embedding: Any, document_embeddings: Any, k: int | None = None,
               min_score: float | None = None) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
        """Document indices best first (at most k, optionally only scores >= min_score, e.g.
        0.25 to drop what the paper calls weak or irrelevant) and their scores."""
        q = np.asarray(query_embedding, dtype=np.float32).reshape(1, -1)
        scores = self.score(q, document_embeddings)
        order = np.argsort(-scores, kind="stable")
        if min_score is not None:
            order = order[scores[order] >= min_score]
        order = order[:k] if k is not None else order
        return order, scores[order]

    @staticmethod
    def adequacy_bin(scores: Any) -> list[str]:
        """The paper's bin name of each score: irrelevant, weak, marginal, moderate, high, precise."""
        return [BIN_NAMES[b] for b in adequacy_bin(np.atleast_1d(scores))]

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        torch.save(self.model_.state_dict(), path / "ear.pt")
        config = {k: getattr(self, k) for k in (*ARCHITECTURE, "alpha")} | {
            "embedding_dim": self.embedding_dim_
        }
        (path / "ear.json").write_text(json.dumps(config, indent=2))
        return path

    @classmethod
    def load(cls, path: str | Path, device: str = "cpu") -> EAReranker:
        path = Path(path)
        config = json.loads((path / "ear.json").read_text())
        dim = config.pop("embedding_dim")
        reranker = cls(device=device, **config)
        reranker.model_ = reranker._build(dim)
        reranker.model_.load_state_dict(torch.load(path / "ear.pt", map_location=device))
        reranker.model_.eval()
        reranker.embedding_dim_ = dim
        return reranker
