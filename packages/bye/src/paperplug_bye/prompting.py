"""Rows (image, question, answer) to model inputs, through any LLaVA-style processor."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch

from paperplug.checks import (
    check_callable,
    check_data,
    check_device,
    check_scalar,
    check_sequence,
    check_type,
)

PROMPT_TEMPLATE = "USER: <image>\n{question} ASSISTANT:"
"""LLaVA-1.5's conversation prompt (llava-hf), the assistant turn left open."""


def check_rows(
    dataset: Any, what: str = "dataset", *, answers: bool = True
) -> list[Mapping[str, Any]]:
    """The rows of a VQA dataset, each a mapping with image, question and (if `answers`)
    answer; an array image finite; else a clear error (images of several sizes are the
    processor's to take or refuse)."""
    if isinstance(dataset, (str, bytes)) or not hasattr(dataset, "__len__"):
        raise TypeError(f"{what} must be a sequence of rows, got {type(dataset).__name__}")
    rows = [dataset[i] for i in range(len(dataset))]
    if not rows:
        raise ValueError(f"{what} is empty")
    keys = ("image", "question", "answer") if answers else ("image", "question")
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise TypeError(f"{what}[{i}] must be a mapping with {', '.join(keys)}")
        missing = [k for k in keys if k not in row]
        if missing:
            raise ValueError(f"{what}[{i}] lacks {missing}")
        if not all(isinstance(row[k], str) for k in keys[1:]):
            raise TypeError(f"{what}[{i}]: {' and '.join(keys[1:])} must be strings")
        if hasattr(row["image"], "dtype") and hasattr(row["image"], "shape"):  # not a PIL image
            check_data(row["image"], f"{what}[{i}]['image']", dtype="numeric")
    return rows


def row_answers(rows: Sequence[Mapping[str, Any]], answers: Any) -> list[str]:
    """One answer string per row: `answers` checked, or each row's own when None."""
    if answers is None:
        return [r["answer"] for r in rows]
    answers = check_sequence(answers, "answers", str, what="strings")
    if len(answers) != len(rows):
        raise ValueError(f"answers must hold one per row ({len(rows)}), got {len(answers)}")
    return list(answers)


def check_indices(removed: Any, n: int, name: str = "removed") -> list[int]:
    """Row indices in [0, n) (the rows a filter removes)."""
    if isinstance(removed, (str, bytes)) or not hasattr(removed, "__iter__"):
        raise TypeError(f"{name} must be a list of row indices, got {type(removed).__name__}")
    out = [check_scalar(i, f"{name}[{j}]", "int") for j, i in enumerate(removed)]
    bad = [i for i in out if not 0 <= i < n]
    if bad:
        raise ValueError(f"{name} holds indices out of range 0..{n - 1}: {bad[:5]}")
    return out


def check_template(template: Any) -> str:
    """A prompt template holding "{question}" (and the processor's image placeholder)."""
    if "{question}" not in check_type(template, "template", str):
        raise ValueError(f"template must hold '{{question}}', got {template!r}")
    return template


def check_model(model: Any, name: str = "model") -> torch.nn.Module:
    return check_type(model, name, torch.nn.Module, what="a torch module (an MLLM)")


def check_processor(processor: Any) -> Any:
    return check_callable(processor, "processor", what="processor (text=, images=) -> inputs")


def model_device(model: Any) -> torch.device:
    """The device of the model's first parameter (its inputs are moved there)."""
    check_model(model)
    return next((p.device for p in model.parameters()), torch.device("cpu"))


def to_device(batch: Mapping[str, Any], device: torch.device | str | None) -> dict[str, Any]:
    """A copy of `batch` with its tensors on `device` (None: unchanged)."""
    check_type(batch, "batch", Mapping)
    if device is None:
        return dict(batch)
    device = check_device(device)
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
    check_processor(processor)
    rows = check_rows(rows, "rows", answers=False)
    texts = [check_template(template).format(question=r["question"]) for r in rows]
    if device is not None:
        check_device(device)
    inputs = _processed(processor, texts, [r["image"] for r in rows])
    return to_device(inputs, device)


def _processed(processor: Any, texts: list[str], images: list[Any]) -> dict[str, Any]:
    """The processor's tensors; its refusal of the rows (a size it cannot take) named."""
    try:
        return dict(processor(text=texts, images=images, return_tensors="pt", padding=True))
    except ValueError as exc:
        raise ValueError(f"rows: the processor refused them: {exc}") from exc


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
    prompt_len = encode_prompts(processor, rows, template)["attention_mask"].sum(1)
    rows = check_rows(rows, "rows", answers=answers is None)
    answers = row_answers(rows, answers)
    texts = [
        template.format(question=r["question"]) + " " + a
        for r, a in zip(rows, answers, strict=True)
    ]
    batch = _processed(processor, texts, [r["image"] for r in rows])
    mask = batch["attention_mask"].bool()
    order = mask.long().cumsum(1) - 1  # rank of each real token in its row
    is_answer = mask & (order >= prompt_len[:, None])
    batch["labels"] = torch.where(
        is_answer, batch["input_ids"], torch.full_like(batch["input_ids"], -100)
    )
    return to_device(batch, device)
