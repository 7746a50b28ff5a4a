"""`paperplug-gateway serve --config gateway.toml [--workers N]`: check the config (a bad key
is one clear error, before anything binds), build the guard, serve with uvicorn; `check` only
validates. With N workers, uvicorn builds one app per worker process from the config
(`app:app_from_env`), their metrics are summed across processes (prometheus_client's
multiprocess mode), and conversation state is shared only through `[state] url` (Redis)."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile

from paperplug_gateway.config import CONFIG_ENV, ConfigError, load_config


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="paperplug-gateway", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    for name, text in (
        ("serve", "serve the gateway"),
        ("check", "validate the config and build the guard"),
    ):
        p = sub.add_parser(name, help=text)
        p.add_argument("--config", required=True, help="the gateway's TOML config")
        if name == "serve":
            p.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
    args = parser.parse_args(argv)
    if getattr(args, "workers", 1) < 1:
        parser.error(f"--workers must be at least 1, got {args.workers}")
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

    serving = {"host": config.host, "port": config.port, "log_level": "info", "access_log": False,
               "ws": "none"}  # fmt: skip
    if args.workers == 1:
        print(f"serving on http://{config.host}:{config.port}/v1", flush=True)
        uvicorn.run(gateway.app, **serving)
        return 0
    if config.state_url is None:
        print(
            "paperplug-gateway: warning: each of the workers keeps its own in-process state; "
            "a stateful defense (drift) needs [state] url (Redis) to share it",
            file=sys.stderr,
        )
    os.environ[CONFIG_ENV] = os.path.abspath(args.config)
    os.environ.setdefault("PROMETHEUS_MULTIPROC_DIR", tempfile.mkdtemp(prefix="paperplug-metrics-"))
    print(
        f"serving on http://{config.host}:{config.port}/v1 with {args.workers} workers", flush=True
    )
    uvicorn.run(f"{__package__}.app:app_from_env", factory=True, workers=args.workers, **serving)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
