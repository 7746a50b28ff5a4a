"""Markov in-context learning (paper §4): transformers of one or two layers, one head each,
trained from scratch on sequences from fresh random Markov chains, with the loss, the gap to
the Bayes predictor and the attention maps recorded over training.

The model is a plain pre-LayerNorm decoder (learned absolute positions, one attention head
and one MLP per layer), the setting the paper's learning-dynamics study uses.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
from torch import nn

from paperplug import History, seeded_torch
from paperplug.checks import check_device, check_is_fitted, check_scalar, check_tensor, check_type
from paperplug.harness import progress
from paperplug_kgram.estimator import check_tokens
from paperplug_kgram.markov import bayes_nll, sample_chains, unigram_nll


class Block(nn.Module):
    """Pre-LN: x + Attn(LN(x)), then x + MLP(LN(x)); one attention head."""

    def __init__(self, d_model: int) -> None:
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.mlp = nn.Sequential(
            nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model)
        )
        self.attention: torch.Tensor | None = None  # (batch, T, T) of the last forward

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        T = x.shape[1]
        q, k, v = self.qkv(self.ln1(x)).chunk(3, -1)
        scores = q @ k.transpose(1, 2) / math.sqrt(q.shape[-1])
        causal = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
        weights = torch.softmax(scores.masked_fill(~causal, float("-inf")), -1)
        self.attention = weights.detach()
        x = x + self.proj(weights @ v)
        return x + self.mlp(self.ln2(x))


class MarkovTransformer(nn.Module):
    """Token and position embeddings, `n_layers` one-head blocks, a final LN and an LM head."""

    def __init__(self, vocab_size: int, n_layers: int, d_model: int, max_len: int) -> None:
        super().__init__()
        check_scalar(vocab_size, "vocab_size", "int", low=2)
        check_scalar(n_layers, "n_layers", "int", low=1)
        check_scalar(d_model, "d_model", "int", low=1)
        check_scalar(max_len, "max_len", "int", low=1)
        self.token = nn.Embedding(vocab_size, d_model)
        self.position = nn.Embedding(max_len, d_model)
        self.blocks = nn.ModuleList(Block(d_model) for _ in range(n_layers))
        self.ln = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Next-token logits (batch, T, vocab)."""
        h = self.token(x) + self.position.weight[: x.shape[1]]
        for block in self.blocks:
            h = block(h)
        return self.head(self.ln(h))

    def attention_maps(self) -> list[torch.Tensor]:
        return [b.attention for b in self.blocks if b.attention is not None]


def matching_mass(attention: torch.Tensor, x: torch.Tensor, k: int) -> float:
    """Mean attention mass that query n puts on keys i whose k preceding tokens equal the
    query's last k tokens (where an induction head should look), over queries with a match."""
    x = check_tensor(x, "x", dtype="int", ndim=2)
    batch, T = x.shape
    attention = check_tensor(attention, "attention", shape=(batch, T, T))
    check_scalar(k, "k", "int", low=1, high=T - 1)
    masses = []
    for b in range(batch):
        for n in range(k, T):
            keys = [
                i for i in range(k, n + 1) if torch.equal(x[b, i - k : i], x[b, n - k + 1 : n + 1])
            ]
            if keys:
                masses.append(float(attention[b, n, keys].sum()))
    return float(np.mean(masses)) if masses else math.nan


class MarkovICLTrainer:
    """Train a transformer from scratch on in-context Markov chains (the Trainer component).

    `fit()` samples a fresh batch of chains every step (the paper's setting); `fit(X)` trains
    on given token sequences (batch, T) instead. `history_` records, every `record_every`
    steps on a fixed evaluation batch: the model's NLL, the Bayes (add-α) NLL, their gap, the
    unigram NLL, and the last layer's mass on matching positions; `attention_snapshots_`
    keeps the attention maps of one evaluation sequence at those steps."""

    def __init__(
        self,
        n_layers: int = 2,
        d_model: int = 32,
        vocab_size: int = 3,
        order: int = 1,
        seq_len: int = 64,
        batch_size: int = 64,
        steps: int = 1600,
        lr: float = 3e-3,
        weight_decay: float = 0.0,
        alpha: float = 1.0,
        record_every: int = 100,
        eval_sequences: int = 256,
        seed: int = 0,
        device: str = "cpu",
        progress: bool = True,
    ) -> None:
        self.n_layers, self.d_model, self.vocab_size, self.order = (
            n_layers,
            d_model,
            vocab_size,
            order,
        )
        self.seq_len, self.batch_size, self.steps, self.lr = seq_len, batch_size, steps, lr
        self.weight_decay, self.alpha, self.record_every = weight_decay, alpha, record_every
        self.eval_sequences, self.seed, self.device, self.progress = (
            eval_sequences,
            seed,
            device,
            progress,
        )

    def _check(self) -> None:
        ints = {"n_layers": 1, "d_model": 1, "vocab_size": 2, "order": 1, "batch_size": 1,
                "steps": 1, "record_every": 1, "eval_sequences": 1}  # fmt: skip
        for name, low in ints.items():
            check_scalar(getattr(self, name), name, "int", low=low)
        check_scalar(self.seq_len, "seq_len", "int", low=self.order + 2)
        check_type(self.progress, "progress", bool)
        check_device(self.device)
        check_scalar(self.lr, "lr", low=0, inclusive="neither")
        check_scalar(self.alpha, "alpha", low=0, inclusive="neither")
        check_scalar(self.weight_decay, "weight_decay", low=0)
        check_scalar(self.seed, "seed", "int")

    def fit(self, X: Any = None) -> MarkovICLTrainer:
        self._check()
        rng = np.random.default_rng(self.seed)
        data = None
        if X is not None:
            data = torch.as_tensor(check_tokens(X, self.vocab_size, self.order, "X", "order"))
            if data.dim() != 2 or data.shape[1] < self.order + 2:
                raise ValueError(
                    f"X must have shape (n, T) with T >= order + 2, got {tuple(data.shape)}"
                )
        length = data.shape[1] if data is not None else self.seq_len
        with seeded_torch(self.seed):
            self.model_ = MarkovTransformer(
                self.vocab_size, self.n_layers, self.d_model, length
            ).to(self.device)
        evaluation = data[: self.eval_sequences] if data is not None else sample_chains(
            self.eval_sequences, length, self.vocab_size, self.order, alpha=self.alpha, rng=rng
        )  # fmt: skip
        self.bayes_nll_ = bayes_nll(evaluation, self.vocab_size, self.order, self.alpha)
        self.unigram_nll_ = unigram_nll(evaluation, self.vocab_size, self.alpha)
        optimizer = torch.optim.AdamW(
            self.model_.parameters(), lr=self.lr, weight_decay=self.weight_decay
        )
        self.history_, self.attention_snapshots_ = History(), []
        steps = range(1, self.steps + 1)
        for step in progress(steps, f"train {self.n_layers}-layer") if self.progress else steps:
            if data is None:
                batch = sample_chains(
                    self.batch_size, length, self.vocab_size, self.order, alpha=self.alpha, rng=rng
                )
            else:
                batch = data[torch.as_tensor(rng.integers(0, len(data), self.batch_size))]
            batch = batch.to(self.device)
            logits = self.model_(batch[:, :-1])
            loss = nn.functional.cross_entropy(
                logits.reshape(-1, self.vocab_size), batch[:, 1:].reshape(-1)
            )
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if step % self.record_every == 0 or step == self.steps:
                self._record(step, loss.item(), evaluation)
        return self

    @torch.no_grad()
    def _record(self, step: int, train_loss: float, evaluation: torch.Tensor) -> None:
        x = evaluation.to(self.device)
        logits = self.model_(x[:, :-1])
        nll = float(
            nn.functional.cross_entropy(logits.reshape(-1, self.vocab_size), x[:, 1:].reshape(-1))
        )
        last = self.model_.attention_maps()[-1]
        mass = matching_mass(last[:16].cpu(), x[:16, :-1].cpu(), self.order)
        self.history_.log(step=step, train_loss=train_loss, nll=nll, bayes_nll=self.bayes_nll_,
                          gap=nll - self.bayes_nll_, unigram_nll=self.unigram_nll_, matching_mass=mass)  # fmt: skip
        self.attention_snapshots_.append(
            (step, [a[0].cpu().numpy() for a in self.model_.attention_maps()])
        )

    @torch.no_grad()
    def predict_proba(self, X: Any) -> np.ndarray:
        """Next-token distributions (n, T, vocab) for token sequences X (n, T)."""
        check_is_fitted(self, "model_")
        x = torch.as_tensor(check_tokens(X, self.vocab_size, self.order, "X", "order"))
        x = x[None] if x.dim() == 1 else x
        return torch.softmax(self.model_(x.to(self.device)), -1).cpu().numpy()
