"""Fake installed distributions: a dist-info folder with entry_points.txt is what
importlib.metadata reads for a pip-installed package, so the loader is tested for real.

Every test sees only the distributions of its own temporary site, so the core's tests pass
in any environment (the dev .venv holds every package's entry point too)."""

from __future__ import annotations

import importlib.metadata
import sys
import textwrap
from pathlib import Path

import pytest

from paperplug import manager


@pytest.fixture(autouse=True)
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty site folder on sys.path whose dist-infos are the only installed plugins."""
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))

    def entry_points_of_site() -> list[importlib.metadata.EntryPoint]:
        dists = importlib.metadata.distributions(path=[str(folder)])
        found = [
            ep for d in dists for ep in d.entry_points if ep.group == manager.ENTRY_POINT_GROUP
        ]
        return sorted(found, key=lambda e: e.name)

    monkeypatch.setattr(manager, "installed_entry_points", entry_points_of_site)
    return folder


@pytest.fixture
def install_dist(site: Path):
    """install_dist(dist, ep_name, source, impl=...): a plugin module, its impl module, a dist-info."""

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
