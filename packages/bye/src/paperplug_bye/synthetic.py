"""The embedded synthetic VQA set: one coloured shape per image, asked about colour, shape or place."""

from __future__ import annotations

import numpy as np
import torch

COLORS = {
    "red": (0.9, 0.1, 0.1),
    "green": (0.1, 0.8, 0.2),
    "blue": (0.1, 0.2, 0.9),
    "yellow": (0.9, 0.9, 0.1),
}
SHAPES = ("square", "cross")
PLACES = ("topleft", "topright", "bottomleft", "bottomright")
QUESTIONS = {"color": "what color is it ?", "shape": "what shape is it ?", "place": "where is it ?"}
IMAGE_SIZE = 16
OBJECT_SIZE = 9  # spans several 4x4 patches, so clean attention spreads


def _draw(
    shape: str, color: tuple[float, float, float], place: str, rng: np.random.Generator
) -> torch.Tensor:
    image = rng.uniform(0.35, 0.55, size=(3, IMAGE_SIZE, IMAGE_SIZE)).astype(
        np.float32
    )  # grey noise
    top = (0 if place.startswith("top") else IMAGE_SIZE - OBJECT_SIZE - 1) + int(rng.integers(0, 2))
    left = (0 if place.endswith("left") else IMAGE_SIZE - OBJECT_SIZE - 1) + int(rng.integers(0, 2))
    mask = np.zeros((OBJECT_SIZE, OBJECT_SIZE), dtype=bool)
    if shape == "square":
        mask[1:-1, 1:-1] = True
    else:
        third = OBJECT_SIZE // 3
        mask[third:-third, :] = mask[:, third:-third] = True
    patch = image[:, top : top + OBJECT_SIZE, left : left + OBJECT_SIZE]
    patch[:, mask] = np.asarray(color, dtype=np.float32)[:, None]
    return torch.from_numpy(image)


def synthetic_vqa(
    n: int, *, seed: int = 0, kinds: tuple[str, ...] = tuple(QUESTIONS)
) -> list[dict]:
    """`n` rows {"image": (3, 16, 16) float tensor in [0, 1], "question", "answer"}, seeded.

    `kinds` picks the question types asked (colour, shape, place), uniformly per row.
    """
    if n < 1:
        raise ValueError(f"n must be a positive number of rows, got {n}")
    if not kinds or set(kinds) - set(QUESTIONS):
        raise ValueError(f"kinds must be a non-empty subset of {tuple(QUESTIONS)}, got {kinds}")
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(n):
        color = str(rng.choice(list(COLORS)))
        shape, place = str(rng.choice(SHAPES)), str(rng.choice(PLACES))
        kind = str(rng.choice(list(kinds)))
        answer = {"color": color, "shape": shape, "place": place}[kind]
        rows.append(
            {
                "image": _draw(shape, COLORS[color], place, rng),
                "question": QUESTIONS[kind],
                "answer": answer,
            }
        )
    return rows
