"""Training, scoring, reranking, saving (paper §3.4): AdamW on the bin-aware loss with early
stopping on held-out queries; then `score`, `rerank` and `adequacy_bin` from embeddings only."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import torch

from paperplug import History, seeded_torch
from paperplug.checks import (
    check_array,
    check_consistent_length,
    check_device,
    check_is_fitted,
    check_scalar,
    check_type,
)
from paperplug.harness import progress
from paperplug_eareranker.bins import BIN_NAMES, adequacy_bin
from paperplug_eareranker.loss import bin_aware_mse, listwise_loss
from paperplug_eareranker.scorer import EARScorer

ARCHITECTURE = ("n_expand", "d_model", "layers", "heads", "causal", "readout", "interaction",
                "cosine_residual", "dropout")  # fmt: skip


def _embeddings(value: Any, name: str, width: int | None = None) -> np.ndarray:
    """(n, dim) float32 embeddings from an array, list or tensor, checked."""
    return check_array(
        value, name, dtype=np.float32, ndim=2, shape=(None, width) if width else None
    )


def _by_query(rows: np.ndarray, query: torch.Tensor) -> list[np.ndarray]:
    """`rows` split by their query id (`query`, 0..G−1 per row of the data)."""
    ids = query[rows].numpy()
    order = np.argsort(ids, kind="stable")
    return np.split(rows[order], np.flatnonzero(np.diff(ids[order])) + 1)


def _batches(queries: list[np.ndarray], size: int) -> list[np.ndarray]:
    """Batches of about `size` rows made of whole queries."""
    out, current, count = [], [], 0
    for rows in queries:
        current.append(rows)
        count += len(rows)
        if count >= size:
            out.append(np.concatenate(current))
            current, count = [], 0
    return out + ([np.concatenate(current)] if current else [])


def _positions(ids: torch.Tensor) -> torch.Tensor:
    """Query ids renumbered 0..G−1 within a batch (what the listwise loss groups by)."""
    return torch.unique(ids, return_inverse=True)[1]


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
        cosine_residual: bool = False,
        dropout: float = 0.1,
        alpha: float = 1.0,
        rank_weight: float = 0.0,
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
        self.cosine_residual, self.rank_weight = cosine_residual, rank_weight
        self.alpha, self.lr, self.weight_decay, self.epochs = alpha, lr, weight_decay, epochs
        self.batch_size, self.patience, self.val_fraction = batch_size, patience, val_fraction
        self.seed, self.device, self.progress = seed, device, progress

    def _build(self, dim: int) -> EARScorer:
        with seeded_torch(self.seed):
            return EARScorer(dim, **{k: getattr(self, k) for k in ARCHITECTURE}).to(self.device)

    def _check_params(self) -> None:
        """The training parameters (the architecture's are checked by EARScorer)."""
        check_scalar(self.alpha, "alpha", low=0)
        check_scalar(self.rank_weight, "rank_weight", low=0, high=float("inf"), inclusive="left")
        check_scalar(self.lr, "lr", low=0, inclusive="neither")
        check_scalar(self.weight_decay, "weight_decay", low=0)
        check_scalar(self.epochs, "epochs", "int", low=1)
        check_scalar(self.batch_size, "batch_size", "int", low=1)
        check_scalar(self.patience, "patience", "int", low=1)
        check_scalar(self.val_fraction, "val_fraction", low=0, high=1, inclusive="left")
        check_scalar(self.seed, "seed", "int", low=0)
        check_type(self.progress, "progress", bool)
        check_device(self.device)

    def fit(
        self, query_embeddings: Any, document_embeddings: Any, labels: Any, groups: Any = None
    ) -> EAReranker:
        """Train on pairs of embeddings with adequacy labels in [0, 1]; `groups` (one query id
        per pair) keeps each query's pairs on one side of the validation split."""
        self._check_params()
        Q = _embeddings(query_embeddings, "query_embeddings")
        D = _embeddings(document_embeddings, "document_embeddings", Q.shape[1])
        y = check_array(labels, "labels", dtype=np.float32, ndim=1)
        check_consistent_length(query_embeddings=Q, document_embeddings=D, labels=y)
        if (y < 0).any() or (y > 1).any():
            raise ValueError("labels must be adequacy scores in [0, 1]")
        if groups is not None:
            groups = np.asarray(groups)
            if groups.ndim != 1:
                raise ValueError(f"groups must be one query id per pair, got shape {groups.shape}")
            check_consistent_length(labels=y, groups=groups)
        rng = np.random.default_rng(self.seed)
        groups = np.arange(len(y)) if groups is None else groups
        unique = np.unique(groups)
        held = rng.permutation(unique)[
            : min(round(self.val_fraction * len(unique)), len(unique) - 1)
        ]
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
            best_state = self._train(groups, tensors, train, val, optimizer)
        if best_state is not None:
            self.model_.load_state_dict(best_state)
        self.model_.eval()
        self.embedding_dim_ = Q.shape[1]
        return self

    def _loss(self, logits: torch.Tensor, t: torch.Tensor, group: torch.Tensor) -> torch.Tensor:
        """The bin-aware MSE, plus rank_weight × the listwise loss over each query's documents."""
        loss = bin_aware_mse(torch.sigmoid(logits), t, self.alpha)
        if self.rank_weight:
            loss = loss + self.rank_weight * listwise_loss(logits, t, group)
        return loss

    def _epoch_batches(self, train: np.ndarray, queries: list[np.ndarray], generator) -> list:
        """Shuffled pairs in batches of batch_size (the paper's pointwise loss); with the
        listwise loss, shuffled whole queries (a query's documents are ranked together)."""
        if not self.rank_weight:
            order = train[torch.randperm(len(train), generator=generator).numpy()]
            return [order[i : i + self.batch_size] for i in range(0, len(order), self.batch_size)]
        shuffled = [queries[i] for i in torch.randperm(len(queries), generator=generator)]
        return _batches(shuffled, self.batch_size)

    def _train(self, groups, tensors, train, val, optimizer) -> dict | None:
        """Epochs of AdamW on the loss, early stopping on the validation loss."""
        best, best_state, waited = np.inf, None, 0
        epochs = range(1, self.epochs + 1)
        generator = torch.Generator().manual_seed(self.seed)
        local = torch.from_numpy(np.unique(groups, return_inverse=True)[1])
        queries = _by_query(train, local)
        val_rows = np.flatnonzero(val)
        for epoch in progress(epochs, "train EAR") if self.progress else epochs:
            self.model_.train()
            total = 0.0
            for idx in self._epoch_batches(train, queries, generator):
                q, d, t = (a[idx].to(self.device) for a in tensors)
                loss = self._loss(
                    self.model_.logits(q, d), t, _positions(local[idx]).to(self.device)
                )
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                total += loss.item() * len(idx)
            record = {"epoch": epoch, "train_loss": total / len(train)}
            if len(val_rows):
                logits = self._logits(tensors[0][val_rows].numpy(), tensors[1][val_rows].numpy())
                record["val_loss"] = float(
                    self._loss(logits.cpu(), tensors[2][val_rows], _positions(local[val_rows]))
                )
                if record["val_loss"] < best - 1e-6:
                    best, waited = record["val_loss"], 0
                    best_state = {k: v.clone() for k, v in self.model_.state_dict().items()}
                else:
                    waited += 1
            self.history_.log(**record)
            if len(val_rows) and waited >= self.patience:
                break
        return best_state

    @torch.no_grad()
    def _logits(self, Q: np.ndarray, D: np.ndarray) -> torch.Tensor:
        """The scorer's logits for pairs of embeddings, in chunks of 1024 pairs."""
        self.model_.eval()
        out = [
            self.model_.logits(
                torch.from_numpy(Q[i : i + 1024]).to(self.device),
                torch.from_numpy(D[i : i + 1024]).to(self.device),
            )
            for i in range(0, len(Q), 1024)
        ]
        return torch.cat(out)

    def score(self, query_embeddings: Any, document_embeddings: Any) -> np.ndarray:
        """Adequacy in [0, 1] of each (query, document) pair of embeddings; one query is
        scored against every document."""
        check_is_fitted(self, "model_")
        Q = _embeddings(query_embeddings, "query_embeddings", self.embedding_dim_)
        D = _embeddings(document_embeddings, "document_embeddings", self.embedding_dim_)
        if len(Q) == 1 and len(D) > 1:
            Q = np.repeat(Q, len(D), axis=0)
        check_consistent_length(query_embeddings=Q, document_embeddings=D)
        return torch.sigmoid(self._logits(Q, D)).cpu().numpy()

    def rerank(self, query_embedding: Any, document_embeddings: Any, k: int | None = None,
               min_score: float | None = None) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
        """Document indices best first (at most k, optionally only scores >= min_score, e.g.
        0.25 to drop what the paper calls weak or irrelevant) and their scores."""
        check_is_fitted(self, "model_")
        k = check_scalar(k, "k", "int", low=1, allow_none=True)
        min_score = check_scalar(min_score, "min_score", low=0, high=1, allow_none=True)
        q = check_array(query_embedding, "query_embedding", dtype=np.float32, ndim=(1, 2))
        if q.ndim == 2 and len(q) != 1:
            raise ValueError(f"query_embedding must be one embedding, got shape {q.shape}")
        if q.shape[-1] != self.embedding_dim_:
            raise ValueError(
                f"query_embedding must have width {self.embedding_dim_}, got shape {q.shape}"
            )
        scores = self.score(q.reshape(1, -1), document_embeddings)
        order = np.argsort(-scores, kind="stable")
        if min_score is not None:
            order = order[scores[order] >= min_score]
        order = order[:k] if k is not None else order
        return order, scores[order]

    @staticmethod
    def adequacy_bin(scores: Any) -> list[str]:
        """The paper's bin name of each score: irrelevant, weak, marginal, moderate, high, precise."""
        return [BIN_NAMES[b] for b in np.atleast_1d(adequacy_bin(scores))]

    def save(self, path: str | Path) -> Path:
        """Write the weights (ear.pt) and the configuration (ear.json) into the folder `path`."""
        check_is_fitted(self, "model_")
        check_type(path, "path", (str, Path))
        if not str(path):
            raise ValueError("path must name a folder, got ''")
        path = Path(path)
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ValueError(
                f"path must be a folder that can be written, got {path}: {exc}"
            ) from exc
        torch.save(self.model_.state_dict(), path / "ear.pt")
        config = {k: getattr(self, k) for k in (*ARCHITECTURE, "alpha", "rank_weight")} | {
            "embedding_dim": self.embedding_dim_
        }
        (path / "ear.json").write_text(json.dumps(config, indent=2))
        return path

    @classmethod
    def load(cls, path: str | Path, device: str = "cpu") -> EAReranker:
        """A fitted reranker from a folder written by `save`."""
        path = Path(path)
        if not (path / "ear.json").is_file():
            raise ValueError(f"path must be a folder written by EAReranker.save, got {path}")
        config = json.loads((path / "ear.json").read_text())
        dim = config.pop("embedding_dim")
        reranker = cls(device=device, **config)
        reranker.model_ = reranker._build(dim)
        reranker.model_.load_state_dict(torch.load(path / "ear.pt", map_location=device))
        reranker.model_.eval()
        reranker.embedding_dim_ = dim
        return reranker
