"""plugins.toml, packages/*, their pyprojects, what each registers, and the README agree."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from paperplug import PluginManager
from paperplug.manifest import CATALOG, load_manifest, render_readme

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = load_manifest(ROOT / "plugins.toml")
FIELDS = {"dist", "import", "path", "roles", "components", "paper", "status", "heavy", "gpu", "ci"}


def _pyproject(slug: str) -> dict:
    return tomllib.loads((ROOT / "packages" / slug / "pyproject.toml").read_text())


def test_every_package_folder_has_a_table_and_back():
    folders = {p.name for p in (ROOT / "packages").iterdir() if (p / "pyproject.toml").is_file()}
    assert folders == set(MANIFEST)


@pytest.mark.parametrize("slug", sorted(MANIFEST))
def test_table_matches_pyproject(slug):
    table, project = MANIFEST[slug], _pyproject(slug)["project"]
    assert table.keys() >= FIELDS, f"missing fields: {FIELDS - table.keys()}"
    assert table["dist"] == project["name"] == f"paperplug-{slug.replace('_', '-')}"
    assert table["import"] == f"paperplug_{slug}" and table["path"] == f"packages/{slug}"
    assert (ROOT / table["path"] / "src" / table["import"] / "__init__.py").is_file()
    core = [
        d
        for d in project["dependencies"]
        if d.startswith("paperplug") and "-" not in d.split(">")[0]
    ]
    assert core and ">=" in core[0] and "<" in core[0], "depend on a range of paperplug"
    assert table["gpu"] in ("none", "optional", "required")
    for part in ("README.md", "tests", "bench"):
        assert (ROOT / table["path"] / part).exists(), f"{slug} lacks {part}"
    entry = project.get("entry-points", {}).get("paperplug", {})
    if table["components"]:
        assert entry == {slug: f"{table['import']}.plugin"}
    else:
        assert entry == {}, "a package registering nothing has no entry point"


@pytest.mark.parametrize("slug", sorted(MANIFEST))
def test_registered_names_match_manifest(slug):
    manager = PluginManager()
    table = MANIFEST[slug]
    registered = sorted(
        {c.name for c in manager.components() if c.plugin == slug}
    )  # one name may serve two roles
    assert registered == sorted(table["components"])
    roles = sorted({c.role for c in manager.components() if c.plugin == slug})
    assert roles == sorted(table["roles"])


def test_readme_table_and_catalog_are_current():
    readme = (ROOT / "README.md").read_text()
    assert render_readme(readme, MANIFEST) == readme, "run `make readme`"
    assert CATALOG.read_text() == (ROOT / "plugins.toml").read_text(), "run `make readme`"
