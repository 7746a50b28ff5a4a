"""The five registration hooks: a plugin receives `register` and registers named factories.

`register(name, factory, *, summary, paper, tags=())` where `factory` is a callable or a
lazy "module:attr" path, so listing plugins never imports a heavy module. Hook arguments
are only ever added, never renamed or removed.
"""

from __future__ import annotations

import pluggy

hookspec = pluggy.HookspecMarker("paperplug")
hookimpl = pluggy.HookimplMarker("paperplug")


@hookspec
def register_trainers(register):
    """Register Trainer factories (`fit(data)`, then predict/sample/score)."""


@hookspec
def register_explainers(register):
    """Register Explainer factories (`explain(model, inputs, *, target=None)`)."""


@hookspec
def register_defenses(register):
    """Register Defense factories (`stage`, `check(payload, context) -> Verdict`)."""


@hookspec
def register_attacks(register):
    """Register Attack factories (`run(target, inputs, *, budget=None) -> AttackResult`)."""


@hookspec
def register_solvers(register):
    """Register Solver factories (`solve(problem, *, seed=None) -> Solution`)."""
