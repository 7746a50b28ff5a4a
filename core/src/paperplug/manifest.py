"""Read plugins.toml, the manifest of every paper package, installed or not.

The repository's plugins.toml is the source; the core ships a copy (catalog.toml) so that
`paperplug list --available` works from a plain pip install. `python -m paperplug.manifest`
prints the package slugs or a package's extras (for the Makefile), or refreshes the README
table and the copy.
"""

from __future__ import annotations

import os
import sys
import tomllib
from pathlib import Path
from typing import Any

CATALOG = Path(__file__).with_name("catalog.toml")
README_BEGIN = "<!-- packages:begin (generated from plugins.toml by `make readme`) -->"
README_END = "<!-- packages:end -->"


def find_manifest(start: Path | None = None) -> Path:
    """PAPERPLUG_MANIFEST, else the nearest plugins.toml above `start` (cwd), else the copy."""
    if env := os.environ.get("PAPERPLUG_MANIFEST"):
        return Path(env)
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "plugins.toml").is_file():
            return folder / "plugins.toml"
    return CATALOG


def load_manifest(path: Path | None = None) -> dict[str, dict[str, Any]]:
    """The `[plugins.<slug>]` tables, by slug."""
    with open(path or find_manifest(), "rb") as f:
        return tomllib.load(f).get("plugins", {})


def install_cell(table: dict[str, Any]) -> str:
    """ "1234 MB, 52 packages, torch": what `pip install <dist>` weighs (tests/install_size.py)."""
    install = table.get("install")
    if not install:
        return "-"
    torch = ", torch" if "torch" in table.get("heavy", []) else ""
    return f"{install['mb']} MB, {install['packages']} packages{torch}"


def readme_table(manifest: dict[str, dict[str, Any]]) -> str:
    """The top README's package table."""
    rows = [
        "| package | roles | components | paper | status | GPU | install |",
        "|---|---|---|---|---|---|---|",
    ]
    for slug, t in sorted(manifest.items()):
        paper = t.get("paper", {})
        roles = ", ".join(t["roles"]) if t.get("kind", "paper") == "paper" else "(support package)"
        rows.append(
            f"| [`{t['dist']}`]({t['path']}) | {roles} | "
            f"{', '.join(f'`{c}`' for c in t['components'])} | "
            f"[{paper.get('title', slug)}]({paper.get('url', '')}) | {t.get('status', '')} | "
            f"{t.get('gpu', 'none')} | {install_cell(t)} |"
        )
    return "\n".join(rows)


def render_readme(readme: str, manifest: dict[str, dict[str, Any]]) -> str:
    """`readme` with the text between the package-table markers replaced."""
    head, _, rest = readme.partition(README_BEGIN)
    _, _, tail = rest.partition(README_END)
    return f"{head}{README_BEGIN}\n{readme_table(manifest)}\n{README_END}{tail}"


def main(argv: list[str] | None = None) -> int:
    args = argv if argv is not None else sys.argv[1:]
    command = args[0] if args else "slugs"
    path = find_manifest()
    manifest = load_manifest(path)
    if command == "slugs":
        print(" ".join(sorted(manifest)))
    elif command == "extras":  # a package's extras, comma-joined, for `pip install -e 'dir[...]'`
        if len(args) != 2 or args[1] not in manifest:
            print("usage: python -m paperplug.manifest extras <slug>", file=sys.stderr)
            return 2
        pyproject = path.parent / manifest[args[1]]["path"] / "pyproject.toml"
        with open(pyproject, "rb") as f:
            extras = tomllib.load(f)["project"].get("optional-dependencies", {})
        print(",".join(sorted(extras)))
    elif command == "readme":
        readme = path.with_name("README.md")
        readme.write_text(render_readme(readme.read_text(), manifest))
        CATALOG.write_text(path.read_text())
    else:
        print(
            f"usage: python -m paperplug.manifest [slugs|extras SLUG|readme]; got {command!r}",
            file=sys.stderr,
        )
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
