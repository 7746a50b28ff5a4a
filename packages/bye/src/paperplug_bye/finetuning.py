"""Supervised fine-tuning on (image, question, answer) rows, and answer checking (paper §4 setup).

BYE needs the model fine-tuned on the (possibly poisoned) data; after filtering, the paper
re-trains from the same base on the kept rows. `Victim` bundles that recipe with a test set.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from paperplug_bye.prompting import PROMPT_TEMPLATE, check_rows, encode_with_answers


def _batches(n: int, size: int, generator: torch.Generator | None = None) -> list[torch.Tensor]:
    order = torch.randperm(n, generator=generator) if generator is not None else torch.arange(n)
    return list(order.split(size))


def fine_tune(
    model: Any,
    processor: Any,
    dataset: Sequence[Mapping[str, Any]],
    *,
    epochs: int = 30,
    lr: float = 2e-3,
    batch_size: int = 32,
    seed: int = 0,
    template: str = PROMPT_TEMPLATE,
    freeze_vision: bool = True,
    progress: Callable[[int, float], None] | None = None,
) -> Any:
    """A fine-tuned copy of `model` (the input is untouched): answer-token cross-entropy, AdamW.

    As in LLaVA's instruction tuning the vision tower stays frozen; projector and LLM train.
    """
    rows = check_rows(dataset)
    if epochs < 1 or batch_size < 1 or not lr > 0:
        raise ValueError(
            f"epochs, batch_size and lr must be positive, got {epochs}, {batch_size}, {lr}"
        )
    tuned = copy.deepcopy(model).train()
    params = [p for n, p in tuned.named_parameters() if not (freeze_vision and "vision_tower" in n)]
    for name, p in tuned.named_parameters():
        p.requires_grad_(not (freeze_vision and "vision_tower" in name))
    optimizer = torch.optim.AdamW(params, lr=lr)
    generator = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    for epoch in range(epochs):
        total = 0.0
        for idx in _batches(len(rows), batch_size, generator):
            batch = encode_with_answers(processor, [rows[i] for i in idx.tolist()], template)
            loss = tuned(**batch).loss
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            optimizer.step()
            total += loss.item() * len(idx)
        if progress is not None:
            progress(epoch, total / len(rows))
    return tuned.eval()


@torch.no_grad()
def answers_correct(
    model: Any,
    processor: Any,
    dataset: Sequence[Mapping[str, Any]],
    answers: Sequence[str] | None = None,
    *,
    template: str = PROMPT_TEMPLATE,
    batch_size: int = 64,
) -> np.ndarray:
    """Per row: does greedy decoding start with the answer (default: the row's own)?

    Checked teacher-forced in one pass: every answer token is the argmax after its prefix.
    """
    rows = check_rows(dataset)
    answers = [r["answer"] for r in rows] if answers is None else list(answers)
    out = []
    for idx in _batches(len(rows), batch_size):
        ids = idx.tolist()
        batch = encode_with_answers(
            processor, [rows[i] for i in ids], template, [answers[i] for i in ids]
        )
        labels = batch.pop("labels")
        pred = model(**batch).logits[:, :-1].argmax(-1)  # (batch, T-1)
        target = labels[:, 1:]
        out.append(((pred == target) | (target == -100)).all(1).numpy())
    return np.concatenate(out)


@dataclass
class Victim:
    """What a poisoner targets: a clean base model, its fine-tuning recipe and a clean test set."""

    base_model: Any
    processor: Any
    test_set: Sequence[Mapping[str, Any]]
    epochs: int = 30
    lr: float = 2e-3
    batch_size: int = 32
    seed: int = 0
    template: str = PROMPT_TEMPLATE
    progress: Callable[[int, float], None] | None = None

    def fine_tune(self, dataset: Sequence[Mapping[str, Any]]) -> Any:
        """The base model fine-tuned on `dataset` with this recipe (a copy; the base is untouched)."""
        return fine_tune(
            self.base_model, self.processor, dataset, epochs=self.epochs, lr=self.lr,
            batch_size=self.batch_size, seed=self.seed, template=self.template, progress=self.progress,
        )  # fmt: skip

    def clean_accuracy(self, model: Any) -> float:
        """Share of clean test rows answered correctly (the paper's CP on VQA)."""
        return float(
            answers_correct(model, self.processor, self.test_set, template=self.template).mean()
        )
