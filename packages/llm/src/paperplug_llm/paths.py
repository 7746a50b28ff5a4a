"""Where a model is loaded from: a path or hub name checked before any loading, and a failed
load reported as a ValueError naming the argument."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from paperplug.checks import check_name_or_path


def check_model_source(value: Any, name: str) -> str:
    """`value` as a string if it can name a `from_pretrained` source: a hub name, or a folder
    (`paperplug.checks.check_name_or_path`: a path must exist); a file is a ValueError naming
    `name`, since `from_pretrained` reads the folder `save_pretrained` wrote."""
    text = check_name_or_path(value, name)
    if Path(text).is_file():
        raise ValueError(f"{name}={text!r} is a file: give the folder save_pretrained wrote")
    return text


@contextlib.contextmanager
def loading(name: str, value: Any) -> Iterator[None]:
    """Turn a failed `from_pretrained` (OSError: nothing there, not a model) into a ValueError
    naming the argument, the original chained."""
    try:
        yield
    except OSError as exc:
        raise ValueError(f"{name}={os.fspath(value)!r} holds no model to load: {exc}") from exc
