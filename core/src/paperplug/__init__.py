"""paperplug: NeurIPS 2025 methods as plugins of five roles (Trainer, Explainer, Defense,
Attack, Solver). `paperplug.load(role, name, **params)` builds any installed component."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from paperplug.compose import Evaluation, FilterResult, Guard, GuardVerdict, compose, evaluate
from paperplug.hookspecs import hookimpl
from paperplug.lazy import lazy_exports
from paperplug.manager import (
    Component,
    DuplicateComponentError,
    PluginError,
    PluginManager,
    get_manager,
    one_off_plugin,
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

__version__ = "0.1.0"


def load(role: str, name: str, **params: Any) -> Any:
    """Build an instance of the registered component `name` of `role`."""
    return get_manager().load(role, name, **params)


def components(role: str | None = None) -> list[Component]:
    """The registered components (of one role, or all)."""
    return get_manager().components(role)


def register_plugin(plugin: object, name: str | None = None) -> str:
    """Register a plugin object (a module or object with @hookimpl functions) at run time."""
    return get_manager().register_plugin(plugin, name)


def unregister_plugin(name: str) -> None:
    """Remove a plugin by the name it was registered under."""
    get_manager().unregister_plugin(name)


def component(
    role: str,
    name: str | None = None,
    *,
    summary: str = "",
    paper: str = "",
    tags: tuple[str, ...] = (),
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator registering one factory (a class or function) as a component of `role`."""

    def decorate(factory: Callable[..., Any]) -> Callable[..., Any]:
        comp_name = name or factory.__name__
        plugin = one_off_plugin(role, comp_name, factory, summary=summary, paper=paper, tags=tags)
        register_plugin(plugin, name=f"{role}:{comp_name}")
        return factory

    return decorate


__all__ = [
    "ROLES",
    "STAGES",
    "Attack",
    "AttackResult",
    "ChatModel",
    "Component",
    "Defense",
    "DuplicateComponentError",
    "Evaluation",
    "Explainer",
    "Explanation",
    "FilterResult",
    "Guard",
    "GuardVerdict",
    "History",
    "PluginError",
    "PluginManager",
    "Solution",
    "Solver",
    "Trainer",
    "Verdict",
    "component",
    "components",
    "compose",
    "evaluate",
    "get_manager",
    "hookimpl",
    "lazy_exports",
    "load",
    "register_plugin",
    "stream_chat",
    "to_jsonable",
    "unregister_plugin",
]
