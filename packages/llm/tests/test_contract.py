"""The ChatModel contract from paperplug.testing, on each backend of this package."""

import pytest
from paperplug_llm import HFChatModel, OpenAIChatModel, ScriptedChatModel

from paperplug.testing import ChatModelContract

MSGS = [{"role": "user", "content": "say something"}]


class TestScripted(ChatModelContract):
    @pytest.fixture
    def chat_model(self):
        return ScriptedChatModel(lambda messages, **kw: "a scripted reply")

    @pytest.fixture
    def messages(self):
        return [dict(m) for m in MSGS]


class TestHuggingFace(ChatModelContract):
    @pytest.fixture
    def chat_model(self, tiny_path):
        return HFChatModel(tiny_path, max_tokens=8)

    @pytest.fixture
    def messages(self):
        return [dict(m) for m in MSGS]


class TestOpenAIClient(ChatModelContract):
    @pytest.fixture
    def chat_model(self, scripted_server):
        return OpenAIChatModel("echo", scripted_server.url, timeout=10)

    @pytest.fixture
    def messages(self):
        return [dict(m) for m in MSGS]
