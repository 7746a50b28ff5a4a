"""Plugin manager: entry points loaded one by one, run-time registration, the component catalog.

A plugin that fails to import, registers a duplicate name, or raises in its hook is skipped
with a warning and listed as failed; the others keep working (PAPERPLUG_STRICT_PLUGINS=1
re-raises instead). The catalog is rebuilt from the registration hooks whenever the set of
plugins changes, so a plugin registered at run time shows up beside the installed ones.
Loading and registration hold one lock, so the first calls from several threads all see
every installed plugin.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import os
import sys
import threading
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pluggy

from paperplug import hookspecs
from paperplug.roles import ROLES, missing_members

ENTRY_POINT_GROUP = "paperplug"
HOOKS: dict[str, str] = {role: f"register_{role}s" for role in ROLES}


class PluginError(RuntimeError):
    """A plugin could not be loaded or registered."""


class DuplicateComponentError(PluginError, ValueError):
    """Two plugins registered the same component name for one role."""


class ComponentImportError(PluginError, ImportError):
    """A registered factory cannot be imported (missing module, import error, missing attribute)."""


@dataclass(frozen=True)
class ComponentInfo:
    """One registered implementation of a role: a lazy factory plus what to show in listings."""

    role: str
    name: str
    factory: Callable[..., Any] | str
    plugin: str
    summary: str = ""
    paper: str = ""
    tags: tuple[str, ...] = ()

    def resolve(self) -> Callable[..., Any]:
        """Import the factory when it was given as a "module:attr" path.

        Raises ComponentImportError naming the component, its plugin and the cause."""
        if callable(self.factory):
            return self.factory
        module_name, _, attr = self.factory.partition(":")
        try:
            obj: Any = importlib.import_module(module_name)
            for part in attr.split("."):
                obj = getattr(obj, part)
        except Exception as exc:
            raise ComponentImportError(
                f"{self.role} {self.name!r} of plugin {self.plugin!r} cannot be imported from "
                f"{self.factory!r}: {type(exc).__name__}: {exc}"
            ) from exc
        if not callable(obj):
            raise ComponentImportError(
                f"{self.role} {self.name!r} of plugin {self.plugin!r}: {self.factory!r} is a "
                f"{type(obj).__name__}, not a callable factory"
            )
        return obj

    def to_dict(self) -> dict[str, Any]:
        factory = self.factory if isinstance(self.factory, str) else _qualname(self.factory)
        return {
            "role": self.role,
            "name": self.name,
            "plugin": self.plugin,
            "factory": factory,
            "summary": self.summary,
            "paper": self.paper,
            "tags": list(self.tags),
        }


def _qualname(obj: Any) -> str:
    return f"{getattr(obj, '__module__', '?')}:{getattr(obj, '__qualname__', repr(obj))}"


def _env_names(var: str) -> set[str] | None:
    value = os.environ.get(var)
    if value is None:
        return None
    return {n.strip() for n in value.split(",") if n.strip()}


def _strict() -> bool:
    return os.environ.get("PAPERPLUG_STRICT_PLUGINS", "") not in ("", "0", "false", "no")


def installed_entry_points() -> list[importlib.metadata.EntryPoint]:
    """The entry points of group `paperplug` in the current environment, by name."""
    return sorted(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name)


class PluginManager:
    """The paperplug plugin manager; `entry_points=False` gives an empty one (tests)."""

    def __init__(self, *, entry_points: bool = True) -> None:
        self.pm = pluggy.PluginManager("paperplug")
        self.pm.add_hookspecs(hookspecs)
        self.failed: dict[str, str] = {}
        self.dists: dict[str, tuple[str, str]] = {}
        self._catalog: dict[str, dict[str, ComponentInfo]] = {role: {} for role in ROLES}
        self._pending_load = entry_points
        self._lock = threading.RLock()

    # -- loading ---------------------------------------------------------------------------
    def _ensure_loaded(self) -> None:
        if not self._pending_load:
            return
        with self._lock:  # other threads wait until every installed plugin is in the catalog
            if self._pending_load:
                self.load_entry_points()
                self.load_plugins_dir()
                self._pending_load = False

    def load_entry_points(self) -> None:
        """Load each entry point of group `paperplug` on its own, honouring the env controls."""
        wanted = _env_names("PAPERPLUG_LOAD_PLUGINS")
        disabled = _env_names("PAPERPLUG_DISABLE_PLUGINS") or set()
        for ep in installed_entry_points():
            if wanted is not None and ep.name not in wanted:
                continue
            if ep.name in disabled:
                self.pm.set_blocked(ep.name)
                continue
            if self.pm.has_plugin(ep.name) or self.pm.is_blocked(ep.name):
                continue
            dist = ep.dist
            if dist is not None:
                self.dists[ep.name] = (dist.metadata["Name"], dist.version)
            self._guarded(ep.name, lambda ep=ep: self._register(ep.load(), ep.name))

    def load_plugins_dir(self, path: str | os.PathLike[str] | None = None) -> None:
        """Register every `*.py` in PAPERPLUG_PLUGINS_DIR (a folder or one file) as a plugin."""
        raw = path if path is not None else os.environ.get("PAPERPLUG_PLUGINS_DIR")
        if not raw:
            return
        root = Path(raw)
        files = sorted(root.glob("*.py")) if root.is_dir() else [root]
        for file in files:
            name = f"local:{file.stem}"
            self._guarded(name, lambda file=file, name=name: self._register(_load_file(file), name))

    def _guarded(self, name: str, action: Callable[[], object]) -> None:
        try:
            action()
        except Exception as exc:
            if _strict():
                raise PluginError(f"plugin {name!r} failed to load: {exc}") from exc
            self.failed[name] = f"{type(exc).__name__}: {exc}"
            warnings.warn(
                f"paperplug: skipping plugin {name!r}: {exc}", RuntimeWarning, stacklevel=3
            )

    def _register(self, plugin: object, name: str | None) -> str:
        with self._lock:
            if name is not None and self.pm.has_plugin(name):
                raise PluginError(
                    f"a plugin named {name!r} is already registered; unregister_plugin({name!r}) "
                    "first or choose another name"
                )
            try:
                registered = self.pm.register(plugin, name=name)
            except ValueError as exc:  # pluggy: the same object registered twice
                raise PluginError(f"plugin {name or plugin!r} is already registered") from exc
            if registered is None:
                raise PluginError(f"plugin {name!r} is blocked (PAPERPLUG_DISABLE_PLUGINS)")
            try:
                self.pm.check_pending()
                self._catalog = self._build_catalog()
            except Exception:
                self.pm.unregister(name=registered)
                raise
            self.failed.pop(registered, None)
            return registered

    # -- run-time registration ---------------------------------------------------------------
    def register_plugin(self, plugin: object, name: str | None = None) -> str:
        """Register a plugin object (module, class or instance with hookimpls); returns its name."""
        self._ensure_loaded()
        return self._register(plugin, name)

    def register_component(
        self, role: str, name: str, factory: Callable[..., Any] | str, **meta: Any
    ) -> str:
        """Register one factory as a plugin of its own, named "role:name".

        Registering the same role and name again this way replaces the earlier one (re-running
        a notebook cell); a name taken by another plugin is a DuplicateComponentError."""
        self._ensure_loaded()
        plugin_name = f"{_check_role(role)}:{name}"
        with self._lock:
            previous = self.pm.get_plugin(plugin_name)
            if previous is not None and getattr(previous, "one_off", False):
                self.pm.unregister(name=plugin_name)
            try:
                return self._register(_one_off_plugin(role, name, factory, meta), plugin_name)
            except Exception:
                if previous is not None and not self.pm.has_plugin(plugin_name):
                    self._register(previous, plugin_name)  # keep the earlier definition
                raise

    def unregister_plugin(self, name: str) -> None:
        """Remove a plugin registered at run time or from an entry point."""
        self._ensure_loaded()
        with self._lock:
            if not self.pm.has_plugin(name):
                raise ValueError(
                    f"no plugin named {name!r}; registered: {sorted(self.plugin_names())}"
                )
            self.pm.unregister(name=name)
            self._catalog = self._build_catalog()

    def plugin_names(self) -> list[str]:
        return [name for name, _ in self.pm.list_name_plugin()]

    # -- catalog -----------------------------------------------------------------------------
    def _build_catalog(self) -> dict[str, dict[str, ComponentInfo]]:
        catalog: dict[str, dict[str, ComponentInfo]] = {role: {} for role in ROLES}
        for role, hook_name in HOOKS.items():
            for impl in getattr(self.pm.hook, hook_name).get_hookimpls():
                found: dict[str, ComponentInfo] = {}
                args = {"register": _Register(role, impl.plugin_name, found, catalog[role])}
                impl.function(*[args[a] for a in impl.argnames])
                catalog[role].update(found)
        return catalog

    def list_components(self, role: str | None = None) -> list[ComponentInfo]:
        """All registered components, or those of one role, sorted by role then name."""
        self._ensure_loaded()
        roles = ROLES if role is None else (_check_role(role),)
        catalog = self._catalog
        return [c for r in roles for _, c in sorted(catalog[r].items())]

    def get(self, role: str, name: str) -> ComponentInfo:
        """The registration of component `name` of `role` (nothing is imported)."""
        self._ensure_loaded()
        table = self._catalog[_check_role(role)]
        if name not in table:
            raise ValueError(f"no {role} named {name!r}; available: {sorted(table) or 'none'}")
        return table[name]

    def load(self, role: str, name: str, **params: Any) -> Any:
        """Build an instance of component `name` of `role` and check it against the role's
        Protocol (roles.missing_members)."""
        info = self.get(role, name)
        instance = info.resolve()(**params)
        missing = missing_members(role, instance)
        if missing:
            raise TypeError(f"{role} {name!r} from plugin {info.plugin!r} lacks {missing}")
        return instance

    def plugins(self) -> list[dict[str, Any]]:
        """One row per plugin, loaded or failed, each with the same keys: name, dist, version,
        components, error (None when it loaded)."""
        self._ensure_loaded()
        rows = []
        comps = self.list_components()
        for name in sorted({*self.plugin_names(), *self.failed}):
            dist, version = self.dists.get(name, ("", ""))
            rows.append(
                {
                    "name": name,
                    "dist": dist,
                    "version": version,
                    "components": [f"{c.role}:{c.name}" for c in comps if c.plugin == name],
                    "error": self.failed.get(name),
                }
            )
        return rows


class _Register:
    """The `register` callable handed to one plugin's registration hook."""

    def __init__(
        self,
        role: str,
        plugin: str,
        found: dict[str, ComponentInfo],
        taken: dict[str, ComponentInfo],
    ):
        self.role, self.plugin, self.found, self.taken = role, plugin, found, taken

    def __call__(
        self,
        name: str,
        factory: Callable[..., Any] | str,
        *,
        summary: str = "",
        paper: str = "",
        tags: Iterable[str] = (),
    ) -> None:
        if not isinstance(name, str) or not name:
            raise TypeError(f"plugin {self.plugin!r}: component name must be a non-empty str")
        if not (callable(factory) or (isinstance(factory, str) and ":" in factory)):
            raise TypeError(
                f"plugin {self.plugin!r}: factory for {name!r} must be callable or 'module:attr'"
            )
        owner = self.taken.get(name) or self.found.get(name)
        if owner is not None:
            raise DuplicateComponentError(
                f"{self.role} {name!r} registered twice: by plugin {owner.plugin!r} "
                f"and by plugin {self.plugin!r}"
            )
        self.found[name] = ComponentInfo(
            self.role, name, factory, self.plugin, summary, paper, tuple(tags)
        )


def _check_role(role: str) -> str:
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r}; roles are {ROLES}")
    return role


def _load_file(file: Path) -> object:
    spec = importlib.util.spec_from_file_location(f"paperplug_local_{file.stem}", file)
    if spec is None or spec.loader is None:
        raise PluginError(f"cannot import {file}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # so "module:attr" factories in the file resolve
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[spec.name]
        raise
    return module


def _one_off_plugin(
    role: str, name: str, factory: Callable[..., Any] | str, meta: dict[str, Any]
) -> object:
    """A plugin object registering a single component (`register_component`)."""

    @hookspecs.hookimpl(specname=HOOKS[role])
    def register_one(register):
        register(name, factory, **meta)

    return SimpleNamespace(register_one=register_one, one_off=True)


_default: PluginManager | None = None
_default_lock = threading.Lock()


def get_manager() -> PluginManager:
    """The process-wide manager, created (and entry points loaded) on first use."""
    global _default
    with _default_lock:
        if _default is None:
            _default = PluginManager()
        return _default


def set_manager(manager: PluginManager | None) -> PluginManager | None:
    """Swap the process-wide manager (tests); returns the previous one."""
    global _default
    previous, _default = _default, manager
    return previous
