"""Seeds are parameters: a method never changes its caller's global random state.

torch's module initialisers draw from torch's global generator; `seeded_torch` runs such a
block from a given seed and gives the caller's generator back untouched afterwards.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


@contextlib.contextmanager
def seeded_torch(seed: int) -> Iterator[None]:
    """Run the block (e.g. building a model) with torch's generators seeded by `seed`, then
    restore the caller's states (torch.random.fork_rng): the CPU generator, and every CUDA
    device's when CUDA is already initialised (seeding it does not initialise it)."""
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"seed must be an int, got {type(seed).__name__}")
    import torch

    cuda = torch.cuda.is_available() and torch.cuda.is_initialized()
    devices = list(range(torch.cuda.device_count())) if cuda else []
    with torch.random.fork_rng(devices=devices):
        torch.manual_seed(seed)
        yield
