"""The embedded synthetic VQA set: one coloured shape per image, asked about colour, shape or place."""

from __future__ import annotations

import numpy as np
import torch

from paperplug.checks import check_scalar, check_sequence

COLORS = {
    "red": (0.9, 0.1, 0.1),
    "green": (0.1, 0.8, 0.2),
    "blue": (0.1, 0.2, 0.9),
    "yellow": (0.9, 0.9, 0.1),
}
SHAPES = ("square", "cross")
PLACES = ("topleft", "topright", "bottomleft", "bottomright")
QUESTIONS = {"color": "what color is it ?", "shape": "what shape is it ?", "place": "where is it ?"}


def _draw(
    shape: str,
    color: tuple[float, float, float],
    place: str,
    rng: np.random.Generator,
    size: int,
    obj: int,
) -> torch.Tensor:
    image = rng.uniform(0.35, 0.55, size=(3, size, size)).astype(np.float32)  # grey noise
    top = (0 if place.startswith("top") else size - obj - 1) + int(rng.integers(0, 2))
    left = (0 if place.endswith("left") else size - obj - 1) + int(rng.integers(0, 2))
    mask = np.zeros((obj, obj), dtype=bool)
    if shape == "square":
        mask[1:-1, 1:-1] = True
    else:
        third = obj // 3
        mask[third:-third, :] = mask[:, third:-third] = True
    patch = image[:, top : top + obj, left : left + obj]
    patch[:, mask] = np.asarray(color, dtype=np.float32)[:, None]
    return torch.from_numpy(image)


def synthetic_vqa(
    n: int,
    *,
    seed: int = 0,
    kinds: tuple[str, ...] = tuple(QUESTIONS),
    image_size: int = 16,
    object_size: int | None = None,
) -> list[dict]:
    """`n` rows {"image": (3, size, size) float tensor in [0, 1], "question", "answer"}, seeded.

    `kinds` picks the question types asked (colour, shape, place), uniformly per row. The
    object (default: 9/16 of the image side) spans several 4x4 patches, so clean attention
    spreads over several image tokens.
    """
    check_scalar(n, "n", "int", low=1)
    check_scalar(seed, "seed", "int", low=0)
    kinds = check_sequence(kinds, "kinds", str, what="question kinds")
    if set(kinds) - set(QUESTIONS):
        raise ValueError(f"kinds must be a non-empty subset of {tuple(QUESTIONS)}, got {kinds}")
    check_scalar(image_size, "image_size", "int", low=4)
    check_scalar(object_size, "object_size", "int", low=3, allow_none=True)
    obj = object_size if object_size is not None else image_size * 9 // 16
    if not 3 <= obj < image_size:
        raise ValueError(f"object_size must lie in [3, image_size), got {obj} for {image_size}")
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(n):
        color = str(rng.choice(list(COLORS)))
        shape, place = str(rng.choice(SHAPES)), str(rng.choice(PLACES))
        kind = str(rng.choice(list(kinds)))
        answer = {"color": color, "shape": shape, "place": place}[kind]
        image = _draw(shape, COLORS[color], place, rng, image_size, obj)
        rows.append({"image": image, "question": QUESTIONS[kind], "answer": answer})
    return rows
