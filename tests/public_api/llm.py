"""The llm package's public API: one valid call of each callable, for the battery (a scripted
chat model, a tool of two arguments). The [hf] extra's names (HFChatModel, the tiny models,
likelihood scoring, load_smollm2) are not in `__all__`, so the battery does not reach them.."""

from __future__ import annotations

import paperplug_llm as m

from paperplug.testing import Sweep

RESULT = "a result type: built by the package, not called with user input"
ERROR = "an exception class: raised by the package with its own message"
REASONS = {
    "AgentResult": RESULT,
    "ToolRun": RESULT,
    "Completion": RESULT,
    "ToolCall": RESULT,
    "LLMError": ERROR,
    "LLMHTTPError": ERROR,
    "LLMResponseError": ERROR,
    "LLMTimeoutError": ERROR,
    "ToolArgumentError": ERROR,
    "ChatServer": "binds a socket and serves (test_wire.py checks it over HTTP)",
    "MeanPoolEncoder": "loads a BERT-like model saved on disk (test_embeddings.py builds one)",
}
URL = "http://127.0.0.1:9"  # never contacted: constructing a client does not connect
MESSAGES = [{"role": "user", "content": "add 2 and 3"}]
CALL = '<tool_call>{"name": "add", "arguments": {"a": 2, "b": 3}}</tool_call>'


def add(a: int, b: int) -> int:
    """Add two numbers.

    a: the first
    b: the second
    """
    return a + b


def sweeps() -> dict[str, Sweep]:
    scripted = m.ScriptedChatModel([CALL, "5"])
    tools = m.as_tools([add])
    specs = [t.spec() for t in tools.values()]
    return {
        "check_messages": Sweep(m.check_messages, (MESSAGES,)),
        "parse_tool_calls": Sweep(
            m.parse_tool_calls, (CALL,), reasons={"text": "any string is a reply to read"}
        ),
        "tool_system_prompt": Sweep(m.tool_system_prompt, (specs,)),
        "Tool": Sweep(
            m.Tool,
            (add,),
            bad_params={"name": ["a b", ""], "description": [3], "parameters": [{"type": 3}]},
        ),
        "tool": Sweep(m.tool, (add,)),
        "as_tools": Sweep(m.as_tools, ([add],)),
        "ScriptedChatModel": Sweep(
            m.ScriptedChatModel, (["hi"],), bad_params={"replies": ["hi", [3]]}
        ),
        "propose": Sweep(m.propose, (m.ScriptedChatModel([CALL]), MESSAGES, specs)),
        "execute_call": Sweep(
            m.execute_call,
            (m.ToolCall(name="add", arguments={"a": 2, "b": 3}), tools),
            bad_params={"guard": ["strict"]},
        ),
        "run_agent": Sweep(
            m.run_agent,
            (m.ScriptedChatModel([CALL, "5"]), MESSAGES, [add]),
            bad_params={"max_steps": [0], "first_tool_choice": ["sometimes"], "guard": ["strict"]},
        ),
        "get_chat_model": Sweep(
            m.get_chat_model,
            (f"openai:tiny@{URL}",),
            bad_params={"spec": ["nope", "hf:", "openai:"]},
        ),
        "OpenAIChatModel": Sweep(
            m.OpenAIChatModel,
            ("tiny", URL),
            bad_params={
                "model": [""],
                "base_url": ["ftp://127.0.0.1"],
                "api_key": [3],
                "timeout": [0.0],
                "max_retries": [-1],
                "backoff": [-1.0],
                "max_backoff": [-1.0],
            },
        ),
        "ScriptedChatModel.chat": Sweep(scripted.chat, (MESSAGES,)),
    }
