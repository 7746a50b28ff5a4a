"""Chat-model backends for paperplug's LLM-based methods (the core's ChatModel protocol).

OpenAI-compatible HTTP client, local Hugging Face backend, the embedded SmolLM2-135M-Instruct,
a loopback OpenAI-compatible server, and tools with a small validated agent loop.
Heavy modules (torch, transformers) load only when a local backend is used.
"""

from __future__ import annotations

import importlib
from typing import Any

from paperplug_llm.agent import AgentResult, ToolRun, execute_call, propose, run_agent
from paperplug_llm.backends import get_chat_model
from paperplug_llm.errors import LLMError, LLMHTTPError, LLMResponseError, LLMTimeoutError
from paperplug_llm.messages import Completion, ToolCall, check_messages
from paperplug_llm.openai_client import OpenAIChatModel
from paperplug_llm.scripted import ScriptedChatModel
from paperplug_llm.server import ChatServer
from paperplug_llm.tool_calls import parse_tool_calls, tool_system_prompt
from paperplug_llm.tools import Tool, ToolArgumentError, as_tools, tool

_LAZY = {
    "HFChatModel": "paperplug_llm.hf",
    "load_smollm2": "paperplug_llm.smollm2",
    "build_tiny_model": "paperplug_llm.tiny",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'paperplug_llm' has no attribute {name!r}")


__all__ = [
    "AgentResult",
    "ChatServer",
    "Completion",
    "HFChatModel",
    "LLMError",
    "LLMHTTPError",
    "LLMResponseError",
    "LLMTimeoutError",
    "OpenAIChatModel",
    "ScriptedChatModel",
    "Tool",
    "ToolArgumentError",
    "ToolCall",
    "ToolRun",
    "as_tools",
    "build_tiny_model",
    "check_messages",
    "execute_call",
    "get_chat_model",
    "load_smollm2",
    "parse_tool_calls",
    "propose",
    "run_agent",
    "tool",
    "tool_system_prompt",
]
