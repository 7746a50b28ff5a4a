"""`paperplug-gateway serve --config gateway.toml`: check the config (a bad key is one clear
error, before anything binds), build the guard, serve with uvicorn; `check` only validates."""

from __future__ import annotations

import argparse
import sys

from paperplug_gateway.config import ConfigError, load_config


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="paperplug-gateway", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    for name, text in (
        ("serve", "serve the gateway"),
        ("check", "validate the config and build the guard"),
    ):
        p = sub.add_parser(name, help=text)
        p.add_argument("--config", required=True, help="the gateway's TOML config")
    args = parser.parse_args(argv)
    try:
        config = load_config(args.config)
        from paperplug_gateway.app import Gateway

        gateway = Gateway(config)
    except ConfigError as exc:
        print(f"paperplug-gateway: bad config: {exc}", file=sys.stderr)
        return 2
    names = [getattr(d, "name", "?") for d in gateway.stages.guard.defenses]
    print(
        f"config ok: upstream {config.upstream.url or config.upstream.local}; defenses {names or 'none'}"
    )
    if args.command == "check":
        return 0
    import uvicorn

    print(f"serving on http://{config.host}:{config.port}/v1", flush=True)
    uvicorn.run(
        gateway.app,
        host=config.host,
        port=config.port,
        log_level="info",
        access_log=False,
        ws="none",
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
