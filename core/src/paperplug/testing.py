"""pytest plugin for plugin authors (load with `-p paperplug.testing`).

Fixtures give a fresh plugin manager per test; one contract class per role checks what
every implementation owes: it is registered with a summary and paper, builds through
`paperplug.load`, returns the role's result type, is reproducible under a seed, leaves the
caller's data and the global random state (random, numpy, torch) untouched. A package
subclasses the contract and provides its case. `ChatModelContract` does the same for a
chat-model backend; `ReadmeContract` runs a package README's code as written.
"""

from __future__ import annotations

import contextlib
import copy
import json
import math
import os
import random
import re
import subprocess
import sys
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

import pytest

from paperplug.compose import compose
from paperplug.manager import PluginManager, set_manager
from paperplug.roles import (
    STAGES,
    AttackResult,
    Explanation,
    Solution,
    Verdict,
    missing_members,
    stream_chat,
)


@pytest.fixture
def paperplug_pm() -> Iterator[PluginManager]:
    """An empty manager (no entry points) installed as the process-wide one for the test."""
    manager = PluginManager(entry_points=False)
    previous = set_manager(manager)
    try:
        yield manager
    finally:
        set_manager(previous)


@pytest.fixture
def installed_pm(monkeypatch: pytest.MonkeyPatch) -> Iterator[PluginManager]:
    """A fresh manager over the installed entry points, strict so a broken plugin fails."""
    monkeypatch.setenv("PAPERPLUG_STRICT_PLUGINS", "1")
    manager = PluginManager()
    previous = set_manager(manager)
    try:
        yield manager
    finally:
        set_manager(previous)


def same(a: Any, b: Any) -> bool:
    """Deep equality for user data: tensors, arrays (NaN equal to NaN), modules, networkx
    graphs (nodes, edges and their attributes), containers."""
    if type(a) is not type(b):
        return False
    if hasattr(a, "state_dict") and callable(a.state_dict):  # torch module
        return same(dict(a.state_dict()), dict(b.state_dict()))
    if hasattr(a, "detach") and hasattr(a, "shape"):  # torch tensor
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        equal = a == b
        return bool(
            (equal | (a.isnan() & b.isnan())).all() if a.is_floating_point() else equal.all()
        )
    if hasattr(a, "adj") and hasattr(a, "nodes") and hasattr(a, "graph"):  # networkx graph
        return (
            same(dict(a.nodes(data=True)), dict(b.nodes(data=True)))
            and same(
                {(u, v): d for u, v, d in a.edges(data=True)},
                {(u, v): d for u, v, d in b.edges(data=True)},
            )
            and same(a.graph, b.graph)
        )
    if hasattr(a, "__array__") and hasattr(a, "shape"):  # numpy array
        import numpy as np

        return a.shape == b.shape and bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
    if isinstance(a, Mapping):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    try:
        return bool(a == b)
    except Exception:
        return a is b


def assert_unchanged(before: Any, after: Any, what: str = "input") -> None:
    assert same(before, after), f"the {what} passed in was mutated"


def readme_python_blocks(path: str | os.PathLike[str]) -> list[str]:
    """The ```python blocks of a README, for a test that runs them as written."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.M | re.S)


class ReadmeContract:
    """The README's code runs as written: its ```python blocks in order, in one namespace (a
    later block may use an earlier block's names, as a reader would), in a scratch folder (a
    block may save a file). Subclass with `readme = Path(__file__).parents[1] / "README.md"`;
    `blocks` pins how many there are, so a block that stops matching the fence fails."""

    readme: ClassVar[str | os.PathLike[str]]
    blocks: ClassVar[int | None] = None

    def run_readme(self) -> dict[str, Any]:
        """Run every block; return the namespace they shared."""
        blocks = readme_python_blocks(self.readme)
        assert blocks, f"{self.readme} has no ```python block to run"
        if self.blocks is not None:
            assert len(blocks) == self.blocks, (
                f"{len(blocks)} python blocks, expected {self.blocks}"
            )
        namespace: dict[str, Any] = {"__name__": "__readme__"}
        for i, block in enumerate(blocks):
            exec(compile(block, f"{self.readme} block {i + 1}", "exec"), namespace)
        return namespace

    def test_readme_runs_as_written(self, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.chdir(tmp_path)
        self.run_readme()


def global_rng_state() -> dict[str, Any]:
    """The global random states a method must not touch: random's, numpy's and torch's (for
    the libraries already imported)."""
    state: dict[str, Any] = {"random": random.getstate()}
    if "numpy" in sys.modules:
        state["numpy"] = sys.modules["numpy"].random.get_state(legacy=False)
    if "torch" in sys.modules:
        state["torch"] = sys.modules["torch"].random.get_rng_state()
    return state


@contextlib.contextmanager
def global_rng_untouched(what: str = "the method") -> Iterator[None]:
    """Fail if the body draws from or reseeds a global random generator.

    A library imported for the first time inside the body may draw from `random` at import
    (seen: sklearn.mixture importing rich); import such modules at module level."""
    before = global_rng_state()
    yield
    after = global_rng_state()
    changed = [k for k in before if not same(before[k], after.get(k))]
    assert not changed, (
        f"{what} changed the caller's global random state ({', '.join(changed)}): pass a "
        "generator / random_state down instead of seeding or drawing globally"
    )


class _Contract:
    role: ClassVar[str]
    component: ClassVar[str]
    params: ClassVar[dict[str, Any]] = {}

    @pytest.fixture
    def instance(self, installed_pm: PluginManager) -> Any:
        return installed_pm.load(self.role, self.component, **self.params)

    def test_satisfies_the_role(self, instance: Any) -> None:
        assert missing_members(self.role, instance) == []

    def test_registered_with_metadata(self, installed_pm: PluginManager) -> None:
        comp = installed_pm.get(self.role, self.component)
        assert comp.summary, "register(..., summary=...) is empty"
        assert comp.paper, "register(..., paper=...) is empty"

    def test_plugin_module_imports_no_heavy_module(self, installed_pm: PluginManager) -> None:
        comp = installed_pm.get(self.role, self.component)
        module = installed_pm.pm.get_plugin(comp.plugin).__name__
        code = (
            f"import sys, {module}; "
            "print(sorted(m for m in ('torch', 'transformers', 'numpy', 'sklearn') if m in sys.modules))"
        )
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        )
        assert out.stdout.strip() == "[]", f"{module} imports heavy modules: {out.stdout}"

    @staticmethod
    def assert_jsonable(result: Any) -> None:
        json.dumps(result.to_dict())


class ExplainerContract(_Contract):
    """Provide `explain_case` -> (model, inputs, kwargs)."""

    role = "explainer"

    def test_explanation(self, instance: Any, explain_case: tuple[Any, Any, dict]) -> None:
        model, inputs, kw = explain_case
        before = copy.deepcopy(inputs)
        with global_rng_untouched("explain"):
            result = instance.explain(model, inputs, **kw)
        assert isinstance(result, Explanation)
        assert_unchanged(before, inputs)
        if result.kind == "feature" and hasattr(inputs, "shape"):
            assert tuple(result.values.shape) == tuple(inputs.shape)
        self.assert_jsonable(result)

    def test_reproducible(self, instance: Any, explain_case: tuple[Any, Any, dict]) -> None:
        model, inputs, kw = explain_case
        first = instance.explain(model, inputs, **kw).values
        assert same(first, instance.explain(model, inputs, **kw).values)


class DefenseContract(_Contract):
    """Provide `defense_case` -> (payload, context); `fit_data` when the defense learns."""

    role = "defense"

    def test_verdict(self, instance: Any, defense_case: tuple[Any, Any]) -> None:
        payload, context = defense_case
        assert instance.stage in STAGES
        # a decode-stage payload is a chat model: it must come back untouched as an object, not
        # be copied (models hold locks, caches and open clients): its attributes are compared
        # by identity
        decode = instance.stage == "decode"
        if decode:
            state = dict(vars(payload)) if hasattr(payload, "__dict__") else {}
        else:
            before = copy.deepcopy(payload)
        with global_rng_untouched("check"):
            verdict = instance.check(payload, context)
        assert isinstance(verdict, Verdict) and 0.0 <= verdict.risk <= 1.0
        if decode:
            assert verdict.payload is not None, "a decode-stage defense returns the model to use"
            assert all(vars(payload).get(k) is v for k, v in state.items()), "the model was changed"
        else:
            assert_unchanged(before, payload)
        self.assert_jsonable(verdict)

    def test_composes(self, instance: Any, defense_case: tuple[Any, Any]) -> None:
        payload, context = defense_case
        alone = instance.check(payload, context)
        guarded = compose(instance).check(payload, stage=instance.stage, context=context)
        assert guarded.valid == alone.valid and guarded.risk == pytest.approx(alone.risk)


class AttackContract(_Contract):
    """Provide `attack_case` -> (target, inputs, budget)."""

    role = "attack"

    def test_attack_result(self, instance: Any, attack_case: tuple[Any, Any, int | None]) -> None:
        target, inputs, budget = attack_case
        before = copy.deepcopy(inputs)
        with global_rng_untouched("run"):
            result = instance.run(target, inputs, budget=budget)
        assert isinstance(result, AttackResult)
        assert_unchanged(before, inputs)
        if budget is not None:
            assert result.queries <= budget, f"{result.queries} queries over a budget of {budget}"
        assert 0.0 <= result.success_rate <= 1.0
        self.assert_jsonable(result)
        assess = getattr(instance, "assess", None)
        if assess is not None:  # evaluate() re-scores what a guard passed on with it
            assert callable(assess), "assess must be callable as assess(target, payload)"
            rescored = assess(target, result.adversarial)
            if isinstance(result.success, bool):
                assert isinstance(rescored, bool)
            else:
                assert len(list(rescored)) == len(list(result.success))


class SolverContract(_Contract):
    """Provide `solve_case` -> (problem, kwargs)."""

    role = "solver"

    def test_solution(self, instance: Any, solve_case: tuple[Any, dict]) -> None:
        problem, kw = solve_case
        before = copy.deepcopy(problem)
        with global_rng_untouched("solve"):
            solution = instance.solve(problem, seed=0, **kw)
        assert isinstance(solution, Solution)
        assert_unchanged(before, problem)
        self.assert_jsonable(solution)

    def test_seeded(self, instance: Any, solve_case: tuple[Any, dict]) -> None:
        problem, kw = solve_case
        a, b = instance.solve(problem, seed=3, **kw), instance.solve(problem, seed=3, **kw)
        assert same(a.value, b.value) and same(a.objective, b.objective)


class TrainerContract(_Contract):
    """Provide `fit_case` -> (data, kwargs): `fit(*data, **kwargs)` with data a tuple."""

    role = "trainer"

    def test_fit(self, instance: Any, fit_case: tuple[tuple, dict]) -> None:
        data, kw = fit_case
        before = copy.deepcopy(data)
        with global_rng_untouched("fit"):
            fitted = instance.fit(*data, **kw)
        assert fitted is instance, "fit returns self"
        assert_unchanged(before, data)
        history = getattr(instance, "history_", None)
        assert history is not None and len(history) > 0, "fit records history_"


class ChatModelContract:
    """Provide `chat_model` (an instance) and `messages`: a backend of the core's ChatModel
    protocol answers with text, streams the same text, and leaves the messages untouched."""

    def test_chat_returns_text(self, chat_model: Any, messages: list[dict]) -> None:
        before = copy.deepcopy(messages)
        with global_rng_untouched("chat"):
            reply = chat_model.chat(messages)
        assert isinstance(reply, str)
        assert_unchanged(before, messages, "messages")

    def test_stream_equals_chat(self, chat_model: Any, messages: list[dict]) -> None:
        assert "".join(stream_chat(chat_model, messages)) == chat_model.chat(messages)
