"""Dual-supervision training (paper §4.2, §5.1): the Trainer role.

AdamW (lr 1e-4, weight decay 0.01), ExponentialLR with γ = 0.99 per optimiser step, batch 8,
gradient accumulation 2, 3 epochs, seed 42: the released code's settings. After training,
θ and k are chosen on validation data by macro-F1 (paper §5.1).
"""

from __future__ import annotations

import copy
import os
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from paperplug import History, seeded_torch
from paperplug.checks import (
    check_choice,
    check_device,
    check_is_fitted,
    check_scalar,
    check_sequence,
    check_type,
)
from paperplug_scm.checkpoint import load_checkpoint, save_checkpoint
from paperplug_scm.evaluation import KS, THETAS, choose_theta_k, stream_metrics
from paperplug_scm.fineharm import check_examples, encode_fineharm
from paperplug_scm.loss import DualSupervisionLoss
from paperplug_scm.model import HEADS, SCMModel, pad_batch, score_responses
from paperplug_scm.stitching import n_words, stitch_replies
from paperplug_scm.stopping import check_rule
from paperplug_scm.streaming import StreamingMonitor
from paperplug_scm.synthetic import build_word_tokenizer, example_texts

OPTIMIZER_FILE = "optimizer.pt"
SETTINGS = (
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
    "window",
    "frame",
    "long_replies",
    "long_words",
    "long_harmful",
    "val_long",
    "val_words",
    "seed",
)


def length_batches(
    lengths: Sequence[int], batch_size: int, rng: random.Random, pool: int = 16
) -> list[list[int]]:
    """One epoch's batches: a shuffled order, cut into pools of `pool` batches sorted by
    length (so a long reply is padded with long ones, not with 8 short ones), shuffled."""
    order = list(range(len(lengths)))
    rng.shuffle(order)
    batches = []
    for start in range(0, len(order), batch_size * pool):
        chunk = sorted(order[start : start + batch_size * pool], key=lengths.__getitem__)
        batches += [chunk[i : i + batch_size] for i in range(0, len(chunk), batch_size)]
    rng.shuffle(batches)
    return batches


class SCMTrainer:
    """Train an SCM on FineHarm-format data; `monitor()` gives the streaming Defense.

    `backbone`: None (a tiny random Qwen2 from paperplug-llm's `build_tiny_decoder` and a
    word-level tokenizer built from the data; `tiny` sets its size), a Hugging Face name or
    path, or a torch module (then pass its `tokenizer`). `alpha=0, gamma=0, head="response"`
    trains the full-detection baseline instead. Long replies (README): `frame` ("auto": half
    the longest training reply; None: the whole reply), `long_replies` stitched benign
    replies of up to `long_words` words (None: two frames), `val_long` stitched benign
    validation replies of up to `val_words` words for the choice of θ/k, and `window` for
    the windowed delay-k (None: the paper's cumulative count); `PAPER_READING` turns all four
    off. `seed` draws the heads, the tiny backbone, the batch order, dropout and the stitched
    replies, without touching the caller's random state.
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
        window: int | None = 16,
        frame: int | str | None = "auto",
        long_replies: float = 0.25,
        long_words: int | None = None,
        long_harmful: float = 0.0,
        val_long: int = 100,
        val_words: int = 4000,
        tiny: dict[str, int] | None = None,
        device: str | torch.device = "cpu",
        seed: int = 42,
        progress: bool = True,
    ) -> None:
        self.backbone, self.tokenizer = backbone, tokenizer
        self.alpha, self.gamma, self.reduce, self.head = alpha, gamma, reduce, head
        self.learning_rate, self.lr_decay, self.epochs = learning_rate, lr_decay, epochs
        self.batch_size, self.grad_accum, self.weight_decay = batch_size, grad_accum, weight_decay
        self.max_length, self.sep, self.thetas, self.ks = max_length, sep, thetas, ks
        self.theta, self.k, self.window, self.tiny = theta, k, window, tiny
        self.frame, self.long_replies, self.long_words = frame, long_replies, long_words
        self.long_harmful, self.val_long, self.val_words = long_harmful, val_long, val_words
        self.device, self.seed, self.progress = device, seed, progress

    def _vet_settings(self) -> None:
        """Every setting checked before any work, each error naming its parameter."""
        kinds = (type(None), str, os.PathLike, torch.nn.Module)
        check_type(self.backbone, "backbone", kinds, what="None, a name/path or a torch module")
        if isinstance(self.backbone, torch.nn.Module) and self.tokenizer is None:
            raise ValueError("a torch-module backbone needs its tokenizer= as well")
        if self.tokenizer is not None and not getattr(self.tokenizer, "is_fast", False):
            raise TypeError(  # token labels align words through the offset mapping
                "tokenizer must be None or a fast Hugging Face tokenizer (is_fast, with "
                f"offset mapping), got {type(self.tokenizer).__name__}"
            )
        DualSupervisionLoss(self.alpha, self.gamma, self.reduce)  # alpha, gamma, reduce
        check_choice(self.head, "head", HEADS)
        check_scalar(self.learning_rate, "learning_rate", low=0.0, inclusive="neither")
        check_scalar(self.lr_decay, "lr_decay", low=0.0, high=1.0, inclusive="right")
        for name in ("epochs", "batch_size", "grad_accum", "max_length"):
            check_scalar(getattr(self, name), name, "int", low=1)
        check_scalar(self.weight_decay, "weight_decay", low=0.0)
        check_type(self.sep, "sep", str)
        for i, theta in enumerate(check_sequence(self.thetas, "thetas")):
            check_scalar(theta, f"thetas[{i}]", low=0.0, high=1.0, inclusive="right")
        for i, k in enumerate(check_sequence(self.ks, "ks")):
            check_scalar(k, f"ks[{i}]", "int", low=1)
        check_rule(self.theta, self.k, self.window)
        if self.frame != "auto":
            check_scalar(self.frame, "frame", "int", low=1, allow_none=True)
        check_scalar(self.long_replies, "long_replies", low=0.0)
        check_scalar(self.long_words, "long_words", "int", low=1, allow_none=True)
        check_scalar(self.long_harmful, "long_harmful", low=0.0, high=1.0)
        check_scalar(self.val_long, "val_long", "int", low=0)
        check_scalar(self.val_words, "val_words", "int", low=1)
        check_type(self.tiny, "tiny", (dict, type(None)), what="None or a dict of sizes")
        check_scalar(self.seed, "seed", "int")
        check_device(self.device)
        check_type(self.progress, "progress", bool)

    def _build(self, texts: list[str]) -> None:
        if self.backbone is None:
            from paperplug_llm import build_tiny_decoder

            self.tokenizer_ = self.tokenizer or build_word_tokenizer(texts)
            backbone = build_tiny_decoder(
                len(self.tokenizer_), family="qwen2", seed=self.seed, **(self.tiny or {})
            )
        elif isinstance(self.backbone, (str, os.PathLike)):
            from transformers import AutoModel, AutoTokenizer

            self.tokenizer_ = self.tokenizer or AutoTokenizer.from_pretrained(str(self.backbone))
            with seeded_torch(self.seed):  # a part missing from the weights is drawn
                backbone = AutoModel.from_pretrained(str(self.backbone))
        else:  # a torch module (checked in fit)
            self.tokenizer_, backbone = self.tokenizer, copy.deepcopy(self.backbone)
        self.model_ = SCMModel(backbone, seed=self.seed).to(self.device)

    def fit(self, train: Sequence[dict[str, Any]], validation: Any = None) -> SCMTrainer:
        """Train with the dual loss (§4.2); choose θ and k on `validation` when given (§5.1)."""
        self._vet_settings()
        train = check_examples(train, "train")
        val = check_examples(validation, "validation") if validation is not None else None
        self._build(example_texts(train + (val or [])))
        self.loss_ = DualSupervisionLoss(self.alpha, self.gamma, self.reduce)
        encoded = encode_fineharm(train, self.tokenizer_, sep=self.sep, max_length=self.max_length)
        self.frame_ = self.frame
        if self.frame == "auto":  # read no more than the longest training reply
            longest = max(len(e.input_ids) - e.response_start for e in encoded)
            self.frame_ = max(1, -(-longest // 2))
        self.optimizer_ = torch.optim.AdamW(
            self.model_.parameters(), lr=self.learning_rate, weight_decay=self.weight_decay
        )
        self.scheduler_ = torch.optim.lr_scheduler.ExponentialLR(self.optimizer_, self.lr_decay)
        self.history_ = History()
        with seeded_torch(self.seed):  # dropout draws from torch's generator: the caller's returns
            self._train(encoded, train)
        self.model_.frame = self.frame_
        self.theta_, self.k_ = self.theta, self.k
        if val is not None:
            scores, labels = self.score(val)
            long = self._long_benign(val)
            long_scores = self.score(long)[0] if long else []
            self.theta_, self.k_, _ = choose_theta_k(
                scores + long_scores,
                labels + [0] * len(long_scores),
                self.thetas,
                self.ks,
                self.window,
            )
            m = stream_metrics(scores, labels, self.theta_, self.k_, self.window)
            self.history_.log(val_macro_f1=m["macro_f1"], theta=self.theta_, k=self.k_)
        return self

    def _long_benign(self, val: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """`val_long` benign replies of up to `val_words` words stitched from validation's
        benign replies: θ and k must also let long benign replies through."""
        benign = [ex for ex in val if not any(int(y) for y in ex["sentence_labels"])]
        if not self.val_long or not benign:
            return []
        shortest = min(max(n_words(ex) for ex in benign), self.val_words)
        return stitch_replies(
            benign,
            self.val_long,
            min_words=shortest,
            max_words=self.val_words,
            harmful_fraction=0.0,
            seed=self.seed,
        )

    def _stitched(self, train: list[dict[str, Any]], epoch: int) -> list[Any]:
        """This epoch's length-varied replies (fresh each epoch), encoded."""
        n = round(self.long_replies * len(train))
        if not n:
            return []
        longest_reply = max(n_words(ex) for ex in train)
        most = self.long_words or (2 * self.frame_ if self.frame_ else longest_reply)
        longest = min(longest_reply, most)
        seed = self.seed * 1000 + epoch
        long = stitch_replies(
            train,
            n,
            min_words=longest,
            max_words=most,
            harmful_fraction=self.long_harmful,
            seed=seed,
        )
        return encode_fineharm(long, self.tokenizer_, sep=self.sep, max_length=self.max_length)

    def _train(self, encoded: list[Any], train: list[dict[str, Any]]) -> None:
        from tqdm.auto import tqdm

        pad_id = self.tokenizer_.pad_token_id or 0
        rng = random.Random(self.seed)
        n_long = round(self.long_replies * len(train))
        batches_per_epoch = -(-(len(encoded) + n_long) // self.batch_size)
        bar = tqdm(
            total=self.epochs * batches_per_epoch, desc="SCM train", disable=not self.progress
        )
        self.model_.train()
        step = 0
        order = list(range(len(encoded)))
        for epoch in range(self.epochs):
            rng.shuffle(order)
            stitched = self._stitched(train, epoch)
            epoch_set = encoded + stitched
            if stitched:  # replies of very different lengths: batch them by length
                lengths = [len(e.input_ids) for e in epoch_set]
                batches = length_batches(lengths, self.batch_size, rng)
            else:  # the released code's plain shuffled batches
                size = self.batch_size
                batches = [order[i : i + size] for i in range(0, len(order), size)]
            for b, indices in enumerate(batches):
                batch = [epoch_set[i] for i in indices]
                ids, mask, token_labels, response_labels = (
                    t.to(self.model_.device) for t in pad_batch(batch, pad_id)
                )
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

    def score(self, examples: Sequence[dict[str, Any]]) -> tuple[list[list[float]], list[int]]:
        """Per-token P(harmful) on each response (from `head`), and the response labels."""
        check_is_fitted(self, "model_")
        examples = check_examples(examples, "examples")
        enc = encode_fineharm(examples, self.tokenizer_, sep=self.sep, max_length=self.max_length)
        return score_responses(self.model_, enc, head=self.head), [e.response_label for e in enc]

    def evaluate(
        self, examples: Sequence[dict[str, Any]], theta: float | None = None, k: int | None = None
    ) -> dict[str, float]:
        """Streaming macro-F1, false alarms, misses and fraction of tokens read (θ_, k_ default)."""
        scores, labels = self.score(examples)
        theta = self.theta_ if theta is None else theta
        return stream_metrics(scores, labels, theta, self.k_ if k is None else k, self.window)

    @torch.no_grad()
    def full_detection(self, examples: Sequence[dict[str, Any]]) -> list[float]:
        """P(harmful) of whole responses from the response head (full-detection mode)."""
        check_is_fitted(self, "model_")
        enc = encode_fineharm(check_examples(examples, "examples"), self.tokenizer_, sep=self.sep)
        out: list[float] = []
        for start in range(0, len(enc), 32):
            ids, mask, _, _ = pad_batch(enc[start : start + 32], self.tokenizer_.pad_token_id or 0)
            logits = self.model_(ids.to(self.model_.device), mask.to(self.model_.device))[1]
            out += logits.softmax(-1)[:, 1].tolist()
        return out

    def monitor(self, **kw: Any) -> StreamingMonitor:
        """The streaming monitor (Defense, stage "output") with the chosen θ, k and window."""
        check_is_fitted(self, "model_")
        opts = {"theta": self.theta_, "k": self.k_, "head": self.head, "window": self.window}
        return StreamingMonitor(self.model_, self.tokenizer_, **{**opts, **kw})

    def save(self, path: str | os.PathLike[str]) -> Path:
        """A checkpoint folder: model, tokenizer, θ/k and settings, optimiser and scheduler."""
        check_is_fitted(self, "model_")
        settings = {key: getattr(self, key) for key in SETTINGS}
        settings.update(theta_=self.theta_, k_=self.k_)
        path = save_checkpoint(path, self.model_, self.tokenizer_, settings)
        if hasattr(self, "optimizer_"):
            state = {"optimizer": self.optimizer_.state_dict()}
            state["scheduler"] = self.scheduler_.state_dict()
            torch.save(state, path / OPTIMIZER_FILE)
        return path

    @classmethod
    def load(cls, path: str | os.PathLike[str], *, device: Any = None) -> SCMTrainer:
        """A fitted trainer from a `save` folder (optimiser state restored when present)."""
        model, tokenizer, settings = load_checkpoint(path, device=device)
        theta, k = settings.pop("theta_"), settings.pop("k_")
        trainer = cls(**settings, device=model.device, progress=False)
        trainer.model_, trainer.tokenizer_ = model, tokenizer
        trainer.theta_, trainer.k_, trainer.frame_ = theta, k, model.frame
        trainer.history_ = History()
        trainer.loss_ = DualSupervisionLoss(trainer.alpha, trainer.gamma, trainer.reduce)
        path = Path(path)
        if (path / OPTIMIZER_FILE).is_file():
            state = torch.load(path / OPTIMIZER_FILE, weights_only=True, map_location="cpu")
            trainer.optimizer_ = torch.optim.AdamW(
                trainer.model_.parameters(),
                lr=trainer.learning_rate,
                weight_decay=trainer.weight_decay,
            )
            trainer.optimizer_.load_state_dict(state["optimizer"])
            trainer.scheduler_ = torch.optim.lr_scheduler.ExponentialLR(
                trainer.optimizer_, trainer.lr_decay
            )
            trainer.scheduler_.load_state_dict(state["scheduler"])
        return trainer
