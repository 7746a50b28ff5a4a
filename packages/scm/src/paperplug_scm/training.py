"""Dual-supervision training (paper §4.2, §5.1): the Trainer role.

AdamW (lr 1e-4, weight decay 0.01), ExponentialLR with γ = 0.99 per optimiser step, batch 8,
gradient accumulation 2, 3 epochs, seed 42: the released code's settings. After training,
θ and k are chosen on validation data by macro-F1 (paper §5.1).
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from paperplug import History
from paperplug_scm.evaluation import KS, THETAS, choose_theta_k, stream_metrics
from paperplug_scm.fineharm import encode_fineharm, validate_example
from paperplug_scm.loss import DualSupervisionLoss
from paperplug_scm.model import SCMModel, pad_batch, score_responses, tiny_qwen2
from paperplug_scm.synthetic import build_word_tokenizer, example_texts

TRAINER_FILE = "scm_trainer.json"
OPTIMIZER_FILE = "optimizer.pt"


def _as_examples(data: Any, what: str) -> list[dict[str, Any]]:
    if not isinstance(data, Sequence) or isinstance(data, (str, bytes)):
        raise TypeError(
            f"{what} must be a list of FineHarm-format dicts, got {type(data).__name__}"
        )
    if len(data) == 0:
        raise ValueError(f"{what} is empty")
    for i, ex in enumerate(data):
        validate_example(ex, i)
    return list(data)


class SCMTrainer:
    """Train an SCM on FineHarm-format data; `monitor()` gives the streaming Defense.

    `backbone`: None (a tiny Qwen2 and a word-level tokenizer built from the data), a Hugging
    Face name or path, or a torch module (then pass its `tokenizer`).
    `alpha=0, gamma=0, head="response"` trains the full-detection baseline instead.
    """

    def __init__(
        self,
        backbone: Any = None,
        tokenizer: Any = None,
        *,
        alpha: float = 0.6,
        gamma: float = 1.0,
        reduce: str = "max",
        head: str = "token",
        learning_rate: float = 1e-4,
        lr_decay: float = 0.99,
        epochs: int = 3,
        batch_size: int = 8,
        grad_accum: int = 2,
        weight_decay: float = 0.01,
        max_length: int = 4096,
        sep: str = " ",
        thetas: Sequence[float] = THETAS,
        ks: Sequence[int] = KS,
        theta: float = 0.5,
        k: int = 4,
        tiny: dict[str, int] | None = None,
        seed: int = 42,
        progress: bool = True,
    ) -> None:
        self.backbone, self.tokenizer = backbone, tokenizer
        self.alpha, self.gamma, self.reduce, self.head = alpha, gamma, reduce, head
        self.learning_rate, self.lr_decay, self.epochs = learning_rate, lr_decay, epochs
        self.batch_size, self.grad_accum, self.weight_decay = batch_size, grad_accum, weight_decay
        self.max_length, self.sep, self.thetas, self.ks = max_length, sep, thetas, ks
        self.theta, self.k, self.tiny, self.seed, self.progress = theta, k, tiny, seed, progress

    def _build(self, texts: list[str]) -> None:
        if self.backbone is None:
            self.tokenizer_ = self.tokenizer or build_word_tokenizer(texts)
            backbone = tiny_qwen2(len(self.tokenizer_), seed=self.seed, **(self.tiny or {}))
        elif isinstance(self.backbone, (str, os.PathLike)):
            from transformers import AutoModel, AutoTokenizer

            self.tokenizer_ = self.tokenizer or AutoTokenizer.from_pretrained(str(self.backbone))
            backbone = AutoModel.from_pretrained(str(self.backbone))
        elif isinstance(self.backbone, torch.nn.Module):
            if self.tokenizer is None:
                raise ValueError("a torch-module backbone needs its tokenizer= as well")
            import copy

            self.tokenizer_, backbone = self.tokenizer, copy.deepcopy(self.backbone)
        else:
            raise TypeError(
                f"backbone must be None, a name/path or a torch module, got {type(self.backbone)}"
            )
        self.model_ = SCMModel(backbone, seed=self.seed)

    def fit(self, train: Sequence[dict[str, Any]], validation: Any = None) -> SCMTrainer:
        """Train with the dual loss; choose θ and k on `validation` when given."""
        from tqdm.auto import tqdm

        if self.epochs < 1 or self.batch_size < 1 or self.grad_accum < 1:
            raise ValueError("epochs, batch_size and grad_accum must be >= 1")
        train = _as_examples(train, "train")
        val = _as_examples(validation, "validation") if validation is not None else None
        torch.manual_seed(self.seed)
        self._build(example_texts(train + (val or [])))
        self.loss_ = DualSupervisionLoss(self.alpha, self.gamma, self.reduce)
        encoded = encode_fineharm(train, self.tokenizer_, sep=self.sep, max_length=self.max_length)
        pad_id = self.tokenizer_.pad_token_id or 0
        self.optimizer_ = torch.optim.AdamW(
            self.model_.parameters(), lr=self.learning_rate, weight_decay=self.weight_decay
        )
        self.scheduler_ = torch.optim.lr_scheduler.ExponentialLR(self.optimizer_, self.lr_decay)
        self.history_ = History()
        order = list(range(len(encoded)))
        rng = random.Random(self.seed)
        batches_per_epoch = -(-len(encoded) // self.batch_size)
        bar = tqdm(
            total=self.epochs * batches_per_epoch, desc="SCM train", disable=not self.progress
        )
        self.model_.train()
        step = 0
        for epoch in range(self.epochs):
            rng.shuffle(order)
            for b in range(batches_per_epoch):
                batch = [encoded[i] for i in order[b * self.batch_size : (b + 1) * self.batch_size]]
                ids, mask, token_labels, response_labels = pad_batch(batch, pad_id)
                token_logits, response_logits = self.model_(ids, mask)
                parts = self.loss_(token_logits, response_logits, token_labels, response_labels)
                (parts["loss"] / self.grad_accum).backward()
                if (b + 1) % self.grad_accum == 0 or b + 1 == batches_per_epoch:
                    self.optimizer_.step()
                    self.optimizer_.zero_grad()
                    self.scheduler_.step()
                    step += 1
                self.history_.log(
                    epoch=epoch,
                    step=step,
                    lr=self.scheduler_.get_last_lr()[0],
                    **{k: float(v.detach()) for k, v in parts.items()},
                )
                bar.update(1)
                bar.set_postfix(loss=f"{float(parts['loss'].detach()):.3f}")
        bar.close()
        self.model_.eval()
        self.theta_, self.k_ = self.theta, self.k
        if val is not None:
            scores, labels = self.score(val)
            self.theta_, self.k_, m = choose_theta_k(scores, labels, self.thetas, self.ks)
            self.history_.log(val_macro_f1=m["macro_f1"], theta=self.theta_, k=self.k_)
        return self

    def _check_fitted(self) -> None:
        if not hasattr(self, "model_"):
            raise RuntimeError("this SCMTrainer is not fitted: call fit() or load() first")

    def score(self, examples: Sequence[dict[str, Any]]) -> tuple[list[list[float]], list[int]]:
        """Per-token P(harmful) on each response (from `head`), and the response labels."""
        self._check_fitted()
        examples = _as_examples(examples, "examples")
        enc = encode_fineharm(examples, self.tokenizer_, sep=self.sep, max_length=self.max_length)
        return score_responses(self.model_, enc, head=self.head), [e.response_label for e in enc]

    def evaluate(
        self, examples: Sequence[dict[str, Any]], theta: float | None = None, k: int | None = None
    ) -> dict[str, float]:
        """Streaming macro-F1, false alarms, misses and fraction of tokens read (θ_, k_ default)."""
        scores, labels = self.score(examples)
        theta = self.theta_ if theta is None else theta
        return stream_metrics(scores, labels, theta, self.k_ if k is None else k)

    @torch.no_grad()
    def full_detection(self, examples: Sequence[dict[str, Any]]) -> list[float]:
        """P(harmful) of whole responses from the response head (full-detection mode)."""
        self._check_fitted()
        enc = encode_fineharm(_as_examples(examples, "examples"), self.tokenizer_, sep=self.sep)
        out: list[float] = []
        for start in range(0, len(enc), 32):
            ids, mask, _, _ = pad_batch(enc[start : start + 32], self.tokenizer_.pad_token_id or 0)
            out += self.model_(ids, mask)[1].softmax(-1)[:, 1].tolist()
        return out

    def monitor(self, **kw: Any) -> Any:
        """The streaming monitor (Defense, stage "output") with the chosen θ and k."""
        from paperplug_scm.streaming import StreamingMonitor

        self._check_fitted()
        opts = {"theta": self.theta_, "k": self.k_, "head": self.head, "sep": self.sep, **kw}
        return StreamingMonitor(self.model_, self.tokenizer_, **opts)

    def save(self, path: str | os.PathLike[str]) -> Path:
        """A checkpoint folder: model, tokenizer, θ/k and settings, optimiser and scheduler."""
        self._check_fitted()
        path = Path(path)
        self.model_.save_pretrained(path)
        self.tokenizer_.save_pretrained(path / "tokenizer")
        settings = {
            key: getattr(self, key)
            for key in (
                "alpha",
                "gamma",
                "reduce",
                "head",
                "learning_rate",
                "lr_decay",
                "epochs",
                "batch_size",
                "grad_accum",
                "weight_decay",
                "max_length",
                "sep",
                "seed",
            )
        }
        settings.update(theta_=self.theta_, k_=self.k_)
        (path / TRAINER_FILE).write_text(json.dumps(settings, indent=1))
        if hasattr(self, "optimizer_"):
            state = {"optimizer": self.optimizer_.state_dict()}
            state["scheduler"] = self.scheduler_.state_dict()
            torch.save(state, path / OPTIMIZER_FILE)
        return path

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> SCMTrainer:
        """A fitted trainer from a `save` folder (optimiser state restored when present)."""
        from transformers import AutoTokenizer

        path = Path(path)
        if not (path / TRAINER_FILE).is_file():
            raise FileNotFoundError(f"{path} is not an SCM checkpoint (no {TRAINER_FILE})")
        settings = json.loads((path / TRAINER_FILE).read_text())
        theta, k = settings.pop("theta_"), settings.pop("k_")
        self = cls(**settings, progress=False)
        self.model_ = SCMModel.from_pretrained(path)
        self.tokenizer_ = AutoTokenizer.from_pretrained(path / "tokenizer")
        self.theta_, self.k_ = theta, k
        self.history_ = History()
        self.loss_ = DualSupervisionLoss(self.alpha, self.gamma, self.reduce)
        if (path / OPTIMIZER_FILE).is_file():
            state = torch.load(path / OPTIMIZER_FILE, weights_only=True)
            self.optimizer_ = torch.optim.AdamW(
                self.model_.parameters(), lr=self.learning_rate, weight_decay=self.weight_decay
            )
            self.optimizer_.load_state_dict(state["optimizer"])
            self.scheduler_ = torch.optim.lr_scheduler.ExponentialLR(self.optimizer_, self.lr_decay)
            self.scheduler_.load_state_dict(state["scheduler"])
        return self
