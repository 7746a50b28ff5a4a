"""Fake installed distributions: a dist-info folder with entry_points.txt on sys.path is what
importlib.metadata reads for a pip-installed package, so the loader is tested for real."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest


@pytest.fixture
def install_dist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """install_dist(dist, ep_name, source, impl=...): a plugin module, its impl module, a dist-info."""
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))

    def install(dist: str, ep_name: str, source: str, version: str = "1.0", impl: str = "") -> None:
        module = dist.replace("-", "_")
        (site / f"{module}.py").write_text(textwrap.dedent(source))
        (site / f"{module}_impl.py").write_text(textwrap.dedent(impl))
        sys.modules.pop(f"{module}_impl", None)
        info = site / f"{module}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
        (info / "entry_points.txt").write_text(f"[paperplug]\n{ep_name} = {module}\n")
        sys.modules.pop(module, None)

    yield install
