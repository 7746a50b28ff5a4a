"""`paperplug-llm serve` (a loopback OpenAI-compatible server) and `paperplug-llm chat`."""

from __future__ import annotations

import argparse
import contextlib
import sys

from paperplug_llm.backends import get_chat_model
from paperplug_llm.server import ChatServer, check_loopback


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="paperplug-llm", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="serve a model at http://127.0.0.1:PORT/v1")
    serve.add_argument(
        "--model", default="smollm2", help="smollm2 | hf:<name or path> | openai:<model>@<url>"
    )
    serve.add_argument("--host", default="127.0.0.1", help="a loopback address")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        help="a web origin (https://my.app) whose pages may call the server; repeatable",
    )
    chat = sub.add_parser("chat", help="one reply, streamed to stdout")
    chat.add_argument("prompt")
    chat.add_argument("--model", default="smollm2")
    chat.add_argument("--max-tokens", type=int, default=128)
    args = parser.parse_args(argv)
    if args.command == "serve":
        try:
            check_loopback(args.host)  # before loading a model: a wrong address fails at once
        except ValueError as exc:
            parser.error(str(exc))
    model = get_chat_model(args.model)
    if args.command == "serve":
        server = ChatServer(
            model, host=args.host, port=args.port, allowed_origins=tuple(args.allow_origin)
        )
        print(
            f"serving {server.model_name} at {server.url}: one request at a time, in arrival "
            "order (Ctrl-C stops)",
            flush=True,
        )
        with contextlib.suppress(KeyboardInterrupt):
            server.serve_forever()
        return 0
    for piece in model.stream(
        [{"role": "user", "content": args.prompt}], max_tokens=args.max_tokens
    ):
        sys.stdout.write(piece)
        sys.stdout.flush()
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
