"""The embedded default's data and model, shared by demo.py and bench/run.py: scikit-learn's
digits upsampled to 32×32 in [0, 1] and a small CNN trained on them here (CPU, ~10 s)."""

from __future__ import annotations

import torch

from paperplug import seeded_torch
from paperplug.checks import check_scalar
from paperplug.extras import requires_extra
from paperplug.harness import progress


def load_digits_32(seed: int = 0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """sklearn's 8×8 digits bilinearly upsampled to (1, 32, 32) in [0, 1]; a stratified 75/25
    split (x_train, y_train, x_test, y_test)."""
    with requires_extra("paperplug-adaptgrad", "demo", "the embedded default"):
        from sklearn.datasets import load_digits
        from sklearn.model_selection import train_test_split

    check_scalar(seed, "seed", "int", low=0)
    digits = load_digits()
    x = torch.tensor(digits.images, dtype=torch.float32)[:, None] / 16.0
    x = torch.nn.functional.interpolate(x, size=32, mode="bilinear", align_corners=False)
    x = x.clamp(0, 1)
    y = torch.tensor(digits.target)
    train, test = train_test_split(
        range(len(y)), test_size=0.25, stratify=y.numpy(), random_state=seed
    )
    return x[train], y[train], x[test], y[test]


def digits_cnn(seed: int = 0) -> torch.nn.Module:
    """2 conv + 2 linear layers for (1, 32, 32) inputs and 10 classes, initialised from `seed`."""
    with seeded_torch(seed):
        return torch.nn.Sequential(
            torch.nn.Conv2d(1, 16, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
            torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
            torch.nn.Flatten(), torch.nn.Linear(32 * 8 * 8, 64), torch.nn.ReLU(),
            torch.nn.Linear(64, 10),
        )  # fmt: skip


def train_cnn(
    x: torch.Tensor, y: torch.Tensor, *, epochs: int = 8, seed: int = 0
) -> torch.nn.Module:
    """Adam (lr 2e-3, batch 64) on (x, y); the init and the shuffles come from `seed`, the
    caller's random state is untouched. Returns the model in eval mode."""
    model = digits_cnn(seed)
    generator = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    for _ in progress(range(epochs), "training the digits CNN"):
        order = torch.randperm(len(x), generator=generator)
        for i in range(0, len(x), 64):
            idx = order[i : i + 64]
            loss = torch.nn.functional.cross_entropy(model(x[idx]), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
    return model.eval()


def trained_digits_cnn(
    seed: int = 0, epochs: int = 8
) -> tuple[torch.nn.Module, torch.Tensor, torch.Tensor]:
    """The embedded default: the CNN trained on the digits' training split, and the test split."""
    check_scalar(seed, "seed", "int", low=0)
    check_scalar(epochs, "epochs", "int", low=1)
    x_train, y_train, x_test, y_test = load_digits_32(seed)
    return train_cnn(x_train, y_train, epochs=epochs, seed=seed), x_test, y_test
