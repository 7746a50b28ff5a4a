"""Use 2 of the README: a user's own plugin, by entry point or at run time, sits beside the
built-in methods and goes through the same hooks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import paperplug
from paperplug import compose, hookimpl

ROOT = Path(__file__).resolve().parents[1]
UV = [sys.executable, "-m", "uv"]


def fresh_venv(where: Path, *requirements: str | Path) -> Path:
    """A new virtual environment holding only `requirements` (and their dependencies)."""
    venv = where / "venv"
    subprocess.run([*UV, "venv", "-q", "-p", sys.executable, str(venv)], check=True)
    subprocess.run([*UV, "pip", "install", "-q", "--python", str(venv), *requirements], check=True)
    return venv


def test_entry_point_plugin_installed_in_a_fresh_environment(tmp_path):
    venv = fresh_venv(tmp_path, "-e", ROOT / "core", ROOT / "tests" / "custom_plugin")
    listing = subprocess.run(
        [venv / "bin" / "paperplug", "list", "--json"], capture_output=True, text=True, check=True
    )
    rows = json.loads(listing.stdout)["components"]
    assert [(r["name"], r["plugin"], r["version"]) for r in rows] == [
        ("regex-guard", "my_regex_guard", "0.1.0")
    ]
    code = "import paperplug; g = paperplug.load('defense', 'regex-guard'); print(g.check('my password').valid)"
    out = subprocess.run(
        [venv / "bin" / "python", "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "False"


def test_run_time_plugin_appears_beside_installed_methods(installed_pm):
    builtin = {(c.role, c.name) for c in installed_pm.list_components()}

    class Shout:
        stage = "output"

        def check(self, payload, context=None):
            loud = (context or {}).get("chunk", payload).isupper()  # the newest streamed chunk
            return paperplug.Verdict(
                payload, not loud, float(loud), reason="shouting" if loud else ""
            )

    class MyPlugin:
        @hookimpl
        def register_defenses(self, register):
            register("no-shouting", Shout, summary="blocks all-caps output", paper="(mine)")

    paperplug.register_plugin(MyPlugin(), name="mine")
    names = {(c.role, c.name) for c in paperplug.list_components()}
    assert names == builtin | {("defense", "no-shouting")}
    guard = compose(paperplug.load("defense", "no-shouting"))
    assert list(guard.stream(["fine ", "STOP"])) == ["fine "]
    paperplug.unregister_plugin("mine")
    assert {(c.role, c.name) for c in paperplug.list_components()} == builtin
