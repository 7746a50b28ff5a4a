import pytest
import torch
from paperplug_neurules import NeuRulesClassifier, planted_rule_data


@pytest.fixture(autouse=True, scope="session")
def _one_thread():
    torch.set_num_threads(1)


@pytest.fixture(scope="session")
def planted_fit():
    """One default-settings fit on the planted rule list (about 5 s), shared by several tests."""
    X, y = planted_rule_data(seed=0)
    return NeuRulesClassifier(random_state=0).fit(X, y), X, y
