"""One thread (shared CPUs) and no progress bars in tests; the small models the tests share."""

import os

import pytest
import torch

from paperplug import seeded_torch

os.environ.setdefault("PAPERPLUG_PROGRESS", "0")


@pytest.fixture(autouse=True, scope="session")
def _one_thread():
    from paperplug.harness import single_thread

    single_thread()


@pytest.fixture
def cnn() -> torch.nn.Module:
    """A small random CNN on (1, 8, 8) inputs with 4 classes, in eval mode."""
    with seeded_torch(0):
        return torch.nn.Sequential(
            torch.nn.Conv2d(1, 4, 3, padding=1),
            torch.nn.ReLU(),
            torch.nn.Flatten(),
            torch.nn.Linear(4 * 8 * 8, 4),
        ).eval()


@pytest.fixture
def mlp() -> torch.nn.Module:
    """A small random tabular MLP: 5 features, 3 classes, in eval mode."""
    with seeded_torch(0):
        return torch.nn.Sequential(
            torch.nn.Linear(5, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3)
        ).eval()


@pytest.fixture
def digits_like() -> torch.Tensor:
    """Images in [0, 1] whose border rows sit on the lower bound, like a digit's background."""
    x = torch.rand(3, 1, 8, 8, generator=torch.Generator().manual_seed(1))
    x[:, :, :2] = 0.0
    return x
