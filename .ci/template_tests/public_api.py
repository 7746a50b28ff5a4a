"""__slug__'s public API: one valid call of each public callable, for the battery
(tests/test_public_api.py); a callable with nothing a user passes to check is in REASONS."""

from __future__ import annotations

import paperplug___slug__ as m  # noqa: F401 (the sweeps call its functions)

from paperplug.testing import Sweep

# TODO: a result type, a Protocol or an exception, each with why it is not swept
REASONS: dict[str, str] = {}


def sweeps() -> dict[str, Sweep]:
    """TODO: one small valid call per public callable, with the bad values the battery cannot
    derive, e.g. {"fit_thing": Sweep(m.fit_thing, (X,), bad_params={"k": [0]})}."""
    return {}
