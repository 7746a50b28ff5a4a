"""The bad-input battery on every package's public API: each callable that takes a parameter
(`__all__`, and the names a pip extra exports) is swept with a valid call
(`tests/public_api/<slug>.py`: `sweeps()`), or listed in its `REASONS` with why it has nothing
a user passes to check (a result type, a Protocol, an exception)."""

from __future__ import annotations

import contextlib
import importlib
from pathlib import Path

import pytest

from paperplug.manifest import load_manifest
from paperplug.testing import unswept

# rich draws from `random` when first imported (scikit-learn's progress bars import it): it is
# imported here, not inside the first valid call that does, which would be blamed for the draw
with contextlib.suppress(ModuleNotFoundError):
    import rich.style  # noqa: F401

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = load_manifest(ROOT / "plugins.toml")
SPECS = {p.stem for p in (ROOT / "tests" / "public_api").glob("*.py") if p.stem != "__init__"}


def _spec(slug: str):
    return importlib.import_module(f"public_api.{slug}")


@pytest.mark.parametrize("slug", sorted(MANIFEST))
def test_every_public_callable_is_swept_or_listed(slug):
    module = importlib.import_module(MANIFEST[slug]["import"])
    assert slug in SPECS, f"{slug}: add tests/public_api/{slug}.py (its sweeps and REASONS)"
    spec = _spec(slug)
    missing = unswept(module, spec.sweeps(), spec.REASONS)
    assert not missing, f"{slug}: sweep or give a reason for " + ", ".join(missing)


@pytest.mark.parametrize("slug", sorted(SPECS))
def test_public_callables_reject_bad_input(slug):
    failures = []
    for name, sweep in _spec(slug).sweeps().items():
        try:
            sweep.run()
        except AssertionError as exc:
            failures.append(f"{name}: {exc}")
    assert not failures, "\n\n".join(failures)
