"""Stage 0, supervised fine-tuning on (image, question, answer) rows, and answer checking (paper §4).

BYE reads the attention of the model fine-tuned on the (possibly poisoned) rows; after
filtering, the paper re-trains from the same base on the kept rows. `Victim` bundles that
recipe with a test set. A fine-tuned model records a digest of each row it was trained on,
so BYE can refuse a model that never saw the rows it is asked to filter.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from paperplug.checks import check_scalar, check_type
from paperplug.harness import progress as progress_bar
from paperplug_bye.prompting import (
    PROMPT_TEMPLATE,
    check_model,
    check_processor,
    check_rows,
    check_template,
    encode_with_answers,
    model_device,
    row_answers,
)

TRAINED_ON = "paperplug_bye_trained_on"  # model attribute: digests of the fine-tuning rows


def _image_bytes(image: Any) -> bytes:
    if isinstance(image, torch.Tensor):
        image = image.detach().cpu().numpy()
    if isinstance(image, np.ndarray):
        return f"{image.dtype}{image.shape}".encode() + np.ascontiguousarray(image).tobytes()
    if hasattr(image, "tobytes") and hasattr(image, "mode"):  # a PIL image
        return f"{image.mode}{image.size}".encode() + image.tobytes()
    return repr(image).encode()


def row_digest(row: Mapping[str, Any]) -> str:
    """A short content digest of one (image, question, answer) row."""
    check_rows([check_type(row, "row", Mapping, what="a row (image, question, answer)")], "row")
    h = hashlib.blake2b(digest_size=8)
    for part in (_image_bytes(row["image"]), row["question"].encode(), row["answer"].encode()):
        h.update(len(part).to_bytes(8, "little") + part)
    return h.hexdigest()


def trained_on(model: Any) -> frozenset[str] | None:
    """The digests of the rows `model` was fine-tuned on by `fine_tune`, or None if unknown."""
    check_model(model)
    return getattr(model, TRAINED_ON, None)


def unseen_rows(model: Any, dataset: Sequence[Mapping[str, Any]]) -> list[int] | None:
    """Indices of the rows `model` was not fine-tuned on (None: the model keeps no record)."""
    seen = trained_on(model)
    rows = check_rows(dataset)
    if seen is None:
        return None
    return [i for i, row in enumerate(rows) if row_digest(row) not in seen]


def check_recipe(
    epochs: Any, lr: Any, batch_size: Any, seed: Any, template: Any, progress: Any
) -> None:
    """A fine-tuning recipe's settings, each error naming its parameter."""
    check_scalar(epochs, "epochs", "int", low=1)
    check_scalar(lr, "lr", low=0, inclusive="neither")
    check_scalar(batch_size, "batch_size", "int", low=1)
    check_scalar(seed, "seed", "int", low=0)
    check_template(template)
    check_type(progress, "progress", bool)


def fine_tune(
    model: Any,
    processor: Any,
    dataset: Sequence[Mapping[str, Any]],
    *,
    epochs: int = 15,
    lr: float = 3e-3,
    batch_size: int = 16,
    seed: int = 0,
    template: str = PROMPT_TEMPLATE,
    freeze_vision: bool = True,
    progress: bool = False,
) -> Any:
    """A fine-tuned copy of `model` (the input is untouched): answer-token cross-entropy, AdamW.

    The defaults are the embedded toy's recipe; for a real MLLM pass the user's own.

    As in LLaVA's instruction tuning the vision tower stays frozen; projector and LLM train.
    The batch order comes from a generator seeded by `seed` (the global RNG is not touched).
    The copy records the digests of `dataset`'s rows (see `trained_on`).
    """
    check_model(model)
    check_processor(processor)
    rows = check_rows(dataset)
    check_recipe(epochs, lr, batch_size, seed, template, progress)
    check_type(freeze_vision, "freeze_vision", bool)
    tuned = copy.deepcopy(model).train()
    for name, p in tuned.named_parameters():
        p.requires_grad_(not (freeze_vision and "vision_tower" in name))
    params = [p for p in tuned.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=lr)
    generator = torch.Generator().manual_seed(seed)
    device = model_device(tuned)
    for _ in progress_bar(range(epochs), "fine-tune", disable=not progress):
        for idx in torch.randperm(len(rows), generator=generator).split(batch_size):
            part = [rows[i] for i in idx.tolist()]
            batch = encode_with_answers(processor, part, template, device=device)
            loss = tuned(**batch).loss
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            optimizer.step()
    setattr(tuned, TRAINED_ON, frozenset(row_digest(r) for r in rows))
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
    check_model(model)
    check_processor(processor)
    rows = check_rows(dataset, answers=answers is None)
    check_template(template)
    check_scalar(batch_size, "batch_size", "int", low=1)
    answers = row_answers(rows, answers)
    out, device = [], model_device(model)
    for start in range(0, len(rows), batch_size):
        part = slice(start, start + batch_size)
        batch = encode_with_answers(processor, rows[part], template, answers[part], device=device)
        labels = batch.pop("labels")
        pred = model(**batch).logits[:, :-1].argmax(-1)  # (batch, T-1)
        target = labels[:, 1:]
        out.append(((pred == target) | (target == -100)).all(1).cpu().numpy())
    return np.concatenate(out)


@dataclass
class Victim:
    """What a poisoner targets: a clean base model, its fine-tuning recipe and a clean test set."""

    base_model: Any
    processor: Any
    test_set: Sequence[Mapping[str, Any]]
    epochs: int = 15
    lr: float = 3e-3
    batch_size: int = 16
    seed: int = 0
    template: str = PROMPT_TEMPLATE
    progress: bool = False

    def __post_init__(self) -> None:
        check_model(self.base_model, "base_model")
        check_processor(self.processor)
        self.test_set = check_rows(self.test_set, "test_set")
        check_recipe(self.epochs, self.lr, self.batch_size, self.seed, self.template, self.progress)

    def fine_tune(self, dataset: Sequence[Mapping[str, Any]]) -> Any:
        """The base model fine-tuned on `dataset` with this recipe (a copy; the base is untouched)."""
        return fine_tune(
            self.base_model, self.processor, dataset, epochs=self.epochs, lr=self.lr,
            batch_size=self.batch_size, seed=self.seed, template=self.template,
            progress=self.progress,
        )  # fmt: skip

    def clean_accuracy(self, model: Any) -> float:
        """Share of clean test rows answered correctly (the paper's CP on VQA)."""
        return float(
            answers_correct(model, self.processor, self.test_set, template=self.template).mean()
        )
