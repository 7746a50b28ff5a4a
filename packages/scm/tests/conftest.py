import pytest
import torch
from paperplug_scm import SCMTrainer, make_fineharm_like


@pytest.fixture(autouse=True, scope="session")
def _one_thread():
    torch.set_num_threads(1)


@pytest.fixture(scope="session")
def splits():
    """A seeded FineHarm-like set: 300 train, 100 validation, 200 test responses."""
    data = make_fineharm_like(600, seed=0)
    return data[:300], data[300:400], data[400:]


@pytest.fixture(scope="session")
def trained(splits):
    """SCM on the tiny Qwen2 default (about 5 s); lr 1e-3 for a random-init backbone."""
    train, val, _ = splits
    return SCMTrainer(learning_rate=1e-3, lr_decay=0.995, progress=False).fit(train, val)


@pytest.fixture(scope="session")
def checkpoint(trained, tmp_path_factory):
    return trained.save(tmp_path_factory.mktemp("scm") / "ckpt")
