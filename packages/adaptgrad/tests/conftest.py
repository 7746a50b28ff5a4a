"""One thread (the machine is shared) and the small models the tests share."""

import pytest
import torch

torch.set_num_threads(1)


@pytest.fixture
def cnn() -> torch.nn.Module:
    """A small random CNN on (1, 8, 8) inputs with 4 classes, in eval mode."""
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Conv2d(1, 4, 3, padding=1),
        torch.nn.ReLU(),
        torch.nn.Flatten(),
        torch.nn.Linear(4 * 8 * 8, 4),
    ).eval()


@pytest.fixture
def digits_like() -> torch.Tensor:
    """Images in [0, 1] whose border rows sit on the lower bound, like a digit's background."""
    x = torch.rand(3, 1, 8, 8, generator=torch.Generator().manual_seed(1))
    x[:, :, :2] = 0.0
    return x
