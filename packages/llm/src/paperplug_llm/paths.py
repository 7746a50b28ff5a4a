"""Where a model is loaded from: a path or hub name checked before any loading, and a failed
load reported as a ValueError naming the argument."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from paperplug.checks import check_type


def check_model_source(value: Any, name: str) -> str:
    """`value` as a string if it can name a `from_pretrained` source: a folder, or a hub name
    (relative, not a path on disk); an empty string, a file, or an absolute path that does not
    exist is a ValueError naming `name`."""
    check_type(value, name, (str, os.PathLike), what="a folder or a hub name (a str or a path)")
    text = os.fspath(value)
    path = Path(text).expanduser()
    if not text:
        raise ValueError(f"{name} is empty: give a folder or a hub name")
    if path.is_file():
        raise ValueError(f"{name}={text!r} is a file: give the folder save_pretrained wrote")
    if path.is_absolute() and not path.exists():
        raise ValueError(f"{name}={text!r}: no such folder")
    return text


@contextlib.contextmanager
def loading(name: str, value: Any) -> Iterator[None]:
    """Turn a failed `from_pretrained` (OSError: nothing there, not a model) into a ValueError
    naming the argument, the original chained."""
    try:
        yield
    except OSError as exc:
        raise ValueError(f"{name}={os.fspath(value)!r} holds no model to load: {exc}") from exc
