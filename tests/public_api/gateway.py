"""The gateway's public API: one valid call of each callable, for the battery (a config on a
loopback upstream that is never contacted, one chat request, an audit log in a temporary
folder)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import paperplug_gateway as gw

from paperplug.testing import Sweep

REASONS = {
    "ConfigError": "an exception type (what parse_config and load_config raise)",
    "RequestError": "an exception type (what validate_request raises)",
    "UpstreamError": "an exception type (what HTTPUpstream raises)",
    "Conversation": "a result type (one request's conversation, built by the app)",
    "DefenseSpec": "a result type (one [[defense]] table, what parse_config builds and checks)",
    "UpstreamConfig": "a result type (the [upstream] table, what parse_config builds and checks)",
    "GatewayConfig": "a result type (the whole config, what parse_config builds and checks)",
    "Stages": "the app's internals: built by Gateway from its config (swept through create_app)",
    "serve_in_thread": "starts a uvicorn server on a socket (tests/test_server.py runs it)",
}
RAW = {"upstream": {"url": "http://127.0.0.1:9/v1"}, "server": {"port": 8080}}
GIVEN = {
    "guard": "any Guard: replaces the one the config builds (tests pass their own)",
    "upstream": "any object with HTTPUpstream's methods: replaces the config's (tests' fakes)",
}
BODY = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}


def sweeps() -> dict[str, Sweep]:
    folder = Path(tempfile.mkdtemp())
    (folder / "gateway.toml").write_text('[upstream]\nurl = "http://127.0.0.1:9/v1"\n')
    config = gw.parse_config(RAW)
    return {
        "parse_config": Sweep(gw.parse_config, (RAW,), width=False),
        "load_config": Sweep(
            gw.load_config, (folder / "gateway.toml",), bad_params={"path": [folder / "none.toml"]}
        ),
        "validate_request": Sweep(
            gw.validate_request,
            (BODY,),
            {"max_messages": 4, "max_tokens": 16},
            bad_params={"max_messages": [0, -1], "max_tokens": [0, -1], "model": [""]},
            width=False,
        ),
        "conversation_id": Sweep(
            gw.conversation_id,
            ("local", None, BODY["messages"]),
            bad_params={"client": [""]},
            reasons={"header": "any string or None: the client's own conversation id"},
            width=False,
        ),
        "build_guard": Sweep(
            gw.build_guard,
            ([gw.DefenseSpec("csd")],),
            reasons={
                "upstream_model": "any ChatModel: handed to the defenses that ask for it",
                "pool": "any concurrent.futures.Executor: runs the defenses' checks",
            },
        ),
        "AuditLog": Sweep(
            gw.AuditLog,
            (str(folder / "audit.jsonl"),),
            reasons={"path": "any file path or None: opened when the first verdict is recorded"},
        ),
        "HTTPUpstream": Sweep(
            gw.HTTPUpstream,
            ("http://127.0.0.1:9/v1",),
            bad_params={"url": ["", "127.0.0.1:9"], "timeout": [0.0, -1.0]},
            reasons={"api_key": "any string or None: sent as the bearer token"},
        ),
        "Gateway": Sweep(gw.Gateway, (config,), reasons=GIVEN),
        "create_app": Sweep(gw.create_app, (config,)),
    }
