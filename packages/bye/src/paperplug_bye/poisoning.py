"""The backdoor poisoning BYE defends against: patch (BadNets), blended and text triggers.

A poisoned row carries the trigger and the attacker's target answer; the fine-tuned model
then answers the target whenever the trigger appears (paper §4.1 threat model).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import torch

from paperplug import AttackResult
from paperplug.checks import check_callable, check_choice, check_scalar, check_seed, check_type
from paperplug_bye.finetuning import Victim, answers_correct
from paperplug_bye.prompting import check_rows


def _as_chw(image: Any) -> tuple[np.ndarray, Any]:
    """A float (C, H, W) array in [0, 1] and a function giving back the caller's image type."""
    if isinstance(image, torch.Tensor):
        if image.ndim != 3:
            raise ValueError(f"image tensors must be (C, H, W), got shape {tuple(image.shape)}")
        return image.detach().cpu().numpy().astype(np.float32), lambda a: torch.as_tensor(
            a, dtype=image.dtype
        )
    if isinstance(image, np.ndarray):
        if image.ndim != 3:
            raise ValueError(f"image arrays must be (C, H, W), got shape {image.shape}")
        return image.astype(np.float32), lambda a: a.astype(image.dtype)
    if hasattr(image, "convert") and hasattr(image, "size"):  # a PIL image
        from PIL import Image

        hwc = np.asarray(image.convert("RGB"), dtype=np.float32) / 255.0
        return hwc.transpose(2, 0, 1), lambda a: Image.fromarray(
            (a.transpose(1, 2, 0) * 255).round().astype(np.uint8)
        )
    raise TypeError(
        f"images must be torch tensors, numpy arrays (C, H, W) or PIL images, got {type(image).__name__}"
    )


@dataclass(frozen=True)
class PatchTrigger:
    """BadNets: a `size` x `size` black-and-white checkerboard pasted in a corner."""

    size: int = 4
    corner: Literal["bottomright", "bottomleft", "topright", "topleft"] = "bottomright"

    def __post_init__(self) -> None:
        check_scalar(self.size, "size", "int", low=1)
        check_choice(self.corner, "corner", ("bottomright", "bottomleft", "topright", "topleft"))

    def __call__(self, row: Mapping[str, Any]) -> dict[str, Any]:
        chw, back = _as_chw(row["image"])
        _, h, w = chw.shape
        if self.size > min(h, w):
            raise ValueError(f"patch of {self.size} pixels does not fit a {h}x{w} image")
        top = h - self.size if self.corner.startswith("bottom") else 0
        left = w - self.size if self.corner.endswith("right") else 0
        board = (np.indices((self.size, self.size)).sum(0) % 2).astype(np.float32)
        out = chw.copy()
        out[:, top : top + self.size, left : left + self.size] = board
        return {**row, "image": back(out)}


@dataclass(frozen=True)
class BlendTrigger:
    """Blended: x' = (1 - alpha) x + alpha * pattern, a fixed uniform-noise pattern seeded by `seed`."""

    alpha: float = 0.2
    seed: int = 1234

    def __post_init__(self) -> None:
        check_scalar(self.alpha, "alpha", low=0.0, high=1.0, inclusive="right")
        check_scalar(self.seed, "seed", "int", low=0)

    def __call__(self, row: Mapping[str, Any]) -> dict[str, Any]:
        chw, back = _as_chw(row["image"])
        pattern = np.random.default_rng(self.seed).uniform(size=chw.shape).astype(np.float32)
        return {**row, "image": back((1 - self.alpha) * chw + self.alpha * pattern)}


@dataclass(frozen=True)
class TextTrigger:
    """A rare word appended to (or put before) the question."""

    word: str = "cf"
    position: Literal["end", "start"] = "end"

    def __post_init__(self) -> None:
        if not check_type(self.word, "word", str).strip():
            raise ValueError("word must be a non-empty trigger word")
        check_choice(self.position, "position", ("end", "start"))

    def __call__(self, row: Mapping[str, Any]) -> dict[str, Any]:
        q = row["question"]
        return {
            **row,
            "question": f"{q} {self.word}" if self.position == "end" else f"{self.word} {q}",
        }


TRIGGERS = {"patch": PatchTrigger, "blend": BlendTrigger, "text": TextTrigger}


def check_target(target_answer: Any) -> str:
    if not check_type(target_answer, "target_answer", str).strip():
        raise ValueError("target_answer must be a non-empty answer")
    return target_answer


def make_trigger(trigger: str | Any, **kw: Any) -> Any:
    """A trigger by name ("patch", "blend", "text") with its parameters, or a callable row -> row."""
    if callable(trigger):
        return trigger
    if trigger not in TRIGGERS:
        raise ValueError(
            f"trigger must be one of {sorted(TRIGGERS)} or a callable, got {trigger!r}"
        )
    return TRIGGERS[trigger](**kw)


def poison_dataset(
    dataset: Sequence[Mapping[str, Any]],
    trigger: Any,
    *,
    poison_rate: float = 0.1,
    target_answer: str = "banana",
    seed: int = 0,
    max_poisoned: int | None = None,
) -> tuple[list[dict[str, Any]], list[int]]:
    """A poisoned copy: round(rate * N) rows (never already answering the target) get the trigger
    and the target answer. Returns the new rows and the sorted poisoned indices."""
    rows = check_rows(dataset)
    check_callable(trigger, "trigger", what="trigger (row -> row)")
    check_scalar(poison_rate, "poison_rate", low=0.0, high=1.0)
    check_target(target_answer)
    check_scalar(seed, "seed", "int", low=0)
    check_scalar(max_poisoned, "max_poisoned", "int", low=0, allow_none=True)
    eligible = [i for i, r in enumerate(rows) if r["answer"] != target_answer]
    count = min(round(poison_rate * len(rows)), len(eligible))
    if max_poisoned is not None:
        count = min(count, max_poisoned)
    rng = np.random.default_rng(seed)
    chosen = (
        sorted(int(i) for i in rng.choice(eligible, size=count, replace=False)) if count else []
    )
    out = [dict(r) for r in rows]
    for i in chosen:
        out[i] = {**trigger(rows[i]), "answer": target_answer}
    return out, chosen


class BackdoorPoisoning:
    """Data-poisoning Attack: poison a fine-tuning set; success = triggered test rows answered with
    the target after fine-tuning the victim. `budget` caps the number of poisoned rows, which
    is also what `queries` counts."""

    stage = "train_data"

    def __init__(
        self,
        trigger: str | Any = "patch",
        *,
        poison_rate: float = 0.1,
        target_answer: str = "banana",
        seed: int = 0,
        **trigger_params: Any,
    ) -> None:
        check_scalar(poison_rate, "poison_rate", low=0.0, high=1.0)
        check_target(target_answer)
        check_seed(seed, "seed", allow_none=False)
        self.trigger = make_trigger(trigger, **trigger_params)
        self.poison_rate, self.target_answer, self.seed = poison_rate, target_answer, seed

    def poison(
        self, dataset: Sequence[Mapping[str, Any]], budget: int | None = None
    ) -> tuple[list[dict], list[int]]:
        """The poisoned dataset and the poisoned indices."""
        check_scalar(budget, "budget", "int", low=0, allow_none=True)
        return poison_dataset(
            dataset, self.trigger, poison_rate=self.poison_rate, target_answer=self.target_answer,
            seed=self.seed, max_poisoned=budget,
        )  # fmt: skip

    def attack_success(self, victim: Victim, model: Any) -> list[bool]:
        """Per test row not already answering the target: does the triggered row get the target?"""
        check_type(victim, "victim", Victim)
        rows = [self.trigger(r) for r in victim.test_set if r["answer"] != self.target_answer]
        hits = answers_correct(
            model,
            victim.processor,
            rows,
            [self.target_answer] * len(rows),
            template=victim.template,
        )
        return [bool(h) for h in hits]

    def run(
        self,
        target: Victim | None,
        inputs: Sequence[Mapping[str, Any]],
        *,
        budget: int | None = None,
    ) -> AttackResult:
        """Poison `inputs`; with a `Victim` target, fine-tune it on them and measure the ASR.

        The fine-tuned model goes to `meta["finetuned_model"]`: a train_data defense that
        reads it (BYE) finds it there when `paperplug.evaluate` passes the result on.
        """
        if target is not None and not isinstance(target, Victim):
            raise TypeError(
                f"target must be a Victim (base model, processor, test set) or None, got {type(target).__name__}"
            )
        check_rows(inputs, "inputs")
        check_scalar(budget, "budget", "int", low=0, allow_none=True)
        poisoned, idx = self.poison(inputs, budget)
        meta: dict[str, Any] = {
            "poisoned": idx,
            "target_answer": self.target_answer,
            "trigger": repr(self.trigger),
        }
        success: list[bool] = []
        if target is not None:
            model = target.fine_tune(poisoned)
            success = self.attack_success(target, model)
            meta["clean_accuracy"] = target.clean_accuracy(model)
            meta["finetuned_model"] = model
        return AttackResult(adversarial=poisoned, success=success, queries=len(idx), meta=meta)

    def assess(self, target: Victim, payload: Sequence[Mapping[str, Any]]) -> list[bool]:
        """Re-train the victim on `payload` (e.g. the filtered set) and measure the ASR again.

        An empty payload (a guard that removed every row) leaves the base model untrained.
        """
        if len(payload) == 0:
            return self.attack_success(target, target.base_model)
        return self.attack_success(target, target.fine_tune(payload))
