"""Build the documentation site from what the repository already holds, with no second copy:
the home page from plugins.toml and the README's three uses, one page per package from its
README followed by its API (what its `__init__` exports, rendered by mkdocstrings) and the
figures its demo wrote to out/<slug>/, a page gathering every benchmark table, and the guides
from the README's sections. The MkDocs project is generated under build/docs/, the site into
site/.

    python .ci/docs/build.py [--out site] [--serve]   # `make docs`, `make docs-serve`
"""

from __future__ import annotations

import argparse
import ast
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "core" / "src"))

from paperplug.manifest import load_manifest, readme_table  # noqa: E402

PROJECT = ROOT / "build" / "docs"
FIGURE = re.compile(r"\.(png|jpg|jpeg|gif|svg)$", re.I)


def sections(markdown: str, level: int = 2) -> dict[str, str]:
    """{heading: body} of the `level` headings of a markdown text (code fences respected)."""
    out: dict[str, str] = {}
    current, lines, fenced = None, [], False
    for line in markdown.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if not fenced and re.match(rf"^#{{{level}}} ", line):
            if current is not None:
                out[current] = "\n".join(lines).strip("\n")
            current, lines = line[level + 1 :].strip(), []
        elif current is not None:
            lines.append(line)
    if current is not None:
        out[current] = "\n".join(lines).strip("\n")
    return out


def fences(markdown: str, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", markdown, flags=re.M | re.S)


def exports(slug: str, manifest: dict) -> list[tuple[str, str]]:
    """(name, "package.module") of everything a package's `__init__` exports lazily."""
    package = manifest[slug]["import"]
    init = ROOT / manifest[slug]["path"] / "src" / package / "__init__.py"
    for node in ast.walk(ast.parse(init.read_text())):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "lazy_exports":
            mapping = ast.literal_eval(node.args[1])
            return sorted((name, f"{package}{module}") for name, module in mapping.items())
    return []


def relink(text: str, slug: str | None) -> str:
    """Links that leave the docs (source files, folders) become code; links to a package's
    folder become its page."""

    def fix(match: re.Match) -> str:
        label, target = match.group(1), match.group(2)
        if re.match(r"^(https?:|mailto:|#)", target):
            return match.group(0)
        if FIGURE.search(target):
            return match.group(0)
        package = re.fullmatch(r"(?:\.\./)*packages/([a-z_]+)/?", target)
        if package:
            return f"[{label}]({'' if slug else 'packages/'}{package.group(1)}.md)"
        return label if label.startswith("`") else f"{label} (`{target}`)"

    return re.sub(r"(?<!!)\[([^\]]+)\]\(([^)\s]+)\)", fix, text)


def package_page(slug: str, manifest: dict, out_dir: Path) -> str:
    """The README, then the API reference, then the demo's figures (or how to make them)."""
    table = manifest[slug]
    folder = ROOT / table["path"]
    readme = relink((folder / "README.md").read_text(), slug)
    assets = out_dir / slug
    for image in re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", readme):
        source = folder / image
        if source.is_file():
            (assets / image).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, assets / image)
    readme = re.sub(r"(!\[[^\]]*\]\()([^)\s]+\))", rf"\g<1>{slug}/\g<2>", readme)
    api = [
        f"::: {module}.{name}\n    options:\n      show_root_heading: true\n      heading_level: 3\n"
        for name, module in exports(slug, manifest)
    ]
    figures = (
        sorted(p for p in (ROOT / "out" / slug).glob("*") if FIGURE.search(p.name))
        if (ROOT / "out" / slug).is_dir()
        else []
    )
    if figures:
        (assets / "demo").mkdir(parents=True, exist_ok=True)
        shown = []
        for path in figures:
            shutil.copy2(path, assets / "demo" / path.name)
            shown.append(f"![{path.stem}]({slug}/demo/{path.name})")
        figure_text = (
            "What `paperplug demo "
            + slug
            + "` drew on the machine that built this site:\n\n"
            + "\n\n".join(shown)
        )
    else:
        figure_text = f"No figure yet: `paperplug demo {slug}` (or `make demo`) draws it into `out/{slug}/`; the next `make docs` shows it here."
    return (
        f"{readme}\n\n## API reference\n\n"
        + ("\n".join(api) or "No public API.")
        + f"\n\n## Figures of the embedded default\n\n{figure_text}\n"
    )


def home(readme: str, manifest: dict) -> str:
    parts = sections(readme)
    install = fences(parts["1. Install a single method"], "bash")[0]
    register = fences(parts["2. Register a custom plugin"], "python")[1]
    compose = fences(parts["3. Compose defenses"], "python")[0]
    intro = readme.split("\n## ", 1)[0].split("\n", 1)[1].strip()
    roles = (
        "| role | call | result |\n|---|---|---|\n"
        "| Trainer | `fit(data, **kw)`, then `predict` / `sample` / `score` | the fitted object, `history_` |\n"
        "| Explainer | `explain(model, inputs, target=None)` | `Explanation(values, kind, meta)` |\n"
        "| Defense | `check(payload, context)` at a `stage` | `Verdict(payload, valid, risk, reason)` |\n"
        "| Attack | `run(target, inputs, budget=None)` | `AttackResult(adversarial, success, queries)` |\n"
        "| Solver | `solve(problem, seed=None)` | `Solution(value, objective, certificate)` |\n"
    )
    return (
        f"# paperplug\n\n{relink(intro, None)}\n\n## The five roles\n\n{roles}\n"
        "## Three uses\n\n### Install a single method\n\n```bash\n" + install + "```\n\n"
        "### Register a custom plugin\n\n```python\n" + register + "```\n\n"
        "### Compose defenses\n\n```python\n" + compose + "```\n\n"
        "## Catalogue\n\n"
        + relink(readme_table(manifest), None).replace("](packages/", "](packages/")
        + "\n"
    )


#: the core's API page: (heading, what it is for, the objects mkdocstrings renders)
CORE_API = [
    (
        "Loading and registering",
        "Build any installed component, register your own at run time or through an entry "
        "point, and inspect what is installed.",
        ["load", "register_component", "list_components", "register_plugin",
         "unregister_plugin", "get_manager", "PluginManager", "ComponentInfo", "hookimpl",
         "PluginError", "ComponentImportError", "DuplicateComponentError"],
    ),
    (
        "The roles and their result types",
        "The Protocols every component satisfies (checked by `paperplug.load`) and what "
        "their calls return.",
        ["ROLES", "STAGES", "Trainer", "Explainer", "Defense", "Attack", "Solver",
         "ChatModel", "Explanation", "Verdict", "AttackResult", "Solution", "History",
         "stream_chat", "to_jsonable"],
    ),
    (
        "Guard and composition",
        "Defenses composed by stage into one guard; an attack evaluated against it.",
        ["compose", "Guard", "GuardVerdict", "GuardedStream", "FilterResult", "evaluate",
         "Evaluation"],
    ),
    ("Utilities", "Seeds and lazy public APIs for plugin packages.", ["seeded_torch", "lazy_exports"]),
]  # fmt: skip
CORE_MODULES = [
    ("The hook specs", "paperplug.hookspecs"),
    ("Checking arguments: paperplug.checks", "paperplug.checks"),
    ("Testing a plugin: paperplug.testing", "paperplug.testing"),
    ("The bad-input battery: paperplug.battery", "paperplug.battery"),
    ("Conversation state: paperplug.state", "paperplug.state"),
    ("A local server's door: paperplug.door", "paperplug.door"),
]


def core_page() -> str:
    """The core's API reference on one page: what a plugin author calls and implements."""
    out = [
        "# Core API reference\n\nEverything a plugin author uses from `paperplug` (the core "
        "distribution, which depends on pluggy only): loading and registering components, the "
        "five roles and their result types, composing defenses, the hook specs, argument "
        "checks, the pytest contracts and bad-input battery for a plugin's tests, the "
        "conversation state a stateful defense keeps, and the door of a local server.\n"
    ]
    options = "    options:\n      show_root_heading: true\n      heading_level: 3\n"
    for heading, text, names in CORE_API:
        out.append(f"## {heading}\n\n{text}\n")
        out += [f"::: paperplug.{name}\n{options}" for name in names]
    for heading, module in CORE_MODULES:
        out.append(f"## {heading}\n\n::: {module}\n{options}")
    return "\n".join(out)


def table_code_pipes(markdown: str) -> str:
    """In table rows, `\\|` inside a code span becomes `|`: GitHub needs the escape there,
    while MkDocs' tables already keep a code span's pipes in its cell and would show the
    backslash."""

    def unescape(match: re.Match) -> str:
        return match.group(0).replace("\\|", "|")

    return "\n".join(
        re.sub(r"(`+)(.+?)\1", unescape, line) if line.lstrip().startswith("|") else line
        for line in markdown.splitlines()
    )


def benchmarks(manifest: dict) -> str:
    out = [
        "# Benchmarks\n\nEvery package's side-by-side run against its peer, as its README states it, with the command that made it and the machine it ran on.\n"
    ]
    for slug in sorted(manifest):
        for heading, body in sections(
            (ROOT / manifest[slug]["path"] / "README.md").read_text()
        ).items():
            if heading.startswith("Benchmark"):
                out.append(
                    f"## [{manifest[slug]['dist']}](packages/{slug}.md): {heading}\n\n{relink(body, slug)}\n"
                )
    return "\n".join(out)


def guides(readme: str) -> dict[str, str]:
    parts = sections(readme)
    register = parts["2. Register a custom plugin"]
    adding = parts["Adding a package"]
    compose = parts["3. Compose defenses"]
    install = parts["1. Install a single method"]
    cpu = install[install.index("### torch on a machine without a GPU") :]
    return {
        "writing-a-plugin.md": f"# Writing a plugin\n\n{relink(register, None)}\n\n## A package of this repository\n\n{relink(adding, None)}\n",
        "composing-defenses.md": f"# Composing defenses\n\n{relink(compose, None)}\n",
        "cpu-torch.md": "# The CPU-only torch install\n\n"
        + relink(cpu.split("\n", 1)[1], None)
        + "\n",
    }


MKDOCS = """site_name: paperplug
site_description: NeurIPS 2025 papers as pip packages, composed through one plugin core
docs_dir: docs
strict: true
theme:
  name: material
  font: false  # no Google Fonts: the site works offline and loads nothing from elsewhere
  features: [navigation.sections, search.highlight, content.code.copy]
plugins:
  - search
  - mkdocstrings:
      default_handler: python
      handlers:
        python:
          paths: {paths}
          options:
            show_source: false
            docstring_style: google
            show_signature_annotations: true
            separate_signature: true
            merge_init_into_class: true
            show_if_no_docstring: true
validation:
  omitted_files: warn
  absolute_links: warn
  unrecognized_links: warn
  anchors: warn
markdown_extensions: [tables, admonition, toc, pymdownx.superfences]
nav:
  - Home: index.md
  - Guides:
      - Writing a plugin: guides/writing-a-plugin.md
      - Composing defenses: guides/composing-defenses.md
      - CPU-only torch: guides/cpu-torch.md
  - Benchmarks: benchmarks.md
  - Core API: api/core.md
  - Packages:
{packages}
"""


def generate(manifest: dict) -> Path:
    """The MkDocs project under build/docs/ (recreated)."""
    shutil.rmtree(PROJECT, ignore_errors=True)
    docs = PROJECT / "docs"
    for folder in ("guides", "packages", "api"):
        (docs / folder).mkdir(parents=True)
    readme = (ROOT / "README.md").read_text()
    pages = {"index.md": home(readme, manifest), "benchmarks.md": benchmarks(manifest)}
    pages |= {f"guides/{name}": text for name, text in guides(readme).items()}
    pages["api/core.md"] = core_page()
    for slug in sorted(manifest):
        pages[f"packages/{slug}.md"] = package_page(slug, manifest, docs / "packages")
    for name, text in pages.items():
        (docs / name).write_text(table_code_pipes(text) + "\n")
    paths = [
        str(ROOT / "core" / "src"),
        *(str(ROOT / manifest[s]["path"] / "src") for s in sorted(manifest)),
    ]
    nav = "\n".join(f"      - {manifest[s]['dist']}: packages/{s}.md" for s in sorted(manifest))
    (PROJECT / "mkdocs.yml").write_text(MKDOCS.format(paths=paths, packages=nav))
    return PROJECT


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=ROOT / "site", help="where the site goes")
    parser.add_argument(
        "--serve", action="store_true", help="serve on 127.0.0.1:8000 instead of building"
    )
    args = parser.parse_args(argv)
    start = time.perf_counter()
    project = generate(load_manifest(ROOT / "plugins.toml"))
    mkdocs = [sys.executable, "-m", "mkdocs"]
    if args.serve:
        return subprocess.run(
            [*mkdocs, "serve", "-f", str(project / "mkdocs.yml"), "-a", "127.0.0.1:8000"],
            check=False,
        ).returncode
    run = subprocess.run(
        [
            *mkdocs,
            "build",
            "--strict",
            "-q",
            "-f",
            str(project / "mkdocs.yml"),
            "-d",
            str(args.out.resolve()),
        ],
        check=False,
    )
    print(
        f"site built into {args.out} in {time.perf_counter() - start:.1f} s"
        if run.returncode == 0
        else "mkdocs build --strict failed"
    )
    return run.returncode


if __name__ == "__main__":
    raise SystemExit(main())
