"""Rows (image, question, answer) to model inputs, through any LLaVA-style processor."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch

from paperplug.checks import check_data

PROMPT_TEMPLATE = "USER: <image>\n{question} ASSISTANT:"
"""LLaVA-1.5's conversation prompt (llava-hf), the assistant turn left open."""


def check_rows(dataset: Any, what: str = "dataset") -> list[Mapping[str, Any]]:
    """The rows of a VQA dataset, each a mapping with image, question and answer; else a clear error."""
    if isinstance(dataset, (str, bytes)) or not hasattr(dataset, "__len__"):
        raise TypeError(f"{what} must be a sequence of rows, got {type(dataset).__name__}")
    rows = [dataset[i] for i in range(len(dataset))]
    if not rows:
        raise ValueError(f"{what} is empty")
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise TypeError(f"{what}[{i}] must be a mapping with image, question, answer")
        missing = [k for k in ("image", "question", "answer") if k not in row]
        if missing:
            raise ValueError(f"{what}[{i}] lacks {missing}")
        if not isinstance(row["question"], str) or not isinstance(row["answer"], str):
            raise TypeError(f"{what}[{i}]: question and answer must be strings")
        if hasattr(row["image"], "dtype") and hasattr(row["image"], "shape"):  # not a PIL image
            check_data(row["image"], f"{what}[{i}]['image']", dtype="numeric")
    return rows


def model_device(model: Any) -> torch.device:
    """The device of the model's first parameter (its inputs are moved there)."""
    return next((p.device for p in model.parameters()), torch.device("cpu"))


def to_device(batch: Mapping[str, Any], device: torch.device | str | None) -> dict[str, Any]:
    """A copy of `batch` with its tensors on `device` (None: unchanged)."""
    if device is None:
        return dict(batch)
    return {k: v.to(device) if isinstance(v, torch.Tensor) else v for k, v in batch.items()}


def encode_prompts(
    processor: Any,
    rows: Sequence[Mapping[str, Any]],
    template: str = PROMPT_TEMPLATE,
    *,
    device: torch.device | str | None = None,
) -> dict[str, torch.Tensor]:
    """Processor outputs for the prompts alone (image + question, assistant turn open),
    on `device` (default: where the processor leaves them)."""
    texts = [template.format(question=r["question"]) for r in rows]
    images = [r["image"] for r in rows]
    return to_device(
        processor(text=texts, images=images, return_tensors="pt", padding=True), device
    )


def encode_with_answers(
    processor: Any,
    rows: Sequence[Mapping[str, Any]],
    template: str = PROMPT_TEMPLATE,
    answers: Sequence[str] | None = None,
    *,
    device: torch.device | str | None = None,
) -> dict[str, torch.Tensor]:
    """Prompt + answer inputs with `labels` on the answer tokens only (-100 elsewhere), for SFT.

    The answer starts after as many real tokens as the prompt alone has, whichever side pads.
    """
    answers = [r["answer"] for r in rows] if answers is None else list(answers)
    prompt_len = encode_prompts(processor, rows, template)["attention_mask"].sum(1)
    texts = [
        template.format(question=r["question"]) + " " + a
        for r, a in zip(rows, answers, strict=True)
    ]
    batch = dict(
        processor(text=texts, images=[r["image"] for r in rows], return_tensors="pt", padding=True)
    )
    mask = batch["attention_mask"].bool()
    order = mask.long().cumsum(1) - 1  # rank of each real token in its row
    is_answer = mask & (order >= prompt_len[:, None])
    batch["labels"] = torch.where(
        is_answer, batch["input_ids"], torch.full_like(batch["input_ids"], -100)
    )
    return to_device(batch, device)
