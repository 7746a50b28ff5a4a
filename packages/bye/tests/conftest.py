import pytest
import torch
from paperplug_bye import EmbeddedConfig, backdoored_run


@pytest.fixture(autouse=True, scope="session")
def _one_thread():
    torch.set_num_threads(1)


SMALL = EmbeddedConfig(seed=0)  # the demo's default sizes


@pytest.fixture(scope="session")
def seeded_run():
    """The embedded story at test size (about 15 s): tiny LLaVA fine-tuned on 10% patch poison."""
    torch.set_num_threads(1)
    return backdoored_run(SMALL)
