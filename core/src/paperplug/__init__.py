"""paperplug: NeurIPS 2025 methods as plugins of five roles (Trainer, Explainer, Defense,
Attack, Solver). `paperplug.load(role, name, **params)` builds any installed component."""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable
from typing import Any

from paperplug.compose import (
    Evaluation,
    FilterResult,
    Guard,
    GuardedStream,
    GuardVerdict,
    compose,
    evaluate,
)
from paperplug.hookspecs import hookimpl
from paperplug.lazy import lazy_exports
from paperplug.manager import (
    ComponentImportError,
    ComponentInfo,
    DuplicateComponentError,
    PluginError,
    PluginManager,
    get_manager,
)
from paperplug.roles import (
    ROLES,
    STAGES,
    Attack,
    AttackResult,
    ChatModel,
    Defense,
    Explainer,
    Explanation,
    History,
    Solution,
    Solver,
    Trainer,
    Verdict,
    stream_chat,
    to_jsonable,
)
from paperplug.seeding import seeded_torch

__version__ = importlib.metadata.version("paperplug")


def load(role: str, name: str, **params: Any) -> Any:
    """Build an instance of the registered component `name` of `role`."""
    return get_manager().load(role, name, **params)


def list_components(role: str | None = None) -> list[ComponentInfo]:
    """The registered components (of one role, or all), without importing any of them."""
    return get_manager().list_components(role)


def register_plugin(plugin: object, name: str | None = None) -> str:
    """Register a plugin object (a module or object with @hookimpl functions) at run time."""
    return get_manager().register_plugin(plugin, name)


def unregister_plugin(name: str) -> None:
    """Remove a plugin by the name it was registered under."""
    get_manager().unregister_plugin(name)


def register_component(
    role: str,
    name: str | None = None,
    *,
    summary: str = "",
    paper: str = "",
    tags: tuple[str, ...] = (),
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator registering one factory (a class or function) as a component of `role`.

    Its plugin is named "role:name". Running the decorated definition again (a notebook cell)
    replaces the earlier definition; a name another plugin registered is an error."""

    def decorate(factory: Callable[..., Any]) -> Callable[..., Any]:
        meta = {"summary": summary, "paper": paper, "tags": tags}
        get_manager().register_component(role, name or factory.__name__, factory, **meta)
        return factory

    return decorate


__all__ = [
    "ROLES",
    "STAGES",
    "Attack",
    "AttackResult",
    "ChatModel",
    "ComponentImportError",
    "ComponentInfo",
    "Defense",
    "DuplicateComponentError",
    "Evaluation",
    "Explainer",
    "Explanation",
    "FilterResult",
    "Guard",
    "GuardVerdict",
    "GuardedStream",
    "History",
    "PluginError",
    "PluginManager",
    "Solution",
    "Solver",
    "Trainer",
    "Verdict",
    "compose",
    "evaluate",
    "get_manager",
    "hookimpl",
    "lazy_exports",
    "list_components",
    "load",
    "register_component",
    "register_plugin",
    "seeded_torch",
    "stream_chat",
    "to_jsonable",
    "unregister_plugin",
]
