"""Argument checks at the door, one home for every package (as scikit-learn has `check_array`
and `check_is_fitted`): arrays and tensors (finite, non-empty, dtype, ndim, trailing shape),
scalars (type and range), choices, types, fitted state. Every message names the argument as
the caller wrote it, what was expected and what came.

numpy and torch are imported only when a value is one of theirs, so the core stays light.
"""

from __future__ import annotations

import contextlib
import importlib.util
import math
import numbers
import os
import re
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

__all__ = [  # NotFittedError too, built on first use (see __getattr__)
    "argument_errors",
    "check_array",
    "check_callable",
    "check_choice",
    "check_consistent_length",
    "check_context",
    "check_data",
    "check_device",
    "check_distribution",
    "check_graph",
    "check_is_fitted",
    "check_name_or_path",
    "check_scalar",
    "check_sequence",
    "check_tensor",
    "check_type",
    "is_tensor",
]

DTYPES = ("float", "int", "bool", "numeric")
_NOT_FITTED: type | None = None


def _make_not_fitted_error() -> type:
    """paperplug's NotFittedError: scikit-learn's subclass where scikit-learn is installed (so
    `except sklearn.exceptions.NotFittedError` catches it), else a ValueError/AttributeError as
    scikit-learn's is. Decided by what is installed, never by what was imported first."""
    if importlib.util.find_spec("sklearn") is not None:
        from sklearn.exceptions import NotFittedError as base

        bases: tuple[type, ...] = (base,)
    else:
        bases = (ValueError, AttributeError)
    doc = "A method that needs `fit` first was called on an unfitted instance."
    return type("NotFittedError", bases, {"__doc__": doc, "__module__": __name__})


def __getattr__(name: str) -> Any:
    # NotFittedError is built on first use: importing scikit-learn costs seconds, and a
    # torch-only package should not pay it at import
    global _NOT_FITTED
    if name == "NotFittedError":
        if _NOT_FITTED is None:
            _NOT_FITTED = _make_not_fitted_error()
        return _NOT_FITTED
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _type_name(value: Any) -> str:
    t = type(value)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def is_tensor(value: Any) -> bool:
    """Whether `value` is a torch tensor (without importing torch)."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.Tensor)


def _shape_text(shape: Sequence[int | None]) -> str:
    dims = ["*" if d is None else str(d) for d in shape]
    return f"({', '.join(dims)}{',' if len(dims) == 1 else ''})"


def _check_layout(
    name: str,
    shape: tuple[int, ...],
    ndim: int | Sequence[int] | None,
    expected: Sequence[int | None] | None,
    min_samples: int,
) -> None:
    if expected is not None:
        if len(shape) != len(expected) or any(
            e is not None and e != s for e, s in zip(expected, shape, strict=False)
        ):
            raise ValueError(
                f"{name} must have shape {_shape_text(expected)} (* = any), "
                f"got {_shape_text(shape)}"
            )
    elif ndim is not None:
        allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
        if len(shape) not in allowed:
            want = " or ".join(str(a) for a in allowed)
            hint = ""
            if allowed == (2,) and len(shape) == 1:
                hint = (
                    f". Reshape your data with {name}.reshape(-1, 1) if it holds one feature "
                    f"or {name}.reshape(1, -1) if it holds one sample"
                )
            raise ValueError(
                f"{name} must be {want}-dimensional, got {len(shape)} dimensions "
                f"(shape {_shape_text(shape)}){hint}"
            )
    if min_samples and len(shape) >= 1 and shape[0] < min_samples:
        raise ValueError(
            f"{name} is empty or too small: needs at least {min_samples} rows along its first "
            f"axis, got shape {_shape_text(shape)}"
        )
    if min_samples and len(shape) >= 1 and 0 in shape:
        axis = shape.index(0)
        what = "feature(s)" if axis == 1 else f"entries along axis {axis}"
        raise ValueError(
            f"{name} is empty: got shape {_shape_text(shape)}, 0 {what} "
            f"(shape={_shape_text(shape)}) while a minimum of 1 is required."
        )


def _nonfinite_message(name: str, count: int, index: tuple[int, ...]) -> str:
    where = index[0] if len(index) == 1 else index
    return (
        f"{name} holds NaN or infinite values ({count} of them, the first at index {where}); "
        "clean or impute them first"
    )


def check_array(
    value: Any,
    name: str,
    *,
    dtype: str | Any = "float",
    ndim: int | Sequence[int] | None = None,
    shape: Sequence[int | None] | None = None,
    finite: bool = True,
    min_samples: int = 1,
    copy: bool = False,
) -> Any:
    """A numpy array from `value` (array, list, DataFrame, tensor), checked.

    dtype: "float" (real numbers; integers become float64), "int" (integers; floats holding
    whole numbers are accepted), "bool", "numeric" (any real dtype, kept), or a numpy dtype to
    convert to. shape: the expected shape with None for any size (implies ndim). min_samples:
    rows needed along the first axis (0 allows empty). copy: never a view of the caller's data.
    """
    import numpy as np

    if value is None:
        raise TypeError(f"{name} must be an array, got None")
    if is_tensor(value):
        value = value.detach().cpu().numpy()
    if type(value).__module__.startswith("scipy.sparse"):
        raise TypeError(
            f"{name} is a scipy sparse matrix, and sparse input is not supported here: "
            f"pass {name}.toarray()"
        )
    try:
        arr = np.asarray(value)
    except (ValueError, TypeError) as exc:  # ragged nested lists
        raise ValueError(f"{name} must be a rectangular array: {exc}") from None
    kind = arr.dtype.kind
    if kind == "O" and arr.size:  # numbers held as objects (a mixed DataFrame's values)
        try:
            arr, kind = arr.astype(np.float64), "f"
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{name} must hold real numbers: {exc}") from None
    if kind == "c":  # a ValueError with scikit-learn's wording, which its estimator checks expect
        raise ValueError(f"{name} must hold real numbers: Complex data not supported ({arr.dtype})")
    if kind not in "biuf":
        raise TypeError(
            f"{name} must hold real numbers, got dtype {arr.dtype}"
            + (" (strings)" if kind in "US" else " (objects)" if kind == "O" else "")
        )
    _check_layout(name, arr.shape, ndim, shape, min_samples)
    if dtype == "float":
        if kind != "f":
            arr = arr.astype(np.float64)
    elif dtype == "int":
        if kind == "f":
            if arr.size and not np.all(np.isfinite(arr)):
                raise ValueError(_nonfinite_message(name, int((~np.isfinite(arr)).sum()), (0,)))
            if arr.size and not np.all(arr == np.round(arr)):
                raise TypeError(f"{name} must hold integers, got non-integral {arr.dtype} values")
            arr = arr.astype(np.int64)
        elif kind == "b":
            raise TypeError(f"{name} must hold integers, got dtype bool")
    elif dtype == "bool":
        if kind != "b":
            if not np.isin(arr, (0, 1)).all():
                raise TypeError(f"{name} must hold booleans (or 0/1), got dtype {arr.dtype}")
            arr = arr.astype(bool)
    elif dtype != "numeric":
        arr = arr.astype(dtype)
    if finite and arr.dtype.kind == "f" and arr.size and not np.isfinite(arr).all():
        bad = ~np.isfinite(arr)
        first = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(_nonfinite_message(name, int(bad.sum()), first))
    if copy and isinstance(value, np.ndarray) and np.shares_memory(arr, value):
        arr = arr.copy()
    return arr


def check_tensor(
    value: Any,
    name: str,
    *,
    dtype: str | Any = "float",
    ndim: int | Sequence[int] | None = None,
    shape: Sequence[int | None] | None = None,
    finite: bool = True,
    min_samples: int = 1,
    device: Any = None,
    copy: bool = False,
) -> Any:
    """A torch tensor from `value` (tensor, array, list), checked as `check_array` does.

    dtype "float" keeps a floating dtype (integers become torch's default float), "int" gives
    int64, "bool", "numeric" keeps, or a torch dtype to convert to. Moved to `device` if given.
    """
    import torch

    if value is None:
        raise TypeError(f"{name} must be a tensor or array, got None")
    if not isinstance(value, torch.Tensor):
        if isinstance(value, (str, bytes, Mapping)) or not (
            hasattr(value, "__array__") or isinstance(value, (Sequence, numbers.Number))
        ):
            raise TypeError(f"{name} must be a tensor or array, got {_type_name(value)}")
        t = torch.as_tensor(check_array(value, name, dtype="numeric", min_samples=0, finite=False))
    else:
        t = value.detach()
    if t.is_complex() or t.dtype in (torch.quint8, torch.qint8, torch.qint32):
        raise TypeError(f"{name} must hold real numbers, got dtype {t.dtype}")
    _check_layout(name, tuple(t.shape), ndim, shape, min_samples)
    if dtype == "float":
        if not t.is_floating_point():
            t = t.to(torch.get_default_dtype())
    elif dtype == "int":
        if t.is_floating_point():
            if t.numel() and not bool(torch.isfinite(t).all()):
                raise ValueError(_nonfinite_message(name, int((~torch.isfinite(t)).sum()), (0,)))
            if t.numel() and not bool((t == t.round()).all()):
                raise TypeError(f"{name} must hold integers, got non-integral {t.dtype} values")
        elif t.dtype == torch.bool:
            raise TypeError(f"{name} must hold integers, got dtype torch.bool")
        t = t.long()
    elif dtype == "bool":
        if t.dtype != torch.bool:
            if not bool(((t == 0) | (t == 1)).all()):
                raise TypeError(f"{name} must hold booleans (or 0/1), got dtype {t.dtype}")
            t = t.bool()
    elif dtype != "numeric":
        t = t.to(dtype)
    if finite and t.is_floating_point() and t.numel() and not bool(torch.isfinite(t).all()):
        bad = ~torch.isfinite(t)
        first = tuple(int(i) for i in torch.nonzero(bad)[0])
        raise ValueError(_nonfinite_message(name, int(bad.sum()), first))
    if device is not None:
        t = t.to(device)
    if copy and isinstance(value, torch.Tensor) and t.data_ptr() == value.data_ptr():
        t = t.clone()
    return t


def check_data(value: Any, name: str, **kw: Any) -> Any:
    """`check_tensor` for a torch tensor, `check_array` for anything else: for methods that
    accept both and keep the caller's kind."""
    return check_tensor(value, name, **kw) if is_tensor(value) else check_array(value, name, **kw)


def check_float_tensor(value: Any, name: str, **kw: Any) -> Any:
    """`value` itself (its autograd graph kept, never a copy) if it is a torch tensor of floats
    that passes `check_tensor(value, name, **kw)` (finite, non-empty, the shape asked)."""
    import torch

    check_type(value, name, torch.Tensor)
    if not value.is_floating_point():
        raise TypeError(f"{name} must hold floats, got dtype {value.dtype}")
    check_tensor(value, name, **kw)
    return value


def _length(value: Any, name: str) -> int:
    """Rows of an array-like (one without len, as scikit-learn's checks pass, included)."""
    import numpy as np

    if hasattr(value, "__len__"):
        return len(value)
    if np.asarray(value).ndim == 0:
        raise TypeError(f"{name} must be an array, got {_type_name(value)}")
    return len(np.asarray(value))


def check_consistent_length(**arrays: Any) -> int:
    """The common first-axis length of named arrays (None skipped): `X` and `y` of 10 and 9 rows
    raise an error naming both."""
    lengths = {k: _length(v, k) for k, v in arrays.items() if v is not None}
    if len(set(lengths.values())) > 1:
        text = ", ".join(f"{k} has {n}" for k, n in lengths.items())
        raise ValueError(f"{' and '.join(lengths)} must have the same number of rows: {text}")
    return next(iter(lengths.values()), 0)


def _range_text(low: Any, high: Any, inclusive: str) -> str:
    left = "[" if inclusive in ("both", "left") else "("
    right = "]" if inclusive in ("both", "right") else ")"
    if low is not None and high is not None:
        return f"lie in {left}{low}, {high}{right}"
    if low is not None:
        return f"be {'>=' if left == '[' else '>'} {low}"
    return f"be {'<=' if right == ']' else '<'} {high}"


def check_scalar(
    value: Any,
    name: str,
    kind: type | tuple[type, ...] | str = "real",
    *,
    low: float | None = None,
    high: float | None = None,
    inclusive: str = "both",
    allow_none: bool = False,
) -> Any:
    """A Python int or float, of `kind` ("int", "real" or int/float), inside [low, high].

    Booleans are never numbers here; an "int" rejects 2.5 and 2.0 alike (TypeError);
    `inclusive` is "both", "left", "right" or "neither". NaN is rejected.
    """
    if value is None and allow_none:
        return None
    want_int = kind in ("int", int) or kind == (int,)
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(
            f"{name} must be {'an int' if want_int else 'a real number'}, got {_type_name(value)}"
            + (f" {value!r}" if isinstance(value, (bool, str)) else "")
        )
    if want_int:
        if not isinstance(value, numbers.Integral):
            raise TypeError(f"{name} must be an int, got {_type_name(value)} {value!r}")
        out: int | float = int(value)
    else:
        out = float(value)
        if math.isnan(out):
            raise ValueError(f"{name} must be a number, got nan")
    left_ok = low is None or (out >= low if inclusive in ("both", "left") else out > low)
    right_ok = high is None or (out <= high if inclusive in ("both", "right") else out < high)
    if not (left_ok and right_ok):
        raise ValueError(f"{name} must {_range_text(low, high, inclusive)}, got {value!r}")
    return out


def check_seed(value: Any, name: str = "seed", *, allow_none: bool = True) -> Any:
    """`value` if it can seed numpy: an int >= 0, a numpy Generator, RandomState or
    SeedSequence, or None (fresh entropy) where `allow_none`; else an error naming `name`."""
    np = sys.modules.get("numpy")
    kinds = (
        () if np is None else (np.random.Generator, np.random.RandomState, np.random.SeedSequence)
    )
    if (value is None and allow_none) or isinstance(value, kinds):
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(
            f"{name} must be an int >= 0 or a numpy Generator"
            + (" (or None)" if allow_none else "")
            + f", got {_type_name(value)} {value!r}"
        )
    return check_scalar(value, name, "int", low=0)


def check_choice(value: Any, name: str, choices: Iterable[Any]) -> Any:
    """`value` if it is one of `choices`, else a ValueError listing them."""
    options = list(choices)
    try:
        ok = value in options
    except TypeError:  # unhashable or incomparable
        ok = False
    if not ok:
        listed = ", ".join(repr(c) for c in options)
        raise ValueError(f"{name} must be one of {listed}; got {value!r}")
    return value


def check_type(value: Any, name: str, types: type | tuple[type, ...], *, what: str = "") -> Any:
    """`value` if it is an instance of `types`, else a TypeError saying what was expected."""
    if not isinstance(value, types):
        names = " or ".join(t.__name__ for t in (types if isinstance(types, tuple) else (types,)))
        raise TypeError(f"{name} must be {what or f'a {names}'}, got {_type_name(value)}")
    return value


def check_callable(value: Any, name: str, *, what: str = "callable") -> Any:
    """`value` if it is callable, else a TypeError."""
    if not callable(value):
        raise TypeError(f"{name} must be a {what}, got {_type_name(value)}")
    return value


def check_sequence(
    value: Any,
    name: str,
    of: type | tuple[type, ...] | None = None,
    *,
    min_len: int = 1,
    what: str = "",
) -> list[Any]:
    """A list from a sequence (not a bare string), with at least `min_len` items, each of type
    `of` when given: texts, documents, node lists."""
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
        raise TypeError(
            f"{name} must be a sequence{what and f' of {what}'}, got {_type_name(value)}"
        )
    items = list(value)
    if len(items) < min_len:
        raise ValueError(f"{name} must hold at least {min_len} item(s), got {len(items)}")
    if of is not None:
        for i, item in enumerate(items):
            if not isinstance(item, of):
                check_type(item, f"{name}[{i}]", of, what=what)
    return items


def check_distribution(
    value: Any, name: str, *, size: int | None = None, atol: float = 1e-6
) -> Any:
    """A 1-D probability vector (non-negative, finite, summing to 1 within `atol`) as float64."""
    p = check_array(value, name, ndim=1, shape=None if size is None else (size,))
    if (p < 0).any() or abs(float(p.sum()) - 1.0) > atol:
        raise ValueError(
            f"{name} must be a probability vector (non-negative, summing to 1), got sum "
            f"{float(p.sum()):.6g} and minimum {float(p.min()):.6g}"
        )
    return p


def check_graph(value: Any, name: str, *, min_nodes: int = 1, directed: bool | None = None) -> Any:
    """A networkx graph with at least `min_nodes` nodes (directed or not, when asked)."""
    nx = sys.modules.get("networkx")
    if nx is None or not isinstance(value, nx.Graph):
        raise TypeError(f"{name} must be a networkx graph, got {_type_name(value)}")
    if value.number_of_nodes() < min_nodes:
        raise ValueError(
            f"{name} must have at least {min_nodes} node(s), got {value.number_of_nodes()}"
        )
    if directed is not None and value.is_directed() != directed:
        raise ValueError(f"{name} must be {'' if directed else 'un'}directed")
    return value


def check_context(context: Any, name: str = "context") -> dict[str, Any]:
    """A defense's context: None (no context) or a mapping; returned as a new dict."""
    if context is None:
        return {}
    if not isinstance(context, Mapping):
        raise TypeError(f"{name} must be a mapping (or None), got {_type_name(context)}")
    return dict(context)


def check_device(value: Any, name: str = "device") -> Any:
    """A torch device from `value` ("cpu", "cuda:0", a torch.device) that this machine has;
    a name torch does not know, or CUDA or MPS where there is none, is a ValueError naming
    `name` (rather than torch's RuntimeError at the first `.to`). Imports torch."""
    import torch

    if isinstance(value, bool) or not isinstance(value, (str, int, torch.device)):
        raise TypeError(
            f"{name} must be a torch device or its name ('cpu', 'cuda'), got {_type_name(value)}"
        )
    try:
        device = torch.device(value)
    except (RuntimeError, TypeError, ValueError) as exc:
        raise ValueError(
            f"{name} must name a torch device ('cpu', 'cuda', 'cuda:0'), got {value!r}"
        ) from exc
    available = {"cuda": torch.cuda.is_available, "mps": torch.backends.mps.is_available}
    if device.type in available and not available[device.type]():
        raise ValueError(f"{name}={value!r}, but this machine has no {device.type.upper()}")
    return device


def check_name_or_path(value: Any, name: str) -> str:
    """`value` for a loader that takes a hub name or a local path, as a string: a path (a
    PathLike, or a string starting with "/", "." or "~") must exist, else a ValueError naming
    `name` (not the hub client's error on a name it cannot parse); "~" is expanded. A bare
    name ("org/model") is returned as given: only its loader can tell whether it exists."""
    if not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"{name} must be a name or a path, got {_type_name(value)}")
    text = os.fspath(value)
    if not isinstance(text, str):
        raise TypeError(f"{name} must be a name or a path as text, got {_type_name(text)}")
    if not text.strip():
        raise ValueError(f"{name} must be a name or a path, got an empty string")
    if not (isinstance(value, os.PathLike) or text.startswith(("/", ".", "~"))):
        return text
    path = os.path.expanduser(text)
    if not os.path.exists(path):
        raise ValueError(f"{name} {text!r} does not exist (give an existing path or a name)")
    return path


def check_is_fitted(estimator: Any, attributes: str | Sequence[str] | None = None) -> None:
    """Raise NotFittedError unless `estimator` has its fitted attributes (`attributes`, or by
    scikit-learn's convention any public attribute ending in "_")."""
    if attributes is None:
        fitted = (
            any(k.endswith("_") and not k.startswith("_") for k in vars(estimator))
            if hasattr(estimator, "__dict__")
            else False
        )
    else:
        names = [attributes] if isinstance(attributes, str) else list(attributes)
        fitted = all(getattr(estimator, a, None) is not None for a in names)
    if not fitted:
        raise __getattr__("NotFittedError")(
            f"This {type(estimator).__name__} instance is not fitted yet: call fit(...) with "
            "training data before using it"
        )


_TORCH_INPUT_ERROR = re.compile(
    r"shape|size|dimension|match|expected|out of (bounds|range)|index|mat1|mat2|broadcast",
    re.I,
)


@contextlib.contextmanager
def argument_errors(name: str, expected: str = "") -> Iterator[None]:
    """Turn an error raised deep inside torch by a bad `name` (a width that does not fit the
    model's layers, an index out of range) into a ValueError naming the argument, the original
    chained: for inputs whose fit to a user's model can only be known by running it."""
    try:
        yield
    except (RuntimeError, IndexError) as exc:
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if not _TORCH_INPUT_ERROR.search(text):
            raise
        hint = f" ({expected})" if expected else ""
        raise ValueError(f"{name} does not fit the model{hint}: {text}") from exc
