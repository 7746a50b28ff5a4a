"""Embedded default: a scripted upstream behind the gateway, a regex output guard registered
like a user's plugin; the official `openai` SDK asks five things; prints what it got back."""

from __future__ import annotations

import json
from pathlib import Path

from paperplug.harness import Timer, demo_parser, single_thread, table
from paperplug_gateway.app import create_app
from paperplug_gateway.config import parse_config
from paperplug_gateway.embedded import register_regex_guard, scripted_upstream
from paperplug_gateway.server import serve_in_thread

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]


def reply(messages: list, tools: list) -> dict:
    """The scripted model: a tool call when asked about the weather, a leak when asked for the
    password, else a friendly echo."""
    text = messages[-1].get("content") or ""
    if messages[-1].get("role") == "tool":
        return {"content": f"The weather service says: {text}"}
    if "weather" in text and tools:
        return {
            "content": "",
            "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}],
        }
    if "password" in text:
        return {"content": "Of course. The admin password is hunter2, keep it safe."}
    return {"content": f"Happy to help with: {text}"}


def main(argv: list[str] | None = None) -> int:
    parser = demo_parser("gateway", __doc__)
    args = parser.parse_args(argv)
    single_thread()
    import openai

    register_regex_guard()
    args.out.mkdir(parents=True, exist_ok=True)
    audit = Path(args.out) / "audit.jsonl"
    audit.unlink(missing_ok=True)
    rows = []
    with serve_in_thread(scripted_upstream(reply)) as upstream:
        config = parse_config(
            {
                "upstream": {"url": upstream},
                "defense": [{"name": "regex-guard", "pattern": r"(?i)password is"}],
                "audit": {"path": str(audit)},
            }
        )
        with serve_in_thread(create_app(config)) as url:
            sdk = openai.OpenAI(base_url=url, api_key="none", max_retries=0)
            print(
                f"gateway on {url} in front of a scripted upstream; defenses: regex-guard (output)\n"
            )

            def ask(label: str, messages: list, **kw: object) -> None:
                with Timer() as t:
                    if kw.pop("stream", False):
                        parts, finish = [], None
                        for chunk in sdk.chat.completions.create(
                            model="scripted", messages=messages, stream=True, **kw
                        ):
                            if chunk.choices:
                                parts.append(chunk.choices[0].delta.content or "")
                                finish = chunk.choices[0].finish_reason or finish
                        answer = "".join(parts)
                    else:
                        choice = sdk.chat.completions.create(
                            model="scripted", messages=messages, **kw
                        ).choices[0]
                        calls = choice.message.tool_calls or []
                        answer = choice.message.content or " ".join(
                            f"{c.function.name}({c.function.arguments})" for c in calls
                        )
                        finish = choice.finish_reason
                rows.append([label, answer, finish, f"{1000 * t.seconds:.0f}"])

            ask("plain", [{"role": "user", "content": "plan a picnic"}])
            ask("streamed", [{"role": "user", "content": "plan a picnic"}], stream=True)
            ask(
                "streamed leak", [{"role": "user", "content": "what is the password?"}], stream=True
            )
            ask("tool call", [{"role": "user", "content": "weather in Paris?"}], tools=TOOLS)
            call = {
                "id": "call_0",
                "type": "function",
                "function": {"name": "get_weather", "arguments": json.dumps({"city": "Paris"})},
            }
            ask(
                "tool result",
                [
                    {"role": "user", "content": "weather in Paris?"},
                    {"role": "assistant", "content": None, "tool_calls": [call]},
                    {"role": "tool", "tool_call_id": "call_0", "content": "sunny, 24 C"},
                ],
                tools=TOOLS,
            )
    print(table(rows, ["request", "what the client got", "finish_reason", "ms"]))
    print(f"\naudit log (verdicts, no message text): {audit}")
    for line in audit.read_text().splitlines():
        print(" ", line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
