"""The embedded default, shared by demo.py and bench/run.py: a tiny LLaVA fine-tuned on a
synthetic colour-VQA set with a BadNets patch trigger, then BYE, then re-training."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from paperplug import AttackResult
from paperplug.checks import check_array, check_choice, check_scalar, check_sequence, check_type
from paperplug_bye.finetuning import Victim
from paperplug_bye.poisoning import TRIGGERS, BackdoorPoisoning, check_target
from paperplug_bye.prompting import check_indices
from paperplug_bye.synthetic import QUESTIONS, synthetic_vqa
from paperplug_bye.tiny import tiny_llava


@dataclass
class EmbeddedConfig:
    """Sizes of the embedded run (the tests' and the demo's defaults).

    24x24 images in 4x4 patches give 36 image tokens; the trigger covers exactly one. The
    base is the randomly initialised tiny LLaVA: its vision tower stays frozen, as LLaVA's
    CLIP does, and projector and decoder are trained on the rows. One decoder layer with one
    head: with two heads one may read the trigger while the other spreads, and the head
    average hides the collapse; a second layer reads the image with colour-specific queries,
    which splits clean rows into modes (both measured, see the README).
    """

    n_train: int = 160
    n_test: int = 60
    epochs: int = 15
    lr: float = 3e-3
    batch_size: int = 16
    hidden_size: int = 32
    num_layers: int = 1
    num_heads: int = 1
    image_size: int = 24
    trigger: str = "patch"
    poison_rate: float = 0.1
    target_answer: str = "banana"
    kinds: tuple[str, ...] = ("color",)
    seed: int = 0
    progress: bool = False

    def __post_init__(self) -> None:
        for name in ("n_train", "n_test", "epochs", "batch_size", "hidden_size", "num_layers",
                     "num_heads"):  # fmt: skip
            check_scalar(getattr(self, name), name, "int", low=1)
        check_scalar(self.image_size, "image_size", "int", low=4)
        check_scalar(self.lr, "lr", low=0, inclusive="neither")
        check_choice(self.trigger, "trigger", sorted(TRIGGERS))
        check_scalar(self.poison_rate, "poison_rate", low=0.0, high=1.0)
        check_target(self.target_answer)
        kinds = check_sequence(self.kinds, "kinds", str, what="question kinds")
        if set(kinds) - set(QUESTIONS):
            raise ValueError(f"kinds must be a subset of {tuple(QUESTIONS)}, got {self.kinds}")
        check_scalar(self.seed, "seed", "int", low=0)
        check_type(self.progress, "progress", bool)

    def rows(self, n: int, seed: int) -> list[dict]:
        return synthetic_vqa(n, seed=seed, kinds=self.kinds, image_size=self.image_size)


@dataclass
class Backdoored:
    """The poisoned fine-tune: victim recipe, attack, its result, the rows and their truth."""

    victim: Victim
    attack: BackdoorPoisoning
    result: AttackResult
    poisoned: np.ndarray  # bool per row

    @property
    def dataset(self) -> list[dict]:
        return self.result.adversarial

    @property
    def model(self) -> Any:
        return self.result.meta["finetuned_model"]

    @property
    def asr(self) -> float:
        return self.result.success_rate

    @property
    def clean_accuracy(self) -> float:
        return self.result.meta["clean_accuracy"]


def _config(config: Any) -> EmbeddedConfig:
    if config is None:
        return EmbeddedConfig()
    return check_type(config, "config", EmbeddedConfig, what="an EmbeddedConfig (or None)")


def embedded_victim(config: EmbeddedConfig | None = None) -> Victim:
    """The tiny LLaVA, its processor, the fine-tuning recipe and a clean test set, seeded."""
    c = _config(config)
    model, processor = tiny_llava(
        seed=c.seed, hidden_size=c.hidden_size, num_layers=c.num_layers, num_heads=c.num_heads,
        image_size=c.image_size,
    )  # fmt: skip
    return Victim(
        model, processor, c.rows(c.n_test, c.seed + 200), epochs=c.epochs, lr=c.lr,
        batch_size=c.batch_size, seed=c.seed, progress=c.progress,
    )  # fmt: skip


def backdoored_run(config: EmbeddedConfig | None = None) -> Backdoored:
    """Poison the training rows and fine-tune the victim on them (seeded throughout)."""
    c = _config(config)
    victim = embedded_victim(c)
    attack = BackdoorPoisoning(
        c.trigger, poison_rate=c.poison_rate, target_answer=c.target_answer, seed=c.seed
    )
    result = attack.run(victim, c.rows(c.n_train, c.seed))
    truth = np.zeros(c.n_train, dtype=bool)
    truth[result.meta["poisoned"]] = True
    return Backdoored(victim, attack, result, truth)


def retrained(run: Backdoored, removed: Sequence[int]) -> tuple[float, float]:
    """(ASR, clean accuracy) after re-training from the base on the rows not removed."""
    check_type(run, "run", Backdoored, what="a Backdoored run (backdoored_run)")
    drop = set(check_indices(removed, len(run.dataset)))
    kept = [row for i, row in enumerate(run.dataset) if i not in drop]
    model = run.victim.fine_tune(kept) if kept else run.victim.base_model
    asr = float(np.mean(run.attack.attack_success(run.victim, model)))
    return asr, run.victim.clean_accuracy(model)


def filter_quality(removed: Sequence[int], poisoned: np.ndarray) -> tuple[float, float]:
    """Precision and recall of a removal set against the true poisoned rows (nan if undefined)."""
    poisoned = check_array(poisoned, "poisoned", dtype="bool", ndim=1)
    flags = np.zeros(len(poisoned), dtype=bool)
    flags[check_indices(removed, len(poisoned))] = True
    hits = int((flags & poisoned).sum())
    precision = hits / int(flags.sum()) if flags.any() else float("nan")
    recall = hits / int(poisoned.sum()) if poisoned.any() else float("nan")
    return precision, recall


def random_drop(n: int, count: int, *, seed: int = 0) -> list[int]:
    """The Random Drop control: `count` indices out of `n`, uniformly, seeded."""
    check_scalar(n, "n", "int", low=1)
    check_scalar(count, "count", "int", low=0, high=n)
    check_scalar(seed, "seed", "int", low=0)
    return sorted(np.random.default_rng(seed).choice(n, size=count, replace=False).tolist())
