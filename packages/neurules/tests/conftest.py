"""One thread (shared CPUs) and no progress bars in tests; one planted fit the tests share."""

import os

import pytest

os.environ.setdefault("PAPERPLUG_PROGRESS", "0")


@pytest.fixture(autouse=True, scope="session")
def _one_thread():
    from paperplug.harness import single_thread

    single_thread()


@pytest.fixture(scope="session")
def planted_fit():
    """One fit on the planted rule list (default settings but 200 epochs), shared by several
    tests."""
    from paperplug_neurules import NeuRulesClassifier, planted_rule_data

    X, y = planted_rule_data(n=800, seed=0)
    return NeuRulesClassifier(n_epochs=200, random_state=0).fit(X, y), X, y
