"""One thread (shared CPUs) and no progress bars in tests."""

import os

import pytest

os.environ.setdefault("PAPERPLUG_PROGRESS", "0")


@pytest.fixture(autouse=True, scope="session")
def _one_thread():
    from paperplug.harness import single_thread

    single_thread()


SEEDS = (0, 1, 2, 3, 4)  # the seeded story is asserted over these, with a stated rate


@pytest.fixture(scope="session")
def poisoned_runs():
    """The embedded story at its default size, one per seed: tiny LLaVA fine-tuned on 10% patch
    poison (about 2 s each)."""
    from paperplug_bye import EmbeddedConfig, backdoored_run

    return [backdoored_run(EmbeddedConfig(seed=s)) for s in SEEDS]


@pytest.fixture(scope="session")
def clean_runs():
    """The same recipe on clean rows (poison rate 0), one per seed."""
    from paperplug_bye import EmbeddedConfig, backdoored_run

    return [backdoored_run(EmbeddedConfig(seed=s, poison_rate=0.0)) for s in SEEDS]
