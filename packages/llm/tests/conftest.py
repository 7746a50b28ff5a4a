"""Shared fixtures: one thread, a tiny model saved by path, a scripted model behind a real server."""

import os

import pytest
from paperplug_llm import ChatServer, ScriptedChatModel

os.environ.setdefault("PAPERPLUG_PROGRESS", "0")


@pytest.fixture(autouse=True, scope="session")
def _one_thread():
    from paperplug.harness import single_thread

    single_thread()


@pytest.fixture(scope="session")
def tiny_path(tmp_path_factory):
    from paperplug_llm.tiny import build_tiny_model

    path = tmp_path_factory.mktemp("tiny")
    build_tiny_model(path, seed=0)
    return path


@pytest.fixture(scope="session")
def tiny(tiny_path):
    from paperplug_llm import HFChatModel

    return HFChatModel(tiny_path, max_tokens=12)


@pytest.fixture
def scripted_server():
    model = ScriptedChatModel(lambda messages, **kw: f"echo: {messages[-1]['content']}")
    with ChatServer(model, model_name="echo") as server:
        yield server
