"""plugins.toml, packages/*, their pyprojects, what each registers, and the README agree;
every package keeps to the template that `make new-plugin` copies (.ci/template)."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import pytest

from paperplug import PluginManager
from paperplug.manifest import CATALOG, load_manifest, render_readme

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = load_manifest(ROOT / "plugins.toml")
FIELDS = {
    "kind",
    "dist",
    "import",
    "path",
    "roles",
    "components",
    "paper",
    "status",
    "heavy",
    "gpu",
    "ci",
}
TEMPLATE = ROOT / ".ci" / "template"
# what package code may import
PUBLIC_CORE_MODULES = {
    "paperplug",
    "paperplug.harness",
    "paperplug.checks",
    "paperplug.extras",
    "paperplug.state",  # conversation state: the store interface checks receive
    "paperplug.door",  # the browser checks of a local JSON API server
}


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
    assert table["kind"] in ("paper", "support")
    assert (table["kind"] == "support") == (not table["components"])
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
        {c.name for c in manager.list_components() if c.plugin == slug}
    )  # one name may serve two roles
    assert registered == sorted(table["components"])
    roles = sorted({c.role for c in manager.list_components() if c.plugin == slug})
    assert roles == sorted(table["roles"])


def test_readme_table_and_catalog_are_current():
    readme = (ROOT / "README.md").read_text()
    assert render_readme(readme, MANIFEST) == readme, "run `make readme`"
    assert CATALOG.read_text() == (ROOT / "plugins.toml").read_text(), "run `make readme`"


# -- the template --------------------------------------------------------------------------


def _src(slug: str) -> Path:
    return ROOT / "packages" / slug / "src" / MANIFEST[slug]["import"]


def _imports(path: Path) -> set[str]:
    """Every module `path` imports (absolute names; relative ones resolved to the package)."""
    tree = ast.parse(path.read_text())
    package = path.parent.name
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = f"{package}.{node.module or ''}".rstrip(".") if node.level else node.module
            found.add(base)
            found |= {f"{base}.{a.name}" for a in node.names}
    return found


@pytest.mark.parametrize("slug", sorted(MANIFEST))
def test_plugin_module_holds_registrations_only(slug):
    path = _src(slug) / "plugin.py"
    if not MANIFEST[slug]["components"]:
        assert not path.exists(), "a support package registers nothing"
        return
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.ImportFrom):
            assert node.module == "paperplug", f"plugin.py imports {node.module}"
        elif isinstance(node, ast.Assign):
            assert isinstance(node.value, (ast.Constant, ast.Tuple, ast.JoinedStr)), ast.dump(node)
        elif isinstance(node, ast.FunctionDef):
            assert [ast.unparse(d) for d in node.decorator_list] == ["hookimpl"], node.name
            for stmt in node.body:
                call = stmt.value if isinstance(stmt, ast.Expr) else None
                assert isinstance(call, (ast.Call, ast.Constant)), (
                    f"{node.name}: only register(...)"
                )
                if isinstance(call, ast.Call):
                    assert ast.unparse(call.func) == "register", ast.unparse(stmt)
        else:
            assert isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant), ast.dump(
                node
            )


@pytest.mark.parametrize("slug", sorted(MANIFEST))
def test_files_of_the_template(slug):
    pkg = ROOT / "packages" / slug
    parts = ("tests/test_contract.py", "tests/test_readme.py", "tests/conftest.py", "bench/run.py")
    for part in (*parts, "README.md"):
        assert (pkg / part).is_file(), f"{slug} lacks {part}"
    assert "ReadmeContract" in (pkg / "tests/test_readme.py").read_text(), (
        f"{slug}: tests/test_readme.py should subclass paperplug.testing.ReadmeContract"
    )
    for part in ("__init__.py", "demo.py", f"{MANIFEST[slug].get('embedded', 'embedded')}.py"):
        assert (_src(slug) / part).is_file(), f"{slug} lacks src/{MANIFEST[slug]['import']}/{part}"


@pytest.mark.parametrize("slug", sorted(MANIFEST))
def test_demo_and_bench_share_the_embedded_module(slug):
    package = MANIFEST[slug]["import"]
    embedded = f"{package}.{MANIFEST[slug].get('embedded', 'embedded')}"
    demo, bench = (
        _imports(_src(slug) / "demo.py"),
        _imports(ROOT / "packages" / slug / "bench/run.py"),
    )
    assert embedded in demo, f"demo.py does not import {embedded}"
    assert embedded in bench, f"bench/run.py does not import {embedded}"
    assert f"{package}.demo" not in bench, "the benchmark imports the demo"


@pytest.mark.parametrize("slug", sorted(MANIFEST))
def test_demo_uses_the_shared_flags(slug):
    tree = ast.parse((_src(slug) / "demo.py").read_text())
    calls = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and ast.unparse(n.func).endswith("demo_parser")
    ]
    assert calls, "demo.py builds its parser with paperplug.harness.demo_parser (--out, --seed)"
    assert ast.literal_eval(calls[0].args[0]) == slug, "demo_parser(<slug>): output in out/<slug>"


@pytest.mark.parametrize("slug", sorted(MANIFEST))
def test_code_imports_the_public_core_only(slug):
    pkg = ROOT / "packages" / slug
    for path in [*(pkg / "src").rglob("*.py"), *(pkg / "bench").rglob("*.py")]:
        private = {m for m in _imports(path) if m.startswith("paperplug.")} - PUBLIC_CORE_MODULES
        private = {m for m in private if m.rsplit(".", 1)[0] not in PUBLIC_CORE_MODULES}
        assert not private, (
            f"{path.relative_to(ROOT)} imports {sorted(private)}: use `from paperplug import ...`"
        )


def _headings(text: str) -> list[str]:
    return re.findall(r"^## .*$", text, flags=re.M)


@pytest.mark.parametrize("slug", sorted(MANIFEST))
def test_readme_headings_follow_the_template(slug):
    template = (TEMPLATE / "README.md").read_text().replace("__slug__", slug)
    readme = (ROOT / "packages" / slug / "README.md").read_text()
    assert readme.startswith(f"# {MANIFEST[slug]['dist']}\n")
    assert _headings(readme) == _headings(template)


@pytest.mark.parametrize("slug", sorted(MANIFEST))
def test_metadata_ready_for_the_index(slug):
    project = _pyproject(slug)["project"]
    assert project["readme"] == "README.md" and project["license"]
    assert any(
        c.startswith("Programming Language :: Python :: 3.11") for c in project["classifiers"]
    )
    urls = project["urls"]
    if MANIFEST[slug]["kind"] == "paper":
        assert urls.get("Paper", "").startswith("https://")
    else:  # a support package: its model's page (llm) or its home
        assert (urls.get("Model") or urls.get("Homepage", "")).startswith("https://")


# -- tests that can fail ---------------------------------------------------------------------

CHECKS = {"raises", "warns", "fail", "deprecated_call", "approx"}


def _asserting_functions(tree: ast.Module) -> set[str]:
    """Names of the module's functions and methods that assert (directly, through pytest's
    raises/warns/fail, an `assert_*` or `check_*` helper, a `*_untouched` checking context,
    or another asserting function of the module)."""
    functions = {
        node.name: node
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    }

    def direct(node: ast.AST) -> bool:
        for sub in ast.walk(node):
            if isinstance(sub, ast.Assert):
                return True
            if isinstance(sub, ast.Call):
                name = ast.unparse(sub.func).split(".")[-1]
                if (
                    name in CHECKS
                    or name.startswith(("assert", "check_"))
                    or name.endswith("_untouched")
                ):
                    return True
        return False

    asserting = {name for name, node in functions.items() if direct(node)}
    changed = True
    while changed:  # a test that calls a helper of its module that asserts, transitively
        changed = False
        for name, node in functions.items():
            if name in asserting:
                continue
            called = {
                ast.unparse(c.func).split(".")[-1]
                for c in ast.walk(node)
                if isinstance(c, ast.Call)
            }
            if called & asserting:
                asserting.add(name)
                changed = True
    return asserting


def _test_files() -> list[Path]:
    roots = [ROOT / "core" / "tests", ROOT / "tests", *(ROOT / "packages").glob("*/tests")]
    return sorted(p for root in roots for p in root.rglob("test_*.py"))


@pytest.mark.parametrize("path", _test_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_test_function_asserts_or_expects_an_exception(path):
    tree = ast.parse(path.read_text())
    asserting = _asserting_functions(tree)
    idle = [
        node.name
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.name.startswith("test_")
        and node.name not in asserting
    ]
    assert not idle, f"{path.relative_to(ROOT)}: tests that assert nothing: {idle}"
