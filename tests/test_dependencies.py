"""Each package declares what its code imports, and nothing its method never imports: a module's
top-level imports are base dependencies (so `pip install paperplug-<slug>` imports it); an
import inside a function or a `requires_extra` block is a base dependency or an extra's; the
demo and the embedded module may use the [demo] extra; every base dependency is imported by the
method itself. Checked statically over every module, in the dev environment, where every
extra is installed so that the import names map to their distributions."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from paperplug.manifest import load_manifest

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = load_manifest(ROOT / "plugins.toml")
DISTS = importlib.metadata.packages_distributions()
SCOPED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.With, ast.Try, ast.If)


def normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(requirement: str) -> tuple[str, set[str]]:
    """("paperplug-llm", {"hf"}) from "paperplug-llm[hf]>=0.2,<0.3"."""
    match = re.match(r"\s*([A-Za-z0-9_.-]+)\s*(?:\[([^\]]*)\])?", requirement)
    assert match, requirement
    extras = {e.strip() for e in (match.group(2) or "").split(",") if e.strip()}
    return normal(match.group(1)), extras


def declared(slug: str) -> tuple[set[str], dict[str, set[str]]]:
    """(base distributions, {extra: distributions}), self-references resolved."""
    project = tomllib.loads((ROOT / "packages" / slug / "pyproject.toml").read_text())["project"]
    me = normal(project["name"])
    base = {requirement_name(r)[0] for r in project["dependencies"]}
    raw = project.get("optional-dependencies", {})

    def expand(extra: str, seen: frozenset[str] = frozenset()) -> set[str]:
        out = set()
        for requirement in raw[extra]:
            name, extras = requirement_name(requirement)
            if name == me:
                for e in extras - seen:
                    out |= expand(e, seen | {extra})
            else:
                out.add(name)
        return out

    return base, {extra: expand(extra) for extra in raw}


def distribution_of(module: str) -> str | None:
    """The distribution that provides top-level `module` (None for the standard library)."""
    if module in sys.stdlib_module_names or module == "__future__":
        return None
    if module.startswith("paperplug"):
        return normal(module)
    found = DISTS.get(module)
    assert found, f"no installed distribution provides {module!r}"
    return normal(found[0])


def imports_of(path: Path) -> tuple[set[str], set[str]]:
    """(top-level imports, imports inside a function, with, try or if block): top-level module
    names. A call of harness.pyplot or save_figure counts as a scoped import of matplotlib."""
    top, scoped = set(), set()

    def visit(node: ast.AST, inside: bool) -> None:
        for child in ast.iter_child_nodes(node):
            names = []
            if isinstance(child, ast.Import):
                names = [a.name for a in child.names]
            elif isinstance(child, ast.ImportFrom) and not child.level and child.module:
                names = [child.module]
            elif isinstance(child, ast.Call) and ast.unparse(child.func).split(".")[-1] in (
                "pyplot",
                "save_figure",
            ):
                names = ["matplotlib"]
            for name in names:
                (scoped if inside or names == ["matplotlib"] else top).add(name.split(".")[0])
            visit(child, inside or isinstance(child, SCOPED))

    visit(ast.parse(path.read_text()), False)
    return top, scoped


def _modules(slug: str) -> list[Path]:
    return sorted((ROOT / "packages" / slug / "src" / MANIFEST[slug]["import"]).glob("*.py"))


def _demo_modules(slug: str) -> set[str]:
    return {"demo.py", f"{MANIFEST[slug].get('embedded', 'embedded')}.py"}


CORE = {"paperplug", "pluggy"}  # what `paperplug` brings


@pytest.mark.parametrize("slug", sorted(MANIFEST))
def test_every_import_is_declared_where_it_is_needed(slug):
    base, extras = declared(slug)
    me = normal(MANIFEST[slug]["dist"])
    demo = extras.get("demo", set())
    problems = []
    for path in _modules(slug):
        top, scoped = imports_of(path)
        allowed_top = base | CORE | {me} | (demo if path.name in _demo_modules(slug) else set())
        for module in sorted(top):
            dist = distribution_of(module)
            if dist is not None and dist not in allowed_top:
                where = "[demo]" if path.name in _demo_modules(slug) else "base"
                problems.append(
                    f"{path.name} imports {module} ({dist}) at import time: not a {where} dependency"
                )
        anywhere = base | CORE | {me} | set().union(*extras.values())
        for module in sorted(scoped):
            dist = distribution_of(module)
            if dist is not None and dist not in anywhere:
                problems.append(f"{path.name} imports {module} ({dist}): declared nowhere")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("slug", sorted(MANIFEST))
def test_every_base_dependency_is_imported_by_the_method(slug):
    base, _ = declared(slug)
    used = set()
    for path in _modules(slug):
        if path.name not in _demo_modules(slug):
            top, scoped = imports_of(path)
            used |= {distribution_of(m) for m in top | scoped}
    unused = base - used - {"paperplug"}
    assert not unused, f"{slug} depends on {sorted(unused)}, which its method never imports"


HEAVY = {
    "torch",
    "transformers",
    "sentence-transformers",
    "scipy",
    "scikit-learn",
    "flwr",
    "agentdojo",
}
LLM_HF = {"torch", "transformers"}  # what paperplug-llm[hf] brings


@pytest.mark.parametrize("slug", sorted(MANIFEST))
def test_the_manifest_names_the_heavy_libraries_a_base_install_brings(slug):
    project = tomllib.loads((ROOT / "packages" / slug / "pyproject.toml").read_text())["project"]
    brings = set()
    for requirement in project["dependencies"]:
        name, extras = requirement_name(requirement)
        brings.add(name)
        if name == "paperplug-llm" and "hf" in extras:
            brings |= LLM_HF
    assert set(MANIFEST[slug]["heavy"]) == brings & HEAVY


def test_every_demo_and_embedded_module_imports_in_the_dev_environment():
    """`make demo` runs in .venv: a demo whose imports are missing there fails here first (the
    imports inside its functions are checked above, statically)."""
    modules = [
        f"{MANIFEST[s]['import']}.{m.removesuffix('.py')}"
        for s in sorted(MANIFEST)
        for m in sorted(_demo_modules(s))
    ]
    code = "import importlib, sys\nfor m in sys.argv[1:]:\n    importlib.import_module(m)\n"
    run = subprocess.run([sys.executable, "-c", code, *modules], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]


def workspace_versions() -> dict[str, str]:
    """{distribution: version} of the core and every package in this tree."""
    paths = [ROOT / "core", *(ROOT / "packages" / slug for slug in MANIFEST)]
    out = {}
    for path in paths:
        project = tomllib.loads((path / "pyproject.toml").read_text())["project"]
        out[normal(project["name"])] = project["version"]
    return out


def test_the_core_reports_the_version_it_is_built_as():
    import paperplug

    assert paperplug.__version__ == workspace_versions()["paperplug"]


@pytest.mark.parametrize("slug", sorted(MANIFEST))
def test_a_requirement_on_the_core_or_a_sibling_starts_at_the_version_in_this_tree(slug):
    """The packages are released together: a package's lower bound on the core or a sibling
    is the version it was tested with here (an older core lacks the checks it calls)."""
    from packaging.requirements import Requirement
    from packaging.version import Version

    versions = workspace_versions()
    toml = tomllib.loads((ROOT / "packages" / slug / "pyproject.toml").read_text())
    project = toml["project"]
    me = normal(project["name"])
    groups = [
        project["dependencies"],
        *project.get("optional-dependencies", {}).values(),
        *toml.get("dependency-groups", {}).values(),
    ]
    stale = []
    for text in (r for group in groups for r in group if isinstance(r, str)):
        req = Requirement(text)
        name = normal(req.name)
        if name == me or name not in versions:
            continue
        lower = [Version(s.version) for s in req.specifier if s.operator == ">="]
        if lower != [Version(versions[name])] or versions[name] not in req.specifier:
            stale.append(f"{text!r} (this tree: {name} {versions[name]})")
    assert not stale, f"{slug}: " + "; ".join(stale)
