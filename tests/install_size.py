"""Install one method as a user does and measure it: a fresh `python -m venv`, plain pip,
`pip install --find-links dist paperplug-<slug>` from the wheels `make dist` built (torch, where
a method needs it, is the CPU build 2.13.0 that constraints.txt pins and pip's find-links
provide). The size is the whole environment on disk.

`python tests/install_size.py [slug ...]` measures packages and writes the figures into
plugins.toml (`install = {mb, packages}`), which `make readme` puts in the README table;
tests/test_lean_installs.py measures the lean ones again with this same procedure.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Install:
    """One measured install: the venv, its size in MB, the distributions in it, seconds."""

    venv: Path
    mb: float
    packages: dict[str, str]
    seconds: float

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    def run(self, *args: str, **kw) -> subprocess.CompletedProcess:
        """A command of the venv (`paperplug`, `python`, ...), output captured as text."""
        exe = self.venv / "bin" / args[0]
        return subprocess.run([str(exe), *args[1:]], capture_output=True, text=True, **kw)


def folder_mb(path: Path) -> float:
    """Bytes on disk under `path` (files counted once), in MB (10⁶ bytes)."""
    total, seen = 0, set()
    for root, _, files in os.walk(path):
        for name in files:
            stat = os.lstat(os.path.join(root, name))
            if stat.st_ino not in seen:
                seen.add(stat.st_ino)
                total += stat.st_blocks * 512
    return total / 1e6


def install(slug: str, where: Path, dist: Path = ROOT / "dist") -> Install:
    """`pip install paperplug-<slug>` into a fresh venv under `where`, from `dist`'s wheels."""
    name = f"paperplug-{slug.replace('_', '-')}"
    wheel = f"paperplug_{slug}-*.whl"
    assert any(dist.glob(wheel)), f"no {wheel} in {dist}: run `make dist` first"
    venv = where / f"venv-{slug}"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    start = time.perf_counter()
    subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check",
         "--find-links", str(dist), "-c", str(ROOT / "constraints.txt"), name],
        check=True,
    )  # fmt: skip
    seconds = time.perf_counter() - start
    listing = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "list", "--format", "json"],
        capture_output=True,
        text=True,
        check=True,
    )
    packages = {row["name"].lower(): row["version"] for row in json.loads(listing.stdout)}
    packages = {k: v for k, v in packages.items() if k not in ("pip", "setuptools")}
    return Install(venv, folder_mb(venv), packages, seconds)


def write_manifest(figures: dict[str, Install], manifest: Path = ROOT / "plugins.toml") -> None:
    """Set `install = {mb = ..., packages = ...}` in each measured package's table."""
    text = manifest.read_text()
    for slug, measured in figures.items():
        line = f"install = {{ mb = {round(measured.mb)}, packages = {len(measured.packages)} }}"
        table = re.search(rf"(?ms)^\[plugins\.{slug}\]\n.*?(?=^\[|\Z)", text)
        assert table, f"no [plugins.{slug}] table"
        body = re.sub(r"(?m)^install = .*\n", "", table.group(0))
        body = body.rstrip("\n") + f"\n{line}\n" + ("\n" if table.end() < len(text) else "")
        text = text[: table.start()] + body + text[table.end() :]
    manifest.write_text(text)


def main(argv: list[str]) -> int:
    import tempfile
    import tomllib

    slugs = argv or sorted(tomllib.loads((ROOT / "plugins.toml").read_text())["plugins"])
    figures = {}
    with tempfile.TemporaryDirectory() as tmp:
        for slug in slugs:
            measured = install(slug, Path(tmp))
            torch = "torch" in measured.packages
            print(
                f"{slug:14s} {measured.mb:7.0f} MB  {len(measured.packages):3d} packages  "
                f"{measured.seconds:5.0f} s  torch={torch}",
                flush=True,
            )
            figures[slug] = measured
            subprocess.run(["rm", "-rf", str(measured.venv)], check=True)
    write_manifest(figures)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
