"""The bad-input battery: variants of a valid call (NaN and inf in each float array, empty
arrays, a wrong dtype, a wrong trailing dimension, a wrong type, an invalid parameter) that a
component must reject with a ValueError or TypeError naming the argument, leaving the caller's
data untouched. The role contracts in `paperplug.testing` run it on each package's sample call.

numpy, torch and networkx are imported only when a value is one of theirs.
"""

from __future__ import annotations

import copy
import inspect
import itertools
import math
import numbers
import re
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

ERRORS = (ValueError, TypeError)


class Opaque:
    """A value of a type no method accepts: the battery's "wrong type" argument."""

    def __repr__(self) -> str:
        return "<Opaque: a wrong type>"

    def __eq__(self, other: object) -> bool:  # its copy is the same value
        return isinstance(other, Opaque)

    __hash__ = object.__hash__


@dataclass
class Variant:
    """One bad call: `key` (e.g. "X:nan") names it in reports and in a contract's `accepts`;
    `argument` is the name the error message must contain."""

    key: str
    argument: str
    call: Callable[..., Any]
    args: tuple
    kwargs: dict = field(default_factory=dict)
    expect: tuple[type[BaseException], ...] = ERRORS


def _leaf_variants(value: Any) -> Iterator[tuple[str, Any]]:
    """(kind, bad copy) pairs for one numpy array, torch tensor, networkx graph or scipy
    sparse matrix (NaN and inf in its stored values, and 0 × 0)."""
    np, torch = sys.modules.get("numpy"), sys.modules.get("torch")
    if np is not None and isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
        if value.dtype.kind == "f" and value.size:
            for kind, bad in (("nan", np.nan), ("inf", np.inf)):
                out = value.copy()
                out.flat[0] = bad
                yield kind, out
            yield "dtype", np.full(value.shape, "a")
        elif value.dtype.kind in "iu" and value.size:
            yield "dtype", value.astype(np.float64) + 0.5
        if value.ndim >= 1 and len(value):
            yield "empty", value[:0].copy()
        if value.ndim >= 2:
            yield "width", np.concatenate([value, value[..., :1]], axis=-1)
    elif torch is not None and isinstance(value, torch.Tensor):
        v = value.detach().clone()
        if v.is_floating_point() and v.numel():
            for kind, bad in (("nan", float("nan")), ("inf", float("inf"))):
                out = v.clone()
                out.view(-1)[0] = bad
                yield kind, out
            yield "dtype", v.to(torch.complex64)
        elif v.dtype != torch.bool and not v.is_complex() and v.numel():
            yield "dtype", v.double() + 0.5
        if v.dim() >= 1 and len(v):
            yield "empty", v[:0].clone()
        if v.dim() >= 2:
            yield "width", torch.cat([v, v[..., :1]], dim=-1)
    elif _is_graph(value) and value.number_of_nodes():
        yield "empty", type(value)()
    elif _is_sparse(value) and value.nnz:
        if value.dtype.kind == "f":
            for kind, bad in (("nan", np.nan), ("inf", np.inf)):
                out = value.copy()
                out.data[0] = bad
                yield kind, out
        yield "empty", type(value)((0, 0))


def _is_sparse(value: Any) -> bool:
    """A scipy sparse matrix or array (scipy is not imported to tell)."""
    return type(value).__module__.startswith("scipy.sparse") and hasattr(value, "nnz")


def _is_graph(value: Any) -> bool:
    nx = sys.modules.get("networkx")
    return nx is not None and isinstance(value, nx.Graph)


def _is_leaf(value: Any) -> bool:
    return any(True for _ in _leaf_variants(value)) if value is not None else False


def value_variants(value: Any, path: str) -> Iterator[tuple[str, Any]]:
    """(key, bad value) pairs for one argument: its arrays, tensors and graphs, and those
    nested inside lists, tuples and dicts at any depth, and a dict's numbers (2.5 for an
    int, NaN for a real). A tuple or dict is a record: each of
    its items is varied in every way; a list is a sequence: its first item in every way, each
    later one (the first 16, or the second, middle and last of a longer list) in its first
    way, and the whole list emptied."""
    if _is_leaf(value):
        for kind, bad in _leaf_variants(value):
            yield f"{path}:{kind}", bad
    elif isinstance(value, (list, tuple)) and value:
        record = isinstance(value, tuple)
        n = len(value)
        later = range(1, n) if n <= 17 else sorted({1, n // 2, n - 1})
        found = False
        for i in range(n) if record else [0, *later]:
            inner = value_variants(value[i], f"{path}[{i}]")
            for key, bad in inner if record or i == 0 else itertools.islice(inner, 1):
                found = True
                yield key, _with_item(value, i, bad)
        if found:
            yield f"{path}:empty", type(value)() if type(value) in (list, tuple) else []
    elif isinstance(value, Mapping):
        for key, item in value.items():
            for name, bad in value_variants(item, f"{path}[{key!r}]"):
                yield name, {**value, key: bad}
            for bad in derived_bad_values(item):  # a number in a record: {"k": 2} -> 2.5
                yield f"{path}[{key!r}]={bad!r}", {**value, key: bad}


def _with_item(seq: list | tuple, i: int, item: Any) -> list | tuple:
    """A copy of the list or tuple (a named tuple too) with item i replaced."""
    items = [*seq[:i], item, *seq[i + 1 :]]
    return seq._make(items) if hasattr(seq, "_make") else type(seq)(items)


def derived_bad_values(value: Any) -> list[Any]:
    """Bad values read off a valid scalar: a non-integer where an int is meant, NaN where a
    real number is (a range cannot be read off a value: the contract lists it)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return []
    return [2.5] if isinstance(value, numbers.Integral) else [math.nan]


def needs_a_bad_value(value: Any) -> bool:
    """Whether a parameter with this (valid or default) value needs a bad value or a reason
    listed: a number, a string or None (an option, a range: nothing the battery can read
    off it), or a list or tuple of them. Data (varied by the battery), a flag and an object
    (a model, a callable) have their wrong type tried."""
    if isinstance(value, (list, tuple)):
        return bool(value) and all(map(needs_a_bad_value, value))
    return value is None or (isinstance(value, (numbers.Real, str)) and not isinstance(value, bool))


def parameters(fn: Callable[..., Any]) -> dict[str, inspect.Parameter]:
    """fn's named parameters (not *args, **kwargs); {} when its signature cannot be read."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return {}
    var = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    return {n: p for n, p in params.items() if p.kind not in var}


def uncovered(
    params: Mapping[str, inspect.Parameter],
    values: Mapping[str, Any],
    bad_params: Mapping[str, Any],
    reasons: Mapping[str, str],
) -> list[str]:
    """The parameters, with their `values` (else their defaults), that have no bad value in
    `bad_params` and no reason in `reasons` although `needs_a_bad_value`; and each name in
    `reasons` that is no parameter (a stale reason), or whose reason is empty."""
    missing = []
    for name, param in params.items():
        value = values.get(name, None if param.default is param.empty else param.default)
        if name not in bad_params and name not in reasons and needs_a_bad_value(value):
            missing.append(name)
    missing += [f"{n} (listed with no reason)" for n, why in reasons.items() if not why.strip()]
    missing += [f"{n} (a reason for no such parameter)" for n in reasons if n not in params]
    return missing


def _bound(fn: Callable[..., Any], args: tuple, kwargs: dict) -> inspect.BoundArguments:
    try:
        return inspect.signature(fn).bind(*args, **kwargs)
    except (TypeError, ValueError) as exc:
        raise AssertionError(f"the sample call does not match {fn!r}'s signature: {exc}") from exc


def named_arguments(fn: Callable[..., Any], args: tuple, kwargs: dict) -> dict[str, Any]:
    """The call's arguments by the names the caller sees (`**kw` flattened into its keys)."""
    bound = _bound(fn, args, kwargs)
    named: dict[str, Any] = {}
    for name, value in bound.arguments.items():
        kind = bound.signature.parameters[name].kind
        if kind is inspect.Parameter.VAR_KEYWORD:
            named.update(value)
        elif kind is inspect.Parameter.VAR_POSITIONAL:
            named.update({f"{name}[{i}]": v for i, v in enumerate(value)})
        else:
            named[name] = value
    return named


def _replace(
    fn: Callable[..., Any], args: tuple, kwargs: dict, name: str, value: Any
) -> tuple[tuple, dict]:
    """The call's (args, kwargs) with the argument `name` set to `value` (added as a keyword
    when the call did not pass it)."""
    bound = _bound(fn, args, kwargs)
    params = bound.signature.parameters
    arguments = dict(bound.arguments)
    if name in arguments and params[name].kind not in (
        inspect.Parameter.VAR_KEYWORD,
        inspect.Parameter.VAR_POSITIONAL,
    ):
        arguments[name] = value
    else:
        var_kw = next(
            (n for n, p in params.items() if p.kind is inspect.Parameter.VAR_KEYWORD), None
        )
        if name in params:
            arguments[name] = value
        elif var_kw is not None:
            arguments[var_kw] = {**arguments.get(var_kw, {}), name: value}
        else:
            raise AssertionError(f"{fn!r} takes no argument {name!r}")
    new = inspect.BoundArguments(bound.signature, arguments)  # type: ignore[arg-type]
    return new.args, new.kwargs


def input_variants(
    fn: Callable[..., Any], args: tuple, kwargs: dict, prefix: str = "", *, width: bool = True
) -> list[Variant]:
    """The battery's variants of the valid call `fn(*args, **kwargs)`: for every argument a
    wrong type, and for its arrays, tensors and graphs NaN, inf, a wrong dtype, empty and (if
    `width`: where the data must fit a model or each other) one extra trailing column."""
    variants = []
    for name, value in named_arguments(fn, args, kwargs).items():
        if value is None or "[" in name:
            continue
        bad_values = [(f"{name}:type", Opaque()), *value_variants(value, name)]
        for key, bad in bad_values:
            if not width and key.endswith(":width"):
                continue
            new_args, new_kwargs = _replace(fn, args, kwargs, name, bad)
            variants.append(Variant(f"{prefix}{key}", name, fn, new_args, new_kwargs))
    return variants


def param_variants(
    fn: Callable[..., Any], args: tuple, kwargs: dict, bad_params: Mapping[str, list]
) -> tuple[list[Variant], dict[str, list]]:
    """Variants of the call for the bad values of its own parameters, and the bad values of
    the others (constructor parameters, tried at construction)."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        params = {}
    takes_kw = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    named = named_arguments(fn, args, kwargs)
    variants, constructor = [], {}
    for name, values in bad_params.items():
        if name in params or name in named or (takes_kw and name in kwargs):
            for value in values:
                new_args, new_kwargs = _replace(fn, args, kwargs, name, value)
                variants.append(Variant(param_key(name, value), name, fn, new_args, new_kwargs))
        else:
            constructor[name] = list(values)
    return variants, constructor


def param_key(name: str, value: Any) -> str:
    """A bad parameter's key: `k=0`, or `k:type` for the wrong-type value."""
    return f"{name}:type" if isinstance(value, Opaque) else f"{name}={value!r}"


def names_argument(message: str, name: str) -> bool:
    """Whether an error message names the argument `name` as a word ("X", "n_rules")."""
    return re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", message) is not None


def _snapshot(value: Any, same: Callable[[Any, Any], bool]) -> Any:
    """A deep copy of `value` to compare it with after the call; `_Uncopyable` (not compared)
    when it cannot be copied (a model holding a lock, an open client) or its copy already
    differs from it (a CLIP tokenizer: the `decode` its constructor sets on the Rust
    tokenizer is not copied), which would report a mutation the call never made."""
    try:
        snapshot = copy.deepcopy(value)
    except Exception:
        return _Uncopyable
    return snapshot if same(snapshot, value) else _Uncopyable


class _Uncopyable:
    pass


def judge(variant: Variant, *, same: Callable[[Any, Any], bool]) -> str | None:
    """Run one bad call; None when it was rejected as it should be (the right error, naming
    the argument, the caller's data untouched), else what went wrong."""
    before = snapshot_arguments(variant.call, variant.args, variant.kwargs, same=same)
    problems = []
    try:
        variant.call(*variant.args, **variant.kwargs)
    except variant.expect as exc:
        if variant.argument and not names_argument(str(exc), variant.argument):
            problems.append(
                f"{type(exc).__name__} does not name {variant.argument!r}: {str(exc)[:300]!r}"
            )
    except Exception as exc:
        want = "/".join(dict.fromkeys(e.__name__ for e in variant.expect))
        problems.append(
            f"raised {type(exc).__name__} from {_origin(exc)}, not {want}: {str(exc)[:300]!r}"
        )
    else:
        problems.append("accepted without an error")
    changed = changed_arguments(before, variant.call, variant.args, variant.kwargs, same=same)
    if changed:
        problems.append(f"mutated the caller's {', '.join(changed)}")
    return f"{variant.key}: {'; '.join(problems)}" if problems else None


def _arguments(call: Callable[..., Any], args: tuple, kwargs: dict) -> dict[str, Any]:
    try:
        return named_arguments(call, args, kwargs)
    except AssertionError:
        return {f"arg{i}": a for i, a in enumerate(args)} | dict(kwargs)


def snapshot_arguments(
    call: Callable[..., Any], args: tuple, kwargs: dict, *, same: Callable[[Any, Any], bool]
) -> dict[str, Any]:
    """A deep copy of each argument of `call(*args, **kwargs)`, by name, to compare with after
    the call (`changed_arguments`)."""
    return {n: _snapshot(v, same) for n, v in _arguments(call, args, kwargs).items()}


def changed_arguments(
    before: dict[str, Any],
    call: Callable[..., Any],
    args: tuple,
    kwargs: dict,
    *,
    same: Callable[[Any, Any], bool],
) -> list[str]:
    """The names of the arguments that differ from their `snapshot_arguments` copy (those
    that could not be copied faithfully are not compared)."""
    after = _arguments(call, args, kwargs)
    return [n for n, b in before.items() if b is not _Uncopyable and not same(b, after[n])]


def _origin(exc: BaseException) -> str:
    tb = exc.__traceback__
    module = "?"
    while tb is not None:
        module = tb.tb_frame.f_globals.get("__name__", "?")
        tb = tb.tb_next
    return module


def run_battery(
    variants: list[Variant], accepts: Mapping[str, str], *, same: Callable[[Any, Any], bool]
) -> list[str]:
    """What went wrong over `variants` (empty when every one was rejected well).
    Keys in `accepts` (deliberately accepted, with why) are skipped; one matching no variant
    is reported, so a stale declaration does not linger."""
    keys = {v.key for v in variants}
    failures = [
        f"{key}: declared in accepts but no such variant" for key in accepts if key not in keys
    ]
    for variant in variants:
        if variant.key in accepts:
            continue
        problem = judge(variant, same=same)
        if problem:
            failures.append(problem)
    return failures
