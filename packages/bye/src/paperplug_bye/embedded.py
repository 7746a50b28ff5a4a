"""The embedded default end to end: clean base -> poisoned fine-tune -> BYE -> re-train on kept rows."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from paperplug_bye.finetuning import Victim, fine_tune
from paperplug_bye.poisoning import BackdoorPoisoning
from paperplug_bye.synthetic import synthetic_vqa
from paperplug_bye.tiny import tiny_llava


@dataclass
class EmbeddedConfig:
    """Sizes of the embedded run. Questions ask the colour; shapes and positions vary in the images."""

    n_train: int = 400
    n_test: int = 150
    n_base: int = 300
    base_epochs: int = 3
    epochs: int = 30
    trigger: str = "patch"
    poison_rate: float = 0.1
    target_answer: str = "banana"
    kinds: tuple[str, ...] = ("color",)
    seed: int = 0
    progress: Callable[[int, float], None] | None = field(default=None, repr=False)


@dataclass
class Backdoored:
    """The poisoned fine-tune: victim recipe, attack, poisoned rows, their truth, and the model."""

    victim: Victim
    attack: BackdoorPoisoning
    dataset: list[dict]
    poisoned: np.ndarray  # bool per row
    model: Any
    asr: float
    clean_accuracy: float


def backdoored_run(config: EmbeddedConfig | None = None) -> Backdoored:
    """Train a clean base, then fine-tune it on the poisoned set (seeded throughout)."""
    c = config or EmbeddedConfig()
    model, processor = tiny_llava(seed=c.seed)
    base = fine_tune(
        model,
        processor,
        synthetic_vqa(c.n_base, seed=c.seed + 100, kinds=c.kinds),
        epochs=c.base_epochs,
        seed=c.seed,
    )
    test = synthetic_vqa(c.n_test, seed=c.seed + 200, kinds=c.kinds)
    victim = Victim(base, processor, test, epochs=c.epochs, seed=c.seed, progress=c.progress)
    attack = BackdoorPoisoning(
        c.trigger, poison_rate=c.poison_rate, target_answer=c.target_answer, seed=c.seed
    )
    result = attack.run(victim, synthetic_vqa(c.n_train, seed=c.seed, kinds=c.kinds))
    truth = np.zeros(c.n_train, dtype=bool)
    truth[result.meta["poisoned"]] = True
    return Backdoored(
        victim,
        attack,
        result.adversarial,
        truth,
        attack.model_,
        result.success_rate,
        result.meta["clean_accuracy"],
    )


def filter_quality(removed: list[int] | np.ndarray, poisoned: np.ndarray) -> tuple[float, float]:
    """Precision and recall of a removal set against the true poisoned rows."""
    flags = np.zeros(len(poisoned), dtype=bool)
    flags[np.asarray(removed, dtype=int)] = True
    hits = int((flags & poisoned).sum())
    return hits / max(int(flags.sum()), 1), hits / max(int(poisoned.sum()), 1)


def random_drop(n: int, count: int, *, seed: int = 0) -> list[int]:
    """The Random Drop control: `count` indices out of `n`, uniformly, seeded."""
    return sorted(np.random.default_rng(seed).choice(n, size=count, replace=False).tolist())
