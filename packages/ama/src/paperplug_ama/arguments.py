"""Argument checks shared by the measures and the loop: a tool, a task pool, a victim, a
random generator and a list of texts, each error naming the argument as the caller wrote it."""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from typing import Any

from paperplug.checks import check_sequence, check_type
from paperplug_ama.scenarios import Task


def check_tool(tool: Any, name: str = "tool") -> Mapping[str, Any]:
    """`tool` if it is a mapping with a string name and description (not copied)."""
    check_type(tool, name, Mapping, what="a tool mapping with name and description")
    for key in ("name", "description"):
        if not isinstance(tool.get(key), str):
            raise ValueError(f"{name} needs a string {key!r}, got {tool.get(key)!r}")
    return tool


def check_catalog(catalog: Any, name: str = "catalog") -> list[Mapping[str, Any]]:
    """A list of tools (a slate, a benign catalog)."""
    tools = check_sequence(catalog, name, Mapping, min_len=0, what="tool mappings")
    return [check_tool(t, f"{name}[{i}]") for i, t in enumerate(tools)]


def check_task(task: Any, name: str = "task") -> Task:
    return check_type(task, name, Task, what="a Task(query, gold)")


def check_pool(pool: Any, name: str = "pool") -> list[tuple[Task, list[Mapping[str, Any]]]]:
    """A non-empty task pool: (task, its benign catalog) pairs, as `task_pool` makes."""
    pairs = check_sequence(pool, name, (tuple, list), what="(task, catalog) pairs")
    out = []
    for i, pair in enumerate(pairs):
        if len(pair) != 2:
            raise ValueError(f"{name}[{i}] must be a (task, catalog) pair, got {len(pair)} items")
        out.append(
            (check_task(pair[0], f"{name}[{i}][0]"), check_catalog(pair[1], f"{name}[{i}][1]"))
        )
    return out


def check_victim(victim: Any, name: str = "victim") -> Any:
    """`victim` if it has `select(query, tools)` (a ToolSelector)."""
    if not callable(getattr(victim, "select", None)):
        raise TypeError(
            f"{name} must be a tool selector with select(query, tools), got {type(victim).__name__}"
        )
    return victim


def check_rng(rng: Any, name: str = "rng") -> random.Random:
    return check_type(rng, name, random.Random, what="a random.Random")


def check_texts(texts: Any, name: str) -> list[str]:
    """A list of strings (queries, names) from any iterable but a bare string."""
    if isinstance(texts, (str, bytes)) or not isinstance(texts, Iterable):
        raise TypeError(f"{name} must be a list of strings, got {type(texts).__name__}")
    return check_sequence(list(texts), name, str, min_len=0, what="strings")
