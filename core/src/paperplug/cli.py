"""The `paperplug` command: list components, show one, run a package's embedded demo."""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import json
import re
import sys
import time
from typing import Any

from paperplug.extras import MissingExtraError
from paperplug.harness import table
from paperplug.manager import ComponentImportError, get_manager
from paperplug.manifest import load_manifest
from paperplug.roles import ROLES


def _installed_version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def cmd_list(args: argparse.Namespace) -> int:
    if args.available:
        rows = [
            {
                "slug": slug,
                "dist": t["dist"],
                "installed": _installed_version(t["dist"]),
                "roles": t["roles"],
                "components": t["components"],
                "paper": t.get("paper", {}).get("title", ""),
            }
            for slug, t in sorted(load_manifest().items())
        ]
        if args.json:
            print(json.dumps({"available": rows}, indent=2))
        else:
            body = [
                [r["dist"], r["installed"] or "-", ",".join(r["roles"]), r["paper"]] for r in rows
            ]
            print(table(body, ["package (pip install ...)", "installed", "roles", "paper"]))
        return 0
    manager = get_manager()
    comps = manager.list_components(args.role)
    plugins = manager.plugins()
    versions = {p["name"]: p["version"] for p in plugins}
    if args.json:
        payload = {
            "components": [c.to_dict() | {"version": versions.get(c.plugin, "")} for c in comps],
            "plugins": plugins,
        }
        print(json.dumps(payload, indent=2))
        return 0
    if comps:
        body = [[c.role, c.name, c.plugin, versions.get(c.plugin, ""), c.summary] for c in comps]
        print(table(body, ["role", "name", "plugin", "version", "summary"]))
    else:
        print("no components installed; see `paperplug list --available`")
    for row in plugins:
        if row["error"]:
            print(f"FAILED plugin {row['name']}: {row['error']}")
    return 0


def cmd_info(args: argparse.Namespace) -> int:
    """One JSON document: the name and one entry per role registering it. The factory is
    imported to read its docstring; one that cannot be imported is marked broken, not raised."""
    manager = get_manager()
    found = [c for c in manager.list_components(args.role) if c.name == args.name]
    if not found:
        print(f"no component named {args.name!r}; see `paperplug list`", file=sys.stderr)
        return 1
    versions = {p["name"]: p["version"] for p in manager.plugins()}
    entries = []
    for c in found:
        entry: dict[str, Any] = c.to_dict() | {"version": versions.get(c.plugin, "")}
        try:
            entry |= {"status": "ok", "doc": (c.resolve().__doc__ or "").strip()}
        except ComponentImportError as exc:
            entry |= {"status": "broken", "error": str(exc), "doc": ""}
        entries.append(entry)
    print(json.dumps({"name": args.name, "components": entries}, indent=2))
    return 0 if all(e["status"] == "ok" for e in entries) else 1


def _requirements(dist: str, extra: str, seen: frozenset[str] = frozenset()) -> list[str]:
    """The distributions `dist`'s [extra] requires, its own extras expanded (metadata only)."""
    try:
        lines = importlib.metadata.requires(dist) or []
    except importlib.metadata.PackageNotFoundError:
        return []
    found = []
    for line in lines:
        requirement, _, marker = line.partition(";")
        if not re.search(rf"""extra\s*==\s*["']{re.escape(extra)}["']""", marker):
            continue
        match = re.match(r"\s*([A-Za-z0-9_.-]+)\s*(?:\[([^\]]*)\])?", requirement)
        if match is None:
            continue
        name, extras = match.group(1), (match.group(2) or "").split(",")
        if _normal(name) == _normal(dist):
            for e in (e.strip() for e in extras if e.strip() and e.strip() not in seen):
                found += _requirements(dist, e, seen | {extra})
        else:
            found.append(name)
    return found


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _missing_for_demo(dist: str) -> list[str]:
    """What `dist`'s [demo] extra requires and is not installed."""
    return [r for r in _requirements(dist, "demo") if _installed_version(r) is None]


def _run_demo(name: str, argv: list[str]) -> int:
    slug = name.removeprefix("paperplug-").replace("-", "_")
    dist = f"paperplug-{slug.replace('_', '-')}"
    if _installed_version(dist) is not None and (missing := _missing_for_demo(dist)):
        print(
            f"paperplug demo {slug} needs {', '.join(missing)}: pip install '{dist}[demo]'",
            file=sys.stderr,
        )
        return 2
    try:
        module = importlib.import_module(f"paperplug_{slug}.demo")
        return int(module.main(argv) or 0)
    except ModuleNotFoundError as exc:
        if exc.name in (f"paperplug_{slug}", f"paperplug_{slug}.demo"):
            print(f"no demo for {name!r}: install {dist}", file=sys.stderr)
        elif isinstance(exc, MissingExtraError):
            print(f"paperplug demo {slug}: {exc}", file=sys.stderr)
        else:
            print(
                f"paperplug demo {slug} needs {exc.name!r}, which is not installed: "
                f"pip install '{dist}[demo]'",
                file=sys.stderr,
            )
        return 2


def cmd_demo(args: argparse.Namespace) -> int:
    if not args.all:
        if not args.name:
            print("usage: paperplug demo NAME [ARGS...] | paperplug demo --all", file=sys.stderr)
            return 2
        return _run_demo(args.name, args.args)
    manifest = load_manifest()
    installed = [s for s, t in sorted(manifest.items()) if _installed_version(t["dist"])]
    if not installed:
        print(
            "no paperplug package is installed yet: nothing to demo (see `paperplug list --available`)"
        )
        return 0
    rows = []
    for slug in installed:
        print(f"\n=== paperplug demo {slug}", flush=True)
        start = time.perf_counter()
        try:
            rc = _run_demo(slug, [])
        except Exception as exc:  # one failing demo must not hide the others' results
            print(f"demo {slug} raised {type(exc).__name__}: {exc}", file=sys.stderr)
            rc = 1
        rows.append(
            [slug, "ok" if rc == 0 else f"failed ({rc})", f"{time.perf_counter() - start:.1f}"]
        )
    print("\n" + table(rows, ["package", "result", "seconds"]))
    return 0 if all(r[1] == "ok" for r in rows) else 1


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="paperplug", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("list", help="installed components (or --available packages)")
    p.add_argument("--role", choices=ROLES)
    p.add_argument("--json", action="store_true")
    p.add_argument("--available", action="store_true", help="every package in the manifest")
    p.set_defaults(func=cmd_list)
    p = sub.add_parser("info", help="one component: plugin, version, paper, docstring")
    p.add_argument("name")
    p.add_argument("--role", choices=ROLES)
    p.set_defaults(func=cmd_info)
    p = sub.add_parser("demo", help="run a package's embedded default (offline, CPU)")
    p.add_argument("name", nargs="?")
    p.add_argument("--all", action="store_true", help="every installed package, then a summary")
    p.add_argument("args", nargs=argparse.REMAINDER)
    p.set_defaults(func=cmd_demo)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    raise SystemExit(main())
