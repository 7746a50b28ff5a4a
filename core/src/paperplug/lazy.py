"""Lazy public APIs: a package's `__init__` names its API without importing torch & co.

The entry point `paperplug_<slug>.plugin` imports the package first, so an `__init__` that
imported its modules eagerly would make `paperplug list` import every heavy dependency.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any


def lazy_exports(
    package: str, exports: Mapping[str, str], *, optional: Iterable[str] = ()
) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """`__getattr__, __dir__, __all__` for `package`, importing each name from its
    submodule (relative, e.g. ".classifier") on first access (PEP 562). Names in `optional`
    live in modules that need a pip extra: importable by name, left out of `__all__` so that
    `from package import *` works on the base install."""
    left_out = set(optional)
    unknown = left_out - set(exports)
    if unknown:
        raise ValueError(f"optional names not in exports: {sorted(unknown)}")

    def __getattr__(name: str) -> Any:
        if name not in exports:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(exports[name], package), name)

    def __dir__() -> list[str]:
        return sorted(exports)

    return __getattr__, __dir__, sorted(set(exports) - left_out)
