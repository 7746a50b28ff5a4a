"""Optional dependencies: a package's demo, an optional backend or input type lives in a pip
extra, and using it without the extra says which extra to install."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


class MissingExtraError(ModuleNotFoundError):
    """A module of an optional extra is missing; the message says what to pip install."""


@contextlib.contextmanager
def requires_extra(dist: str, extra: str, what: str = "") -> Iterator[None]:
    """Imports inside the block belong to `dist`'s `[extra]`: a missing one raises
    MissingExtraError naming the module and the install command.

        with requires_extra("paperplug-llm", "hf", "local Hugging Face models"):
            import torch
    """
    try:
        yield
    except MissingExtraError:
        raise
    except ModuleNotFoundError as exc:
        purpose = f"{what} " if what else ""
        raise MissingExtraError(
            f"{purpose}needs {exc.name!r}, which {dist}'s [{extra}] extra installs: "
            f"pip install '{dist}[{extra}]'",
            name=exc.name,
        ) from exc
