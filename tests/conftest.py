import pytest


@pytest.fixture(autouse=True)
def _strict(monkeypatch):
    monkeypatch.setenv("PAPERPLUG_STRICT_PLUGINS", "1")
