"""pytest plugin for plugin authors (load with `-p paperplug.testing`).

Fixtures give a fresh plugin manager per test; one contract class per role checks what
every implementation owes: it is registered with a summary and paper, builds through
`paperplug.load`, returns the role's result type, is reproducible under a seed, leaves the
caller's data and the global random state (random, numpy, torch) untouched. A package
subclasses the contract and provides its case. Every contract also runs the bad-input battery
(`paperplug.battery`) on that case. `ChatModelContract` does the same for a chat-model backend;
`ReadmeContract` runs a package README's code as written and checks what it prints.

With PAPERPLUG_NO_SKIP=1 (`make test`), a test skipped for any reason but hardware (a GPU)
fails: a cross-check whose peer library is missing must not pass silently.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import importlib
import importlib.util
import inspect
import io
import json
import math
import os
import random
import re
import subprocess
import sys
import types
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, ClassVar

import pytest

from paperplug import checks
from paperplug.battery import (
    Opaque,
    Variant,
    changed_arguments,
    derived_bad_values,
    input_variants,
    named_arguments,
    param_key,
    param_variants,
    parameters,
    run_battery,
    snapshot_arguments,
    uncovered,
)
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

HARDWARE_SKIP = re.compile(r"\b(CUDA|GPU|MPS|accelerator)\b", re.I)


def _forbidden_skip(report: Any) -> str | None:
    """The reason of a skip that PAPERPLUG_NO_SKIP=1 turns into a failure (any but hardware)."""
    if os.environ.get("PAPERPLUG_NO_SKIP") != "1" or not report.skipped:
        return None
    if getattr(report, "wasxfail", None) is not None:
        return None
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    return None if HARDWARE_SKIP.search(reason) else reason


def _fail_forbidden_skip(report: Any, what: str) -> None:
    if (reason := _forbidden_skip(report)) is not None:
        report.outcome = "failed"
        report.longrepr = f"{what} for a reason other than hardware (PAPERPLUG_NO_SKIP=1): {reason}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: Any, call: Any) -> Iterator[None]:
    outcome = yield
    _fail_forbidden_skip(outcome.get_result(), "skipped")


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: Any) -> Iterator[None]:
    outcome = yield
    _fail_forbidden_skip(outcome.get_result(), "module skipped")


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
    """A fresh manager over the installed entry points, strict so a broken plugin fails. The
    components registered at run time with `register_component` (a plugin author's test
    module registering its own) come along."""
    monkeypatch.setenv("PAPERPLUG_STRICT_PLUGINS", "1")
    manager = PluginManager()
    previous = set_manager(manager)
    if previous is not None:
        for name, plugin in previous.pm.list_name_plugin():
            if getattr(plugin, "one_off", False):
                manager.register_plugin(plugin, name)
    try:
        yield manager
    finally:
        set_manager(previous)


def same(a: Any, b: Any, _seen: set[tuple[int, int]] | None = None) -> bool:
    """Deep equality for user data: tensors, arrays (NaN equal to NaN), scipy sparse
    matrices, pandas frames, random generators (by state), modules, networkx graphs (nodes,
    edges and their attributes), containers, and objects that define no equality of their own
    (a tokenizer, a victim model's wrapper), compared by their attributes (a deep copy of one
    is then the same)."""
    seen = set() if _seen is None else _seen
    if type(a) is not type(b):
        return False
    if (id(a), id(b)) in seen:  # a cycle: already being compared
        return True
    seen.add((id(a), id(b)))
    if hasattr(a, "get_state") and hasattr(a, "manual_seed"):  # a torch Generator: its state
        return same(a.get_state(), b.get_state(), seen)
    if hasattr(a, "bit_generator") and hasattr(a, "spawn"):  # a numpy Generator: its state
        return same(a.bit_generator.state, b.bit_generator.state, seen)
    if hasattr(a, "state_dict") and callable(a.state_dict):  # torch module
        return same(dict(a.state_dict()), dict(b.state_dict()), seen)
    if hasattr(a, "detach") and hasattr(a, "shape"):  # torch tensor
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        equal = a == b
        return bool(
            (equal | (a.isnan() & b.isnan())).all() if a.is_floating_point() else equal.all()
        )
    if hasattr(a, "adj") and hasattr(a, "nodes") and hasattr(a, "graph"):  # networkx graph
        return (
            same(dict(a.nodes(data=True)), dict(b.nodes(data=True)), seen)
            and same(
                {(u, v): d for u, v, d in a.edges(data=True)},
                {(u, v): d for u, v, d in b.edges(data=True)},
                seen,
            )
            and same(a.graph, b.graph, seen)
        )
    if type(a).__module__.startswith("scipy.sparse") and hasattr(a, "nnz"):  # scipy sparse
        return same(a.toarray(), b.toarray(), seen)
    if hasattr(a, "equals") and hasattr(a, "shape") and hasattr(a, "index"):  # pandas
        return bool(a.equals(b))
    if hasattr(a, "__array__") and hasattr(a, "shape"):  # numpy array
        import numpy as np

        return a.shape == b.shape and bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
    if isinstance(a, Mapping):
        return a.keys() == b.keys() and all(same(a[k], b[k], seen) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y, seen) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    if dataclasses.is_dataclass(a):  # its generated __eq__ compares a model field by identity
        return same(
            [getattr(a, f.name) for f in dataclasses.fields(a)],
            [getattr(b, f.name) for f in dataclasses.fields(b)],
            seen,
        )
    if type(a).__eq__ is object.__eq__ and hasattr(a, "__dict__"):
        return a is b or same(vars(a), vars(b), seen)
    try:
        return bool(a == b)
    except Exception:
        return a is b


def assert_unchanged(before: Any, after: Any, what: str = "input") -> None:
    assert same(before, after), f"the {what} passed in was mutated"


def readme_python_blocks(path: str | os.PathLike[str]) -> list[str]:
    """The ```python blocks of a README, for a test that runs them as written."""
    return [code for code, _ in readme_examples(path)]


def readme_examples(path: str | os.PathLike[str]) -> list[tuple[str, str | None]]:
    """(code, shown output) for each ```python block of a README; the output is the ```text
    (or bare ```) block that follows it with nothing but blank lines between, else None."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    pattern = r"^```python\n(.*?)^```[ \t]*\n(?:[ \t]*\n)*(?:^```(?:text)?\n(.*?)^```)?"
    return [
        (code, out if out else None) for code, out in re.findall(pattern, text, flags=re.M | re.S)
    ]


NUMBER = r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?"


def output_mismatch(expected: str, actual: str, *, rtol: float = 0.0) -> str | None:
    """None when `actual` printed output matches `expected` as doctest would (trailing spaces
    ignored, `...` matches anything), numbers equal within `rtol`; else what differs."""
    tidy = [line.rstrip() for line in expected.strip("\n").splitlines()]
    got = "\n".join(line.rstrip() for line in actual.strip("\n").splitlines())
    parts = re.split(rf"(\.\.\.|{NUMBER})", "\n".join(tidy))
    regex = "".join(
        "(?:.*?)"
        if part == "..."
        else f"({NUMBER})"
        if re.fullmatch(NUMBER, part)
        else re.escape(part)
        for part in parts
    )
    match = re.fullmatch(regex, got, flags=re.S)
    if match is None:
        return f"printed\n{got}\n\nbut the README shows\n" + "\n".join(tidy)
    wanted = [p for p in parts if re.fullmatch(NUMBER, p)]
    for want, have in zip(wanted, match.groups(), strict=True):
        if not math.isclose(float(want), float(have), rel_tol=rtol, abs_tol=0.0):
            return f"printed {have} where the README shows {want}:\n{got}"
    return None


class ReadmeContract:
    """The README's code runs as written and prints what the README shows: its ```python
    blocks in order, in one namespace (a later block may use an earlier block's names, as a
    reader would), in a scratch folder (a block may save a file); a ```text block right after
    a python block is its expected output, compared as doctest does (`...` matches anything;
    numbers within `rtol`). Subclass with `readme = Path(__file__).parents[1] / "README.md"`;
    `blocks` pins how many python blocks there are and `outputs` how many show output, so a
    block that stops matching the fence fails.

    The blocks run from `README_RNG_SEED` in every global generator (`global_rngs_seeded`),
    not from whatever state earlier tests left: the result no longer depends on test order,
    and a printed figure that rests on an unseeded draw fails on every machine (a fresh
    process starts elsewhere), not only on one that orders its tests differently."""

    readme: ClassVar[str | os.PathLike[str]]
    blocks: ClassVar[int | None] = None
    outputs: ClassVar[int | None] = None
    rtol: ClassVar[float] = 0.0

    def run_readme(self) -> dict[str, Any]:
        """Run every block, compare printed output where the README shows it; return the
        namespace they shared."""
        examples = readme_examples(self.readme)
        assert examples, f"{self.readme} has no ```python block to run"
        if self.blocks is not None:
            assert len(examples) == self.blocks, (
                f"{len(examples)} python blocks, expected {self.blocks}"
            )
        shown = sum(out is not None for _, out in examples)
        if self.outputs is not None:
            assert shown == self.outputs, f"{shown} blocks show output, expected {self.outputs}"
        namespace: dict[str, Any] = {"__name__": "__readme__"}
        with global_rngs_seeded(README_RNG_SEED):
            for i, (block, expected) in enumerate(examples):
                printed = io.StringIO()
                with contextlib.redirect_stdout(printed):
                    exec(compile(block, f"{self.readme} block {i + 1}", "exec"), namespace)
                if expected is not None:
                    problem = output_mismatch(expected, printed.getvalue(), rtol=self.rtol)
                    assert problem is None, f"{self.readme} block {i + 1}: {problem}"
        return namespace

    def test_readme_runs_as_written(self, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.chdir(tmp_path)
        self.run_readme()


README_RNG_SEED = 20251202  # no fresh process starts here (torch's default seed is 67280421310721)


@contextlib.contextmanager
def global_rngs_seeded(seed: int) -> Iterator[None]:
    """Run the body with random's, numpy's and torch's global generators (those installed)
    seeded by `seed`, then give every one its earlier state back."""
    for name in ("numpy", "torch"):
        if name not in sys.modules and importlib.util.find_spec(name) is not None:
            importlib.import_module(name)
    before = global_rng_state()
    random.seed(seed)
    if "numpy" in sys.modules:
        sys.modules["numpy"].random.seed(seed)
    if "torch" in sys.modules:
        sys.modules["torch"].manual_seed(seed)
    try:
        yield
    finally:
        random.setstate(before["random"])
        if "numpy" in before:
            sys.modules["numpy"].random.set_state(before["numpy"])
        if "torch" in before:
            sys.modules["torch"].random.set_rng_state(before["torch"])


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
def global_rng_untouched(what: str = "the method", ignore: Iterable[str] = ()) -> Iterator[None]:
    """Fail if the body draws from or reseeds a global random generator (but those named in
    `ignore`: "random", "numpy", "torch").

    A library imported for the first time inside the body may draw from `random` at import
    (seen: sklearn.mixture and sklearn.datasets importing rich); import such modules at module
    level."""
    before = global_rng_state()
    yield
    after = global_rng_state()
    changed = [k for k in before if k not in ignore and not same(before[k], after.get(k))]
    assert not changed, (
        f"{what} changed the caller's global random state ({', '.join(changed)}): pass a "
        "generator / random_state down instead of seeding or drawing globally"
    )


def not_fitted_errors() -> tuple[type[BaseException], ...]:
    """paperplug's NotFittedError and scikit-learn's (where installed): what a call before
    `fit` may raise."""
    errors: tuple[type[BaseException], ...] = (checks.NotFittedError,)
    if "sklearn" in sys.modules:
        errors += (sys.modules["sklearn"].exceptions.NotFittedError,)
    return errors


def _merged(listed: Mapping[str, list[Any]], derived: Mapping[str, list[Any]]) -> dict:
    """`listed` bad values with the `derived` ones added (each value once, by its key)."""
    out = {name: list(values) for name, values in listed.items()}
    for name, values in derived.items():
        keys = {param_key(name, v) for v in out.get(name, [])}
        out.setdefault(name, []).extend(v for v in values if param_key(name, v) not in keys)
    return out


def assert_rejects_bad_input(
    fn: Callable[..., Any],
    args: tuple = (),
    kwargs: Mapping[str, Any] | None = None,
    *,
    bad_params: Mapping[str, list[Any]] | None = None,
    reasons: Mapping[str, str] | None = None,
    accepts: Mapping[str, str] | None = None,
    width: bool = True,
) -> None:
    """The battery on any public callable and its valid call `fn(*args, **kwargs)`: every
    argument a wrong type, its data (nested too) NaN, inf, empty, a wrong dtype, each int
    parameter 2.5 and each real one NaN, and the `bad_params` listed (an extra trailing
    column too, unless not `width`: the data may have any width); each must be rejected
    with a ValueError/TypeError naming it, the caller's data untouched. Every parameter of
    `fn` that is not data or a flag needs `bad_params` or a reason in `reasons`."""
    kwargs, bad_params = dict(kwargs or {}), dict(bad_params or {})
    named = named_arguments(fn, args, kwargs)
    missing = uncovered(parameters(fn), named, bad_params, dict(reasons or {}))
    assert not missing, f"{fn!r}: no bad value or reason for " + ", ".join(missing)
    bad = _merged(bad_params, _derived(parameters(fn), named, wrong_type=named))
    variants = input_variants(fn, args, kwargs, width=width)
    call, rest = param_variants(fn, args, kwargs, bad)
    assert not rest, f"bad_params names {sorted(rest)}, which {fn!r} does not take"
    failures = run_battery(variants + call, dict(accepts or {}), same=same)
    assert not failures, f"{len(failures)} bad input(s) not rejected well:\n" + "\n".join(failures)


@dataclasses.dataclass
class Sweep:
    """One valid call of a public callable (`fn(*args, **kwargs)`; for a method, bound to a
    fresh instance) and what `assert_rejects_bad_input` needs beyond it; `mutates` names the
    arguments the call changes by design (a stateful learner it updates), each with why."""

    fn: Callable[..., Any]
    args: tuple = ()
    kwargs: dict[str, Any] = dataclasses.field(default_factory=dict)
    bad_params: dict[str, list[Any]] = dataclasses.field(default_factory=dict)
    reasons: dict[str, str] = dataclasses.field(default_factory=dict)
    accepts: dict[str, str] = dataclasses.field(default_factory=dict)
    mutates: dict[str, str] = dataclasses.field(default_factory=dict)
    width: bool = True

    def run(self) -> None:
        """The valid call succeeds, leaves the caller's arguments (a random generator passed
        in is there to be drawn from) and the global random generators as they were, then the
        battery on it (an AssertionError lists what was not rejected well): a valid call that
        fails would let every variant pass. Building a torch module may draw its initial
        weights from torch's generator, as torch's own layers do (`torch.manual_seed` before
        it is how a torch user seeds a model)."""
        try:
            args, kwargs = copy.deepcopy((self.args, self.kwargs))
        except Exception:  # a model holding a lock: the call gets the originals
            args, kwargs = self.args, self.kwargs
        before = snapshot_arguments(self.fn, args, kwargs, same=same)
        stale = sorted(set(self.mutates) - set(before))
        assert not stale, f"mutates names {stale}, which the valid call does not pass"
        torch = sys.modules.get("torch")
        module = (
            isinstance(self.fn, type) and torch is not None and issubclass(self.fn, torch.nn.Module)
        )
        what = getattr(self.fn, "__qualname__", repr(self.fn))
        try:
            with global_rng_untouched(what, ignore=("torch",) if module else ()):
                self.fn(*args, **kwargs)
        except AssertionError:
            raise
        except Exception as exc:
            raise AssertionError(f"the valid call fails: {type(exc).__name__}: {exc}") from exc
        changed = [
            n
            for n in changed_arguments(before, self.fn, args, kwargs, same=same)
            if n not in self.mutates and not _is_generator(before[n])
        ]
        assert not changed, (
            f"the valid call of {what} changed the caller's {', '.join(changed)} (copy it "
            "first; or, where changing it is the point, name it in mutates= with why)"
        )
        assert_rejects_bad_input(
            self.fn,
            self.args,
            self.kwargs,
            bad_params=self.bad_params,
            reasons=self.reasons,
            accepts=self.accepts,
            width=self.width,
        )


def _is_generator(value: Any) -> bool:
    """A random generator (random.Random, numpy's Generator or RandomState, torch's)."""
    return (
        isinstance(value, random.Random)
        or (hasattr(value, "bit_generator") and hasattr(value, "spawn"))
        or (hasattr(value, "get_state") and hasattr(value, "randint"))
        or (hasattr(value, "get_state") and hasattr(value, "manual_seed"))
    )


def public_callables(module: types.ModuleType) -> list[str]:
    """The names in `module.__all__`, and those a lazy module's `__dir__` adds (PEP 562: the
    names it exports only under a pip extra), that the battery can reach: callables that take
    a parameter, `*args` and `**kwargs` too (a function of no argument has nothing to vary)."""
    lazy = vars(module).get("__dir__")
    extra = sorted(set(lazy()) - set(module.__all__)) if callable(lazy) else []
    names = []
    for name in [*module.__all__, *extra]:
        obj = getattr(module, name)
        if not callable(obj):
            continue
        try:
            takes = bool(inspect.signature(obj).parameters)
        except (TypeError, ValueError):  # a builtin whose signature cannot be read
            takes = True
        if takes:
            names.append(name)
    return names


def unswept(
    module: types.ModuleType, swept: Iterable[str], reasons: Mapping[str, str]
) -> list[str]:
    """The public callables of `module` neither swept (by name, or "Name.method" for a
    class) nor listed in `reasons` with a reason; and each swept or listed name that is no
    public callable (stale), or listed with an empty reason."""
    public = set(public_callables(module))
    covered = {key.split(".")[0] for key in swept}
    missing = sorted(public - covered - set(reasons))
    missing += [f"{n} (swept and listed)" for n in sorted(covered & set(reasons))]
    missing += [f"{n} (no public callable)" for n in sorted((covered | set(reasons)) - public)]
    missing += [f"{n} (listed with no reason)" for n, why in reasons.items() if not why.strip()]
    return missing


def _derived(
    params: Mapping[str, inspect.Parameter], values: Mapping[str, Any], *, wrong_type: Any
) -> dict[str, list[Any]]:
    """Bad values read off each parameter's valid value (else its default): 2.5 for an int,
    NaN for a real, and a wrong type for those not in `wrong_type` (the battery's own
    argument sweep gives the passed ones theirs)."""
    out = {}
    for name, param in params.items():
        default = None if param.default is param.empty else param.default
        value = values.get(name, default)
        found = derived_bad_values(value) + ([] if name in wrong_type else [Opaque()])
        if found:
            out[name] = found
    return out


class _Contract:
    """What every role's contract checks. A package sets `params` (the component's valid
    parameters), `bad_params` (invalid values of its parameters, constructor's or call's, in
    one place: `{"k": [0, 2.5]}`), `reasons` (a parameter with no bad value to list, with
    why: `{"device": "any torch device string"}`) and `accepts` (battery variants it
    deliberately accepts, by key, each with why: `{"inputs:width": "a conv net takes any
    image size"}`). Every parameter of the constructor and of the main call is tried with a
    wrong type, 2.5 where an int is meant and NaN where a real number is; a range cannot be
    read off a value, so each parameter that is not data or a flag must be in `bad_params`
    or `reasons` (`test_every_parameter_has_a_bad_value`)."""

    role: ClassVar[str]
    component: ClassVar[str]
    params: ClassVar[dict[str, Any]] = {}
    bad_params: ClassVar[dict[str, list[Any]]] = {}
    reasons: ClassVar[dict[str, str]] = {}
    accepts: ClassVar[dict[str, str]] = {}
    vary_width: ClassVar[bool] = True  # inputs must fit a model: one more column is an error

    def make_instance(self, pm: PluginManager, **overrides: Any) -> Any:
        """A new instance with `params` and `overrides` (override when the component needs
        more than its parameters, e.g. a fitted checkpoint)."""
        return pm.load(self.role, self.component, **{**self.params, **overrides})

    @pytest.fixture
    def instance(self, installed_pm: PluginManager) -> Any:
        return self.make_instance(installed_pm)

    def sample_call(self, instance: Any, case: Any) -> tuple[Callable[..., Any], tuple, dict]:
        """(bound method, args, kwargs) of the role's main call on the package's case."""
        raise NotImplementedError

    def extra_variants(self, pm: PluginManager, instance: Any, case: Any) -> list[Variant]:
        """More bad calls for the battery (a Trainer adds its calls after and before `fit`)."""
        return []

    def battery(self, pm: PluginManager, instance: Any, case: Any) -> list[Variant]:
        """Every bad call the contract tries: the main call's inputs and parameters, each
        other bad parameter where it is taken (`param_variants_elsewhere`), the values read
        off the constructor's and the call's parameters, and the role's extras."""
        fn, args, kwargs = self.sample_call(instance, case)
        variants = input_variants(fn, args, kwargs, width=self.vary_width)
        passed = named_arguments(fn, args, kwargs)
        derived = _derived(self._constructor_parameters(pm), self.params, wrong_type=passed)
        derived.update(_derived(parameters(fn), passed, wrong_type=passed))
        call_variants, rest = param_variants(fn, args, kwargs, _merged(self.bad_params, derived))
        variants += call_variants
        variants += self.param_variants_elsewhere(pm, instance, case, rest)
        return variants + self.extra_variants(pm, instance, case)

    def other_calls(self, instance: Any, case: Any) -> list[tuple[Callable[..., Any], tuple]]:
        """(bound method, (args, kwargs)) of the calls besides the main one whose parameters
        need bad values too (a trainer's calls after `fit`)."""
        return []

    def _constructor_parameters(self, pm: PluginManager) -> dict[str, inspect.Parameter]:
        return parameters(pm.get(self.role, self.component).resolve())

    def test_every_parameter_has_a_bad_value(
        self, installed_pm: PluginManager, instance: Any, case: Any
    ) -> None:
        """Each parameter of the constructor, of the main call and of the other calls (a
        trainer's calls after fit), but the data each is passed, that is a number, a string
        or None is in `bad_params` or `reasons`: a range
        or an option the battery cannot read off a value is listed, so a new parameter is
        not left untested."""
        fn, args, kwargs = self.sample_call(instance, case)
        params, values = dict(self._constructor_parameters(installed_pm)), dict(self.params)
        for call, (a, kw) in [(fn, (args, kwargs)), *self.other_calls(instance, case)]:
            data = set(list(parameters(call))[: len(a)])  # the data, passed positionally
            params |= {n: p for n, p in parameters(call).items() if n not in data}
            values |= named_arguments(call, a, kw)
        listed = {**getattr(self, "call_bad_params", {}), **self.bad_params}
        missing = uncovered(params, values, listed, self.reasons)
        assert not missing, (
            f"{self.component!r}: add bad values to bad_params (or a reason to reasons) for: "
            + ", ".join(missing)
        )

    def param_variants_elsewhere(
        self, pm: PluginManager, instance: Any, case: Any, params: Mapping[str, list[Any]]
    ) -> list[Variant]:
        """The bad parameters the main call does not take: tried at construction, then the
        main call. A name the constructor does not take either is a mistake in `bad_params`
        (its "unexpected keyword" TypeError would name it and pass without testing anything)."""
        variants = []
        for name, values in params.items():
            assert self._constructor_takes(pm, name), (
                f"bad_params names {name!r}, which neither the main call nor the constructor of "
                f"{self.component!r} takes"
            )
            for value in values:

                def build_and_call(name: str = name, value: Any = value) -> Any:
                    fresh = self.make_instance(pm, **{name: value})
                    call, a, kw = self.sample_call(fresh, case)
                    return call(*a, **kw)

                variants.append(Variant(param_key(name, value), name, build_and_call, ()))
        return variants

    def _constructor_takes(self, pm: PluginManager, name: str) -> bool:
        factory = pm.get(self.role, self.component).resolve()
        try:
            params = inspect.signature(factory).parameters
        except (TypeError, ValueError):  # a builtin or C factory: cannot tell
            return True
        return name in params or any(
            p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()
        )

    def test_bad_inputs_rejected(
        self, installed_pm: PluginManager, instance: Any, case: Any
    ) -> None:
        """The battery: each bad call raises ValueError/TypeError naming the argument (or
        NotFittedError before fit) and leaves the caller's data as it was."""
        failures = run_battery(self.battery(installed_pm, instance, case), self.accepts, same=same)
        assert not failures, f"{len(failures)} bad input(s) not rejected well:\n" + "\n".join(
            failures
        )

    def test_satisfies_the_role(self, instance: Any) -> None:
        assert missing_members(self.role, instance) == []

    def test_registered_with_metadata(self, installed_pm: PluginManager) -> None:
        comp = installed_pm.get(self.role, self.component)
        assert comp.summary, "register(..., summary=...) is empty"
        assert comp.paper, "register(..., paper=...) is empty"

    def test_plugin_module_imports_no_heavy_module(self, installed_pm: PluginManager) -> None:
        comp = installed_pm.get(self.role, self.component)
        plugin = installed_pm.pm.get_plugin(comp.plugin)
        if not isinstance(plugin, types.ModuleType):  # registered at run time: no module
            return
        module = plugin.__name__
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

    @pytest.fixture
    def case(self, explain_case: tuple[Any, Any, dict]) -> tuple[Any, Any, dict]:
        return explain_case

    def sample_call(self, instance: Any, case: Any) -> tuple[Callable[..., Any], tuple, dict]:
        model, inputs, kw = case
        return instance.explain, (model, inputs), dict(kw)

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
    """Provide `defense_case` -> (payload, context). A defense that learns sets
    `unfitted_params` (parameters that build it unfitted): its check must then raise
    NotFittedError."""

    role = "defense"
    unfitted_params: ClassVar[dict[str, Any] | None] = None

    @pytest.fixture
    def case(self, defense_case: tuple[Any, Any]) -> tuple[Any, Any]:
        return defense_case

    def sample_call(self, instance: Any, case: Any) -> tuple[Callable[..., Any], tuple, dict]:
        payload, context = case
        return instance.check, (payload, context), {}

    def extra_variants(self, pm: PluginManager, instance: Any, case: Any) -> list[Variant]:
        if self.unfitted_params is None:
            return []
        fresh = pm.load(self.role, self.component, **self.unfitted_params)
        return [Variant("check:not-fitted", "", fresh.check, tuple(case), {}, not_fitted_errors())]

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

    @pytest.fixture
    def case(self, attack_case: tuple[Any, Any, int | None]) -> tuple[Any, Any, int | None]:
        return attack_case

    def sample_call(self, instance: Any, case: Any) -> tuple[Callable[..., Any], tuple, dict]:
        target, inputs, budget = case
        return instance.run, (target, inputs), {"budget": budget}

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
    vary_width = False  # a problem's points may have any dimension (set True where they must agree)

    @pytest.fixture
    def case(self, solve_case: tuple[Any, dict]) -> tuple[Any, dict]:
        return solve_case

    def sample_call(self, instance: Any, case: Any) -> tuple[Callable[..., Any], tuple, dict]:
        problem, kw = case
        return instance.solve, (problem,), {"seed": 0, **kw}

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
    """Provide `fit_case` -> (data, kwargs): `fit(*data, **kwargs)` with data a tuple. The
    battery also tries the calls of a fitted trainer (`fitted_calls`): with bad inputs after
    `fit`, and on an unfitted instance, where they must raise NotFittedError."""

    role = "trainer"
    vary_width = False  # fit data may have any width; what is fitted is then held to it
    #: bad values of the fitted calls' own parameters, tried on each call that takes the name
    #: even where the constructor takes it too (`{"seed": [-1]}` for `sample(n, seed=...)`)
    call_bad_params: ClassVar[dict[str, list[Any]]] = {}
    FITTED_METHODS: ClassVar[tuple[str, ...]] = (
        "predict",
        "predict_proba",
        "predict_log_proba",
        "decision_function",
        "transform",
        "score",
    )

    @pytest.fixture
    def case(self, fit_case: tuple[tuple, dict]) -> tuple[tuple, dict]:
        return fit_case

    def sample_call(self, instance: Any, case: Any) -> tuple[Callable[..., Any], tuple, dict]:
        data, kw = case
        return instance.fit, tuple(data), dict(kw)

    def fitted_calls(self, case: Any) -> dict[str, tuple[tuple, dict]]:
        """{method: (args, kwargs)} a fitted trainer answers: by default scikit-learn's
        predict/transform family on the first fit argument, `score` on all of them."""
        data, _ = case
        if not data:
            return {}
        return {m: (tuple(data) if m == "score" else (data[0],), {}) for m in self.FITTED_METHODS}

    def _fitted(self, pm: PluginManager, case: Any) -> Any:
        """One instance fitted on the case, shared by this test's post-fit variants."""
        if getattr(self, "_fitted_instance", None) is None:
            fitted = self.make_instance(pm)
            fn, args, kwargs = self.sample_call(fitted, case)
            fn(*args, **kwargs)
            self._fitted_instance = fitted
        return self._fitted_instance

    def _calls(self, instance: Any, case: Any) -> dict[str, tuple[tuple, dict]]:
        return {m: c for m, c in self.fitted_calls(case).items() if hasattr(instance, m)}

    def other_calls(self, instance: Any, case: Any) -> list[tuple[Callable[..., Any], tuple]]:
        return [(getattr(instance, m), c) for m, c in self._calls(instance, case).items()]

    def param_variants_elsewhere(
        self, pm: PluginManager, instance: Any, case: Any, params: Mapping[str, list[Any]]
    ) -> list[Variant]:
        """A bad parameter that the constructor does not take but a fitted call does (e.g.
        `sample(n, steps=...)`) is tried there, on a fitted instance; the others at
        construction (the constructor first: a `seed` both take is the constructor's)."""
        variants = []
        rest = {n: v for n, v in params.items() if not self._constructor_takes(pm, n)}
        constructor = {n: v for n, v in params.items() if n not in rest}
        for method, (args, kwargs) in self._calls(instance, case).items():
            taken = {}
            for name in list(rest):
                bound = getattr(instance, method)
                try:
                    takes = name in inspect.signature(bound).parameters
                except (TypeError, ValueError):
                    takes = False
                if takes:
                    taken[name] = rest.pop(name)
            if taken:
                call = getattr(self._fitted(pm, case), method)
                found, _ = param_variants(call, args, kwargs, taken)
                variants += [
                    Variant(f"{method}:{v.key}", v.argument, v.call, v.args, v.kwargs)
                    for v in found
                ]
        return variants + super().param_variants_elsewhere(
            pm, instance, case, {**constructor, **rest}
        )

    def extra_variants(self, pm: PluginManager, instance: Any, case: Any) -> list[Variant]:
        calls = self._calls(instance, case)
        if not calls:
            return []
        fitted, unfitted = self._fitted(pm, case), self.make_instance(pm)
        variants, unused = [], set(self.call_bad_params)
        for method, (args, kwargs) in calls.items():
            call = getattr(fitted, method)
            variants += input_variants(call, args, kwargs, prefix=f"{method}:")
            taken = {n: v for n, v in self.call_bad_params.items() if n in parameters(call)}
            unused -= set(taken)
            passed = named_arguments(call, args, kwargs)
            derived = _derived(parameters(call), passed, wrong_type=passed)
            found, _ = param_variants(call, args, kwargs, _merged(taken, derived))
            variants += [
                Variant(f"{method}:{v.key}", v.argument, v.call, v.args, v.kwargs) for v in found
            ]
            variants.append(
                Variant(
                    f"{method}:not-fitted",
                    "",
                    getattr(unfitted, method),
                    args,
                    kwargs,
                    not_fitted_errors(),
                )
            )
        assert not unused, f"call_bad_params names {sorted(unused)}, which no fitted call takes"
        return variants

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


def raw_request(
    url: str, method: str, path: str, headers: Mapping[str, str], body: bytes = b""
) -> tuple[int, Any, Any]:
    """(status, the JSON body or None, the response headers) of one HTTP request sent with
    exactly these headers (`Host` defaults to the URL's), as a browser or an attacker would
    send it: how a server's door (`paperplug.door`) is tested."""
    import http.client
    import urllib.parse

    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    try:
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        for name, value in {"Host": parts.netloc, **headers}.items():
            conn.putheader(name, value)
        conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        response = conn.getresponse()
        raw = response.read()
    finally:
        conn.close()
    return response.status, (json.loads(raw) if raw else None), response.headers
