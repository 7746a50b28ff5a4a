"""A local Flower SuperLink on loopback, started as a subprocess, and `flwr run` against it: how
`simulate` runs the Flower App on Flower's simulation engine, and how a test runs it on a
deployment of SuperNodes (`flower-supernode --insecure --superlink ...`).

Everything goes through Flower's own executables (`flower-superlink`, `flwr`), found next to
this Python; a private FLWR_HOME holds the SuperLink connection, so the user's ~/.flwr is never
read or written. The children see this process's `sys.path` (PYTHONPATH), so a model defined in
the caller's modules imports there too.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path

from paperplug.checks import check_scalar, check_sequence, check_type

CONNECTION = "flux-local"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def flower_executable(name: str) -> str:
    """The path of a Flower executable (`flwr`, `flower-superlink`, `flower-supernode`) of this
    Python's environment."""
    here = Path(sys.executable).parent / name
    found = str(here) if here.exists() else shutil.which(name)
    if found is None:
        raise FileNotFoundError(f"{name} not found next to {sys.executable} or on PATH")
    return found


class LocalSuperLink:
    """`with LocalSuperLink(simulation=...) as link:` a SuperLink on 127.0.0.1:`link.port`
    (`--insecure`, runtime dependency installation off), stopped on exit. `link.env` is the
    environment for SuperNodes and `flwr` (private FLWR_HOME, this PATH and sys.path)."""

    def __init__(self, *, simulation: bool = False, startup_timeout: float = 120.0) -> None:
        self.simulation = check_type(simulation, "simulation", bool)
        self.startup_timeout = check_scalar(
            startup_timeout, "startup_timeout", "real", low=0, inclusive="neither"
        )
        self.port = free_port()
        self._tmp = tempfile.TemporaryDirectory(prefix="flux-superlink-")
        self.home = Path(self._tmp.name)
        self.log_file = self.home / "superlink.log"
        self.process: subprocess.Popen | None = None
        path = [p for p in sys.path if p and Path(p).is_dir()]
        self.env = {
            **os.environ,
            "FLWR_HOME": str(self.home),
            "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
            "PYTHONPATH": os.pathsep.join(path),
            "FLWR_TELEMETRY_ENABLED": os.environ.get("FLWR_TELEMETRY_ENABLED", "0"),
            "FLWR_DISABLE_UPDATE_CHECK": "1",
            # SuperExec looks for new ServerApp/ClientApp tasks every second by default
            "FLWR_SUPEREXEC_TASK_POLL_INTERVAL": os.environ.get(
                "FLWR_SUPEREXEC_TASK_POLL_INTERVAL", "0.2"
            ),
        }

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def __enter__(self) -> LocalSuperLink:
        (self.home / "config.toml").write_text(
            f'[superlink]\ndefault = "{CONNECTION}"\n\n[superlink.{CONNECTION}]\n'
            f'address = "{self.address}"\ninsecure = true\n',
            encoding="utf-8",
        )
        command = [
            flower_executable("flower-superlink"),
            "--insecure",
            "--disable-runtime-dependency-installation",
            "--port",
            str(self.port),
            *(["--simulation"] if self.simulation else []),
        ]
        with self.log_file.open("w") as log:
            self.process = subprocess.Popen(
                command, env=self.env, stdout=log, stderr=subprocess.STDOUT, cwd=self.home
            )
        deadline = time.monotonic() + self.startup_timeout
        while not self._healthy():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.__exit__()
                raise RuntimeError(f"flower-superlink did not start:\n{self.log_tail()}")
            time.sleep(0.2)
        return self

    def _healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"http://{self.address}/health", timeout=1) as r:
                return r.status == 200
        except OSError:
            return False

    def __exit__(self, *exc: object) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._tmp.cleanup()

    def _check_running(self) -> None:
        if self.process is None or self.process.poll() is not None:
            raise RuntimeError("the SuperLink is not running: use `with LocalSuperLink() as link:`")

    def log_tail(self, lines: int = 40) -> str:
        """The last `lines` lines of the SuperLink's log ("" before it starts)."""
        lines = check_scalar(lines, "lines", "int", low=1)
        text = self.log_file.read_text(errors="replace") if self.log_file.exists() else ""
        return "\n".join(text.splitlines()[-lines:])

    def flwr_run(
        self,
        app_dir: str | Path,
        *,
        federation_config: dict[str, object] | None = None,
        run_config: dict[str, object] | None = None,
        timeout: float = 600.0,
    ) -> str:
        """`flwr run app_dir --stream` against this SuperLink, until the run ends; its log."""
        app_dir = _app_dir(app_dir)
        for name, values in (("federation_config", federation_config), ("run_config", run_config)):
            if values is not None:
                check_type(values, name, Mapping, what="a mapping of config keys to values")
        timeout = check_scalar(timeout, "timeout", "real", low=0, inclusive="neither")
        self._check_running()
        command = [flower_executable("flwr"), "run", str(Path(app_dir).absolute()), CONNECTION]
        command += ["--stream"]
        for flag, values in (
            ("--federation-config", federation_config),
            ("--run-config", run_config),
        ):
            if values:
                command += [flag, " ".join(f"{k}={toml_value(v)}" for k, v in values.items())]
        done = subprocess.run(
            command, env=self.env, capture_output=True, text=True, timeout=timeout, cwd=self.home
        )
        output = done.stdout + done.stderr
        if done.returncode != 0:
            raise RuntimeError(f"flwr run failed ({done.returncode}):\n{output[-4000:]}")
        return output

    def run_app(
        self,
        app_dir: str | Path,
        output_dir: str | Path,
        *,
        federation_config: dict[str, object] | None = None,
        timeout: float = 600.0,
    ) -> Path:
        """`flwr run` the FLUX app of `app_dir` and return `output_dir`, where its ServerApp
        saved the run; a run that saved nothing (a client raised, the ServerApp failed) is a
        RuntimeError quoting the run log's error lines."""
        from paperplug_flux.runs import MODELS_FILE, RESULT_FILE

        check_type(output_dir, "output_dir", (str, os.PathLike), what="a folder path")
        log = self.flwr_run(app_dir, federation_config=federation_config, timeout=timeout)
        out = Path(output_dir)
        if not (out / RESULT_FILE).is_file() or not (out / MODELS_FILE).is_file():
            lines = [ln for ln in log.splitlines() if re.search(r"Error|failed|raised", ln)]
            why = "\n".join(lines[-12:] or log.splitlines()[-30:])
            raise RuntimeError(f"the Flower run saved no result in {out}:\n{why}")
        return out

    def run_on_supernodes(
        self,
        app_dir: str | Path,
        output_dir: str | Path,
        node_configs: Sequence[dict[str, object]],
        **kw: object,
    ) -> Path:
        """`run_app` on a deployment: one `flower-supernode` per node config (each on its own
        runtime port), stopped when the run ends."""
        _app_dir(app_dir)
        check_sequence(node_configs, "node_configs", Mapping, what="node configs (mappings)")
        self._check_running()
        nodes = [
            subprocess.Popen(
                supernode_command(self, free_port(), config),
                env=self.env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            for config in node_configs
        ]
        try:
            return self.run_app(app_dir, output_dir, **kw)  # type: ignore[arg-type]
        finally:
            for node in nodes:
                node.terminate()
            for node in nodes:
                node.wait(timeout=30)


def _app_dir(app_dir: str | Path) -> Path:
    """`app_dir` if it holds a Flower App (a pyproject.toml, as `write_app` writes)."""
    path = Path(check_type(app_dir, "app_dir", (str, os.PathLike), what="a folder path"))
    if not (path / "pyproject.toml").is_file():
        raise ValueError(f"app_dir {str(path)!r} holds no Flower App (no pyproject.toml)")
    return path


def supernode_command(
    link: LocalSuperLink, port: int, node_config: dict[str, object]
) -> Sequence[str]:
    """The `flower-supernode` command line of one SuperNode of `link` (its own runtime API on
    `port`, `node_config` as --node-config)."""
    return [
        flower_executable("flower-supernode"),
        "--insecure",
        "--superlink",
        link.address,
        "--port",
        str(port),
        "--node-config",
        " ".join(f"{k}={toml_value(v)}" for k, v in node_config.items()),
    ]


def toml_value(value: object) -> str:
    """A TOML literal of a config value (Flower's --run-config / --node-config syntax)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'
