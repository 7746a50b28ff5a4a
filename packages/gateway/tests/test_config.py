"""A bad config is one clear error naming the key, before the server binds."""

import socket
import subprocess
import sys

import pytest
from paperplug_gateway import ConfigError, load_config, parse_config

UP = {"url": "http://127.0.0.1:8000/v1"}


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (
            {"upstream": UP, "server": {"port": "80"}},
            r"^raw: server\.port must be an integer, got str$",
        ),
        (
            {"upstream": UP, "server": {"port": 70000}},
            r"^raw: server\.port must lie in \[0, 65535\], got 70000$",
        ),
        ({"upstream": UP, "server": {"prot": 1}}, r"^raw: server\.prot is not a known key"),
        ({"upstream": UP, "servers": {}}, r"^raw: servers is not a known table"),
        ({"upstream": {}}, r"^raw: upstream needs exactly one of upstream\.url"),
        ({"upstream": {"url": "ftp://x"}}, r"^raw: upstream\.url must start with http"),
        ({"upstream": {**UP, "timeout": 0}}, r"^raw: upstream\.timeout must be > 0, got 0$"),
        (
            {"upstream": UP, "defense": [{"params": 1}]},
            r"^raw: defense\[0\]\.name must be a defense's registry name",
        ),
        (
            {"upstream": UP, "defense": [{"name": "x", "timeout": -1}]},
            r"^raw: defense\[0\]\.timeout must be > 0",
        ),
        (
            {"upstream": UP, "server": {"host": "0.0.0.0"}},
            r"^raw: server\.host is '0\.0\.0\.0', not loopback: set server\.api_keys",
        ),
        (
            {"upstream": UP, "server": {"api_keys": ["short"]}},
            r"^raw: server\.api_keys must be strings of at least 16",
        ),
        (
            {"upstream": UP, "server": {"api_keys_env": "NOT_SET_ANYWHERE_XYZ"}},
            r"^raw: server\.api_keys_env names the environment variable NOT_SET_ANYWHERE_XYZ",
        ),
        (
            {"upstream": UP, "audit": {"log_text": "yes"}},
            r"^raw: audit\.log_text must be true or false, got str$",
        ),
        (
            {"upstream": UP, "server": {"allowed_origins": ["my.app"]}},
            r"^raw: server\.allowed_origins: 'my\.app' is not an origin \(scheme://host\[:port\]\)$",
        ),
        (
            {"upstream": UP, "server": {"allowed_hosts": "gateway.internal"}},
            r"^raw: server\.allowed_hosts must be a list, got str$",
        ),
        (
            {"upstream": UP, "server": {"allowed_hosts": [""]}},
            r"^raw: server\.allowed_hosts must be a list of non-empty strings$",
        ),
    ],
)
def test_each_bad_key_is_named(raw, message):
    with pytest.raises(ConfigError, match=message):
        parse_config(raw)


def test_a_public_host_with_keys_is_accepted_and_loopback_needs_none():
    config = parse_config({"upstream": UP, "server": {"host": "0.0.0.0", "api_keys": ["k" * 32]}})
    assert config.api_keys == ("k" * 32,) and config.host == "0.0.0.0"
    assert parse_config({"upstream": UP}).host == "127.0.0.1"


def test_an_unknown_defense_is_named_before_anything_binds(tmp_path):
    path = tmp_path / "gateway.toml"
    with socket.socket() as held:  # the config's port is taken: a server that bound before
        held.bind(("127.0.0.1", 0))  # checking the config would fail on it instead
        held.listen()
        port = held.getsockname()[1]
        path.write_text(
            f'[server]\nport = {port}\n[upstream]\nurl = "http://127.0.0.1:9/v1"\n[[defense]]\nname = "no-such-defense"\n'
        )
        run = subprocess.run(
            [sys.executable, "-m", "paperplug_gateway.cli", "serve", "--config", str(path)],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert run.returncode == 2
    assert (
        "bad config: defense[0].name: no defense named 'no-such-defense' is installed" in run.stderr
    )
    assert "address already in use" not in run.stderr.lower()


def test_a_defense_that_cannot_be_built_is_named(tmp_path):
    path = tmp_path / "gateway.toml"
    path.write_text(
        '[upstream]\nurl = "http://127.0.0.1:9/v1"\n[[defense]]\nname = "regex-guard"\npattern = "("\n'
    )
    from paperplug_gateway import Gateway

    with pytest.raises(
        ConfigError,
        match=r"^defense\[0\] \(regex-guard\) cannot be built: (PatternError|error): missing \)",
    ):
        Gateway(load_config(path))


def test_a_missing_or_broken_file_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "none.toml")
    (tmp_path / "bad.toml").write_text("[server\n")
    with pytest.raises(ConfigError, match="is not valid TOML"):
        load_config(tmp_path / "bad.toml")


def test_the_readme_config_is_valid(monkeypatch):
    import re
    from pathlib import Path

    readme = (Path(__file__).parents[1] / "README.md").read_text()
    block, state = re.findall(r"^```toml\n(.*?)^```", readme, flags=re.M | re.S)
    monkeypatch.setenv("GATEWAY_KEYS", "first-key-0123456789,second-key-0123456789")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    import tomllib

    config = parse_config(tomllib.loads(block))
    assert config.api_keys == ("first-key-0123456789", "second-key-0123456789")
    assert [d.name for d in config.defenses] == ["no-iban"] and config.max_tokens == 4096
    assert config.upstream.api_key == "sk-test" and config.audit_path == "gateway-audit.jsonl"
    state = parse_config({"upstream": UP, **tomllib.loads(state)})
    assert (state.state_url, state.state_ttl, state.state_max_items) == (
        "redis://127.0.0.1:6379/0",
        3600.0,
        10000,
    )
