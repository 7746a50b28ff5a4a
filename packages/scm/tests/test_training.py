"""Dual-supervision training on the seeded default, checkpoints, and the role contracts."""

import pytest
from paperplug_scm import SCMTrainer, StreamingMonitor, make_fineharm_like
from paperplug_scm.fineharm import response_text

from paperplug.testing import DefenseContract, TrainerContract


def test_scm_detects_early_on_the_seeded_default(trained, splits):
    m = trained.evaluate(splits[2])
    assert m["macro_f1"] >= 0.9
    assert m["frac_read_harmful"] < 0.6
    assert trained.history_["loss"][-1] < trained.history_["loss"][0]
    assert trained.history_["lr"][-1] < 1e-3  # the exponential schedule decays per step


def test_checkpoint_round_trip(trained, checkpoint, splits):
    loaded = SCMTrainer.load(checkpoint)
    assert (loaded.theta_, loaded.k_) == (trained.theta_, trained.k_)
    a, _ = trained.score(splits[2][:5])
    b, _ = loaded.score(splits[2][:5])
    assert [x for r in a for x in r] == pytest.approx([x for r in b for x in r], abs=1e-6)
    assert loaded.optimizer_.state_dict()["state"].keys() == (
        trained.optimizer_.state_dict()["state"].keys()
    )
    mon = StreamingMonitor.from_pretrained(checkpoint, k=2)
    assert mon.k == 2 and mon.theta == trained.theta_


def test_same_seed_same_model(splits):
    small = splits[0][:40]
    kw = {"epochs": 1, "progress": False, "tiny": {"hidden_size": 32, "num_layers": 1}}
    a = SCMTrainer(seed=5, **kw).fit(small).score(small[:3])[0]
    b = SCMTrainer(seed=5, **kw).fit(small).score(small[:3])[0]
    assert a == b


def test_bad_training_input_rejected():
    with pytest.raises(ValueError):
        SCMTrainer().fit([])
    with pytest.raises(TypeError):
        SCMTrainer().fit("FineHarm")
    with pytest.raises(ValueError, match="tokenizer"):
        import torch

        SCMTrainer(torch.nn.Linear(2, 2)).fit(make_fineharm_like(4))
    with pytest.raises(RuntimeError, match="not fitted"):
        SCMTrainer().monitor()


class TestTrainerContract(TrainerContract):
    component = "scm"
    params = {"epochs": 1, "progress": False, "tiny": {"hidden_size": 32, "num_layers": 1}}

    @pytest.fixture
    def fit_case(self):
        return (make_fineharm_like(24, seed=4),), {}


class TestDefenseContract(DefenseContract):
    component = "scm"

    @pytest.fixture
    def instance(self, installed_pm, checkpoint):
        return installed_pm.load(self.role, self.component, path=checkpoint)

    @pytest.fixture
    def defense_case(self, splits):
        ex = next(e for e in splits[2] if any(e["sentence_labels"]))
        return response_text(ex), {"prompt": ex["prompt"]}
