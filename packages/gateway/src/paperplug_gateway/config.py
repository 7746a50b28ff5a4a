"""The gateway's TOML config: the upstream, the defenses by registry name in stage order, the
server's address, keys and limits, the audit log. A bad config is one `ConfigError` naming the
key, raised before the server binds.

    [server]
    host = "127.0.0.1"              # another host needs api_keys
    port = 8080
    api_keys_env = "GATEWAY_KEYS"   # or api_keys = ["..."]; compared in constant time
    max_body_bytes = 1_000_000
    max_messages = 256
    max_tokens = 4096
    allowed_origins = []            # web origins whose pages may call it ("https://my.app")
    allowed_hosts = []              # Host names it answers to besides loopback and `host`

    [upstream]
    url = "http://127.0.0.1:8000/v1"  # any OpenAI-compatible server; or local = "smollm2"
    model = "gpt-4o-mini"             # sent upstream (default: the model the client names)
    api_key_env = "OPENAI_API_KEY"
    timeout = 60

    [[defense]]
    name = "drift"                    # paperplug.load("defense", name, **the other keys)
    model = "upstream"                # "upstream": a ChatModel of the gateway's upstream

    [audit]
    path = "gateway-audit.jsonl"
    log_text = false

    [state]                           # conversation state (DRIFT's sessions)
    url = "redis://127.0.0.1:6379/0"  # shared by replicas; default: in process
    ttl = 3600                        # seconds a conversation's state is kept
    max_items = 10000                 # in process: entries kept (least recently used go)
"""

from __future__ import annotations

import ipaddress
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from paperplug.checks import check_type

LOOPBACK = ("127.0.0.1", "::1", "localhost")
CONFIG_ENV = "PAPERPLUG_GATEWAY_CONFIG"  # the config's path, for uvicorn's worker processes
DEFENSE_KEYS = {"name", "timeout"}  # the others are the defense's parameters


class ConfigError(ValueError):
    """A bad gateway config; the message names the key (`server.port`, `defense[1].name`)."""


@dataclass(frozen=True)
class DefenseSpec:
    """One `[[defense]]` table: a registry name, its parameters, its time limit in seconds."""

    name: str
    params: dict[str, Any] = field(default_factory=dict)
    timeout: float = 10.0


@dataclass(frozen=True)
class UpstreamConfig:
    """Where requests go: an OpenAI-compatible `url`, or a `local` paperplug-llm model spec."""

    url: str | None = None
    local: str | None = None
    model: str | None = None
    api_key: str | None = None
    timeout: float = 60.0


@dataclass(frozen=True)
class GatewayConfig:
    """The whole config, validated."""

    upstream: UpstreamConfig
    defenses: tuple[DefenseSpec, ...] = ()
    host: str = "127.0.0.1"
    port: int = 8080
    api_keys: tuple[str, ...] = ()
    max_body_bytes: int = 1_000_000
    max_messages: int = 256
    max_tokens: int = 4096
    conversation_header: str = "x-paperplug-conversation"
    refusal: str = "I can't help with that."
    audit_path: str | None = None
    audit_text: bool = False
    allowed_origins: tuple[str, ...] = ()
    allowed_hosts: tuple[str, ...] = ()
    state_url: str | None = None
    state_ttl: float = 3600.0
    state_max_items: int = 10_000


def _table(raw: Mapping[str, Any], key: str, known: set[str]) -> dict[str, Any]:
    value = raw.get(key, {})
    if not isinstance(value, Mapping):
        raise ConfigError(f"{key} must be a table, got {type(value).__name__}")
    unknown = sorted(set(value) - known)
    if unknown:
        raise ConfigError(
            f"{key}.{unknown[0]} is not a known key (known: {', '.join(sorted(known))})"
        )
    return dict(value)


def _get(table: Mapping[str, Any], where: str, key: str, kind: type | tuple, default: Any) -> Any:
    value = table.get(key, default)
    if value is default:
        return value
    if isinstance(value, bool) and kind is not bool:
        raise ConfigError(f"{where}.{key} must be {_kind(kind)}, got a boolean")
    if not isinstance(value, kind):
        raise ConfigError(f"{where}.{key} must be {_kind(kind)}, got {type(value).__name__}")
    return value


def _kind(kind: type | tuple) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(
        {
            int: "an integer",
            float: "a number",
            str: "a string",
            bool: "true or false",
            list: "a list",
        }.get(k, k.__name__)
        for k in kinds
    )


def _positive(table: Mapping[str, Any], where: str, key: str, default: Any) -> Any:
    value = _get(table, where, key, (int, float) if isinstance(default, float) else int, default)
    if value <= 0:
        raise ConfigError(f"{where}.{key} must be > 0, got {value}")
    return value


def _env_secret(table: Mapping[str, Any], where: str, key: str) -> str | None:
    name = _get(table, where, key, str, None)
    if name is None:
        return None
    value = os.environ.get(name)
    if not value:
        raise ConfigError(f"{where}.{key} names the environment variable {name}, which is not set")
    return value


def _strings(table: Mapping[str, Any], where: str, key: str) -> tuple[str, ...]:
    values = _get(table, where, key, list, [])
    if not all(isinstance(v, str) and v for v in values):
        raise ConfigError(f"{where}.{key} must be a list of non-empty strings")
    return tuple(values)


def is_loopback(host: str) -> bool:
    """Whether `host` is a loopback address (or localhost)."""
    if host in LOOPBACK:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def parse_config(raw: Mapping[str, Any]) -> GatewayConfig:
    """A GatewayConfig from the parsed TOML; a `ConfigError` naming `raw` and its first bad
    key."""
    check_type(raw, "raw", Mapping, what="a mapping (the parsed TOML)")
    try:
        return _parse(raw)
    except ConfigError as exc:
        raise ConfigError(f"raw: {exc}") from None


def _parse(raw: Mapping[str, Any]) -> GatewayConfig:
    unknown = sorted(set(raw) - {"server", "upstream", "defense", "audit", "state"})
    if unknown:
        raise ConfigError(
            f"{unknown[0]} is not a known table (known: server, upstream, defense, audit, state)"
        )
    server = _table(
        raw,
        "server",
        {
            "host",
            "port",
            "api_keys",
            "api_keys_env",
            "max_body_bytes",
            "max_messages",
            "max_tokens",
            "conversation_header",
            "refusal",
            "allowed_origins",
            "allowed_hosts",
        },
    )
    host = _get(server, "server", "host", str, "127.0.0.1")
    port = _get(server, "server", "port", int, 8080)
    if not 0 <= port <= 65535:
        raise ConfigError(f"server.port must lie in [0, 65535], got {port}")
    keys = list(_get(server, "server", "api_keys", list, []))
    if any(not isinstance(k, str) or len(k) < 16 for k in keys):
        raise ConfigError("server.api_keys must be strings of at least 16 characters")
    if (from_env := _env_secret(server, "server", "api_keys_env")) is not None:
        keys += [k.strip() for k in from_env.split(",") if k.strip()]
    if not is_loopback(host) and not keys:
        raise ConfigError(
            f"server.host is {host!r}, not loopback: set server.api_keys or server.api_keys_env "
            "first (the gateway binds to loopback only unless keys protect it)"
        )
    origins, hosts = (_strings(server, "server", k) for k in ("allowed_origins", "allowed_hosts"))
    for origin in origins:
        if origin != "*" and not origin.startswith(("http://", "https://")):
            raise ConfigError(
                f"server.allowed_origins: {origin!r} is not an origin (scheme://host[:port])"
            )
    upstream = _table(raw, "upstream", {"url", "local", "model", "api_key_env", "timeout"})
    url, local = (
        _get(upstream, "upstream", "url", str, None),
        _get(upstream, "upstream", "local", str, None),
    )
    if (url is None) == (local is None):
        raise ConfigError(
            "upstream needs exactly one of upstream.url (an OpenAI-compatible server) or upstream.local (a paperplug-llm model spec)"
        )
    if url is not None and not url.startswith(("http://", "https://")):
        raise ConfigError(f"upstream.url must start with http:// or https://, got {url!r}")
    defenses = raw.get("defense", [])
    if not isinstance(defenses, list):
        raise ConfigError("defense must be an array of tables ([[defense]])")
    specs = []
    for i, entry in enumerate(defenses):
        where = f"defense[{i}]"
        if not isinstance(entry, Mapping):
            raise ConfigError(f"{where} must be a table")
        name = entry.get("name")
        if not isinstance(name, str) or not name:
            raise ConfigError(
                f"{where}.name must be a defense's registry name (see `paperplug list --role defense`)"
            )
        params = {k: v for k, v in entry.items() if k not in DEFENSE_KEYS}
        specs.append(DefenseSpec(name, params, float(_positive(entry, where, "timeout", 10.0))))
    audit = _table(raw, "audit", {"path", "log_text"})
    state = _table(raw, "state", {"url", "ttl", "max_items"})
    state_url = _get(state, "state", "url", str, None)
    if state_url is not None and not state_url.startswith(("redis://", "rediss://", "unix://")):
        raise ConfigError(f"state.url must be a redis:// URL, got {state_url!r}")
    return GatewayConfig(
        upstream=UpstreamConfig(
            url=url.rstrip("/") if url else None,
            local=local,
            model=_get(upstream, "upstream", "model", str, None),
            api_key=_env_secret(upstream, "upstream", "api_key_env"),
            timeout=float(_positive(upstream, "upstream", "timeout", 60.0)),
        ),
        defenses=tuple(specs),
        host=host,
        port=port,
        api_keys=tuple(keys),
        max_body_bytes=_positive(server, "server", "max_body_bytes", 1_000_000),
        max_messages=_positive(server, "server", "max_messages", 256),
        max_tokens=_positive(server, "server", "max_tokens", 4096),
        conversation_header=_get(
            server, "server", "conversation_header", str, "x-paperplug-conversation"
        ).lower(),
        refusal=_get(server, "server", "refusal", str, "I can't help with that."),
        audit_path=_get(audit, "audit", "path", str, None),
        audit_text=_get(audit, "audit", "log_text", bool, False),
        allowed_origins=origins,
        allowed_hosts=hosts,
        state_url=state_url,
        state_ttl=float(_positive(state, "state", "ttl", 3600.0)),
        state_max_items=_positive(state, "state", "max_items", 10_000),
    )


def load_config(path: str | os.PathLike[str]) -> GatewayConfig:
    """Read and validate a TOML config file."""
    path = Path(check_type(path, "path", (str, os.PathLike), what="a file path"))
    try:
        raw = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise ConfigError(f"config file path {str(path)!r} does not exist") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}") from None
    return _parse(raw)
