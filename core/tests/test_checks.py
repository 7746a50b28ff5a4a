"""paperplug.checks: each check rejects what it should with a message naming the argument,
accepts what it should, and never hands back a view of the caller's data when asked not to."""

from __future__ import annotations

import subprocess
import sys

import networkx as nx
import numpy as np
import pytest
import torch

from paperplug import checks
from paperplug.checks import (
    NotFittedError,
    argument_errors,
    check_array,
    check_choice,
    check_consistent_length,
    check_context,
    check_distribution,
    check_float_tensor,
    check_graph,
    check_is_fitted,
    check_scalar,
    check_sequence,
    check_tensor,
    check_type,
)


def test_check_array_rejects_nan_and_inf_naming_the_argument_and_the_first_place():
    X = np.ones((3, 2))
    X[1, 0] = np.nan
    with pytest.raises(
        ValueError,
        match=r"^X holds NaN or infinite values \(1 of them, the first at index \(1, 0\)\)",
    ):
        check_array(X, "X")
    with pytest.raises(ValueError, match="weights holds NaN"):
        check_array([1.0, np.inf], "weights")
    assert check_array(X, "X", finite=False).shape == (3, 2)


@pytest.mark.parametrize(
    ("value", "error", "pattern"),
    [
        (np.full((2, 2), "a"), TypeError, r"X must hold real numbers, got dtype <U1 \(strings\)"),
        (np.array([object(), 1]), TypeError, r"X must hold real numbers: float\(\) argument"),
        (np.eye(2) + 1j, ValueError, "X must hold real numbers: Complex data not supported"),
        (np.zeros(3), ValueError, r"X must be 2-dimensional.*Reshape your data with X\.reshape"),
        (np.zeros((0, 3)), ValueError, r"X is empty or too small: needs at least 1 rows"),
        (np.zeros((3, 0)), ValueError, r"X is empty: got shape \(3, 0\)"),
        (None, TypeError, "X must be an array, got None"),
        ([[1, 2], [3]], ValueError, "X must be a rectangular array"),
    ],
)
def test_check_array_rejects_bad_kinds(value, error, pattern):
    with pytest.raises(error, match=pattern):
        check_array(value, "X", ndim=2 if pattern.startswith("X must be 2") else None)


def test_numbers_held_as_objects_are_read_and_sparse_input_is_refused_by_name():
    from scipy import sparse

    assert check_array(np.array([[1, 2.5]], dtype=object), "X").tolist() == [[1.0, 2.5]]
    with pytest.raises(TypeError, match=r"X is a scipy sparse matrix.*X\.toarray\(\)"):
        check_array(sparse.csr_matrix(np.eye(3)), "X")
    with pytest.raises(TypeError, match=r"y must be an array, got .*Opaque"):

        class Opaque:
            pass

        check_consistent_length(X=np.zeros(3), y=Opaque())


def test_check_array_shape_ndim_and_min_samples():
    X = np.zeros((10, 5))
    with pytest.raises(
        ValueError, match=r"X must have shape \(\*, 4\) \(\* = any\), got \(10, 5\)"
    ):
        check_array(X, "X", shape=(None, 4))
    with pytest.raises(ValueError, match="X must be 1 or 3-dimensional, got 2 dimensions"):
        check_array(X, "X", ndim=(1, 3))
    with pytest.raises(ValueError, match="needs at least 11 rows"):
        check_array(X, "X", min_samples=11)
    assert check_array(np.zeros((0, 4)), "X", min_samples=0, shape=(None, 4)).shape == (0, 4)


def test_check_array_dtypes():
    assert check_array([1, 2], "x").dtype == np.float64
    assert check_array(np.float32([1]), "x").dtype == np.float32  # float kept
    assert check_array([1.0, 2.0], "y", dtype="int").tolist() == [1, 2]
    with pytest.raises(TypeError, match="y must hold integers, got non-integral float64"):
        check_array([1.0, 2.5], "y", dtype="int")
    with pytest.raises(TypeError, match="y must hold integers, got dtype bool"):
        check_array([True], "y", dtype="int")
    assert check_array([0, 1], "m", dtype="bool").dtype == bool
    with pytest.raises(TypeError, match="m must hold booleans"):
        check_array([0, 2], "m", dtype="bool")
    assert check_array(np.int8([3]), "k", dtype="numeric").dtype == np.int8


def test_check_array_copy_never_returns_a_view_and_tensors_are_read():
    X = np.arange(6.0).reshape(2, 3)
    out = check_array(X, "X", copy=True)
    out[0, 0] = 99
    assert X[0, 0] == 0
    assert check_array(X, "X") is X  # no copy asked, none made
    t = torch.arange(4.0)
    arr = check_array(t, "t", copy=True)
    arr[0] = 5
    assert t[0] == 0


def test_check_tensor():
    t = torch.ones(2, 3)
    assert check_tensor(t, "x") is not None and check_tensor(np.ones((2, 3)), "x").shape == (2, 3)
    assert check_tensor([1, 2], "x").dtype == torch.get_default_dtype()
    assert check_tensor([1.0, 2.0], "ids", dtype="int").dtype == torch.int64
    bad = t.clone()
    bad[0, 1] = float("inf")
    with pytest.raises(
        ValueError,
        match=r"x holds NaN or infinite values \(1 of them, the first at index \(0, 1\)\)",
    ):
        check_tensor(bad, "x")
    with pytest.raises(TypeError, match=r"x must hold real numbers, got dtype torch\.complex64"):
        check_tensor(t.to(torch.complex64), "x")
    with pytest.raises(TypeError, match="x must be a tensor or array, got str"):
        check_tensor("abc", "x")
    with pytest.raises(ValueError, match=r"x must have shape \(\*, 4\)"):
        check_tensor(t, "x", shape=(None, 4))
    copied = check_tensor(t, "x", copy=True)
    copied[0, 0] = 7
    assert t[0, 0] == 1


def test_check_float_tensor_keeps_the_graph_and_rejects_non_floats():
    w = torch.ones(2, 3, requires_grad=True)
    assert check_float_tensor(w, "w", ndim=2) is w  # the tensor itself: gradients flow
    with pytest.raises(TypeError, match=r"w must be a Tensor, got numpy\.ndarray"):
        check_float_tensor(np.ones((2, 3)), "w")
    with pytest.raises(TypeError, match=r"w must hold floats, got dtype torch\.int64"):
        check_float_tensor(torch.ones(2, dtype=torch.long), "w")
    with pytest.raises(TypeError, match=r"w must hold floats, got dtype torch\.complex64"):
        check_float_tensor(torch.ones(2, dtype=torch.complex64), "w")
    with pytest.raises(ValueError, match="w holds NaN"):
        check_float_tensor(torch.tensor([1.0, float("nan")]), "w")
    with pytest.raises(ValueError, match=r"w must have shape \(\*, 4\)"):
        check_float_tensor(w, "w", shape=(None, 4))


def test_check_scalar():
    assert check_scalar(3, "k", "int", low=1) == 3 and check_scalar(np.int64(2), "k", "int") == 2
    with pytest.raises(TypeError, match=r"k must be an int, got float 2.5"):
        check_scalar(2.5, "k", "int", low=1)
    with pytest.raises(TypeError, match="k must be an int, got bool"):
        check_scalar(True, "k", "int")
    with pytest.raises(ValueError, match="k must be >= 1, got 0"):
        check_scalar(0, "k", "int", low=1)
    with pytest.raises(ValueError, match=r"p must lie in \(0, 1\), got 1.5"):
        check_scalar(1.5, "p", low=0, high=1, inclusive="neither")
    with pytest.raises(ValueError, match="eta must be > 0, got 0"):
        check_scalar(0, "eta", low=0, inclusive="neither")
    with pytest.raises(ValueError, match="lr must be a number, got nan"):
        check_scalar(float("nan"), "lr")
    with pytest.raises(TypeError, match="lr must be a real number, got str 'a'"):
        check_scalar("a", "lr")
    assert check_scalar(None, "seed", "int", allow_none=True) is None


def test_choice_type_sequence_context_distribution_graph_length():
    assert check_choice("a", "mode", ("a", "b")) == "a"
    with pytest.raises(ValueError, match="mode must be one of 'a', 'b'; got 'c'"):
        check_choice("c", "mode", ("a", "b"))
    with pytest.raises(ValueError, match="mode must be one of"):
        check_choice([1], "mode", ("a",))  # unhashable: still a clear ValueError
    with pytest.raises(TypeError, match="model must be a torch module, got str"):
        check_type("m", "model", torch.nn.Module, what="a torch module")
    with pytest.raises(TypeError, match="texts must be a sequence, got str"):
        check_sequence("abc", "texts", str)
    with pytest.raises(TypeError, match=r"texts\[1\] must be a str, got int"):
        check_sequence(["a", 2], "texts", str)
    with pytest.raises(ValueError, match="texts must hold at least 1 item"):
        check_sequence([], "texts")
    assert check_context(None) == {} and check_context({"a": 1}) == {"a": 1}
    with pytest.raises(TypeError, match="context must be a mapping"):
        check_context(["prompt"])
    with pytest.raises(ValueError, match="marginal must be a probability vector"):
        check_distribution([0.5, 0.6], "marginal")
    with pytest.raises(ValueError, match="graph must have at least 1 node"):
        check_graph(nx.Graph(), "graph")
    with pytest.raises(TypeError, match="graph must be a networkx graph, got dict"):
        check_graph({}, "graph")
    with pytest.raises(
        ValueError, match="X and y must have the same number of rows: X has 3, y has 2"
    ):
        check_consistent_length(X=np.zeros((3, 1)), y=[0, 1])


class _Model:
    def fit(self):
        self.coef_ = 1
        return self


def test_not_fitted_error_is_sklearns_and_names_the_class():
    from sklearn.exceptions import NotFittedError as SkNotFitted

    assert issubclass(NotFittedError, SkNotFitted) and issubclass(NotFittedError, ValueError)
    with pytest.raises(NotFittedError, match="This _Model instance is not fitted yet"):
        check_is_fitted(_Model())
    check_is_fitted(_Model().fit())
    with pytest.raises(NotFittedError):
        check_is_fitted(_Model().fit(), ["rules_"])


def test_not_fitted_error_without_sklearn_is_a_value_and_attribute_error():
    code = (
        "import importlib.util as u; f = u.find_spec; "
        "u.find_spec = lambda n, *a: None if n == 'sklearn' else f(n, *a); "
        "from paperplug.checks import NotFittedError as E; import sys; "
        "print(E.__mro__[1:3], 'sklearn' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "(<class 'ValueError'>, <class 'AttributeError'>) False"


def test_importing_the_checks_imports_no_heavy_module():
    code = "import sys, paperplug.checks; print(sorted(m for m in ('numpy', 'torch', 'sklearn', 'networkx') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_argument_errors_turns_a_torch_shape_error_into_one_naming_the_argument():
    layer = torch.nn.Linear(4, 2)
    with (
        pytest.raises(
            ValueError, match=r"inputs does not fit the model \(4 features\): mat1 and mat2"
        ) as info,
        argument_errors("inputs", "4 features"),
    ):
        layer(torch.ones(3, 5))
    assert isinstance(info.value.__cause__, RuntimeError)
    with pytest.raises(RuntimeError, match="unrelated"), argument_errors("inputs"):
        raise RuntimeError("unrelated failure")


def test_module_getattr_rejects_unknown_names():
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        _ = checks.nothing


def test_check_device():
    assert checks.check_device("cpu") == torch.device("cpu")
    assert checks.check_device(torch.device("cpu"), "map_location") == torch.device("cpu")
    with pytest.raises(ValueError, match=r"device must name a torch device.*'no-such-device'"):
        checks.check_device("no-such-device")
    with pytest.raises(
        TypeError, match=r"device must be a torch device or its name \(.*\), got float"
    ):
        checks.check_device(1.5)
    with pytest.raises(TypeError, match="device must be a torch device"):
        checks.check_device(True)
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="device='cuda', but this machine has no CUDA"):
            checks.check_device("cuda")


def test_check_name_or_path(tmp_path, monkeypatch):
    """A path must exist (a name goes to its loader as given); "~" is expanded."""
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "model").mkdir()
    assert checks.check_name_or_path(tmp_path / "model", "path") == str(tmp_path / "model")
    assert checks.check_name_or_path("~/model", "base") == str(tmp_path / "model")
    assert checks.check_name_or_path("org/model", "base") == "org/model"
    for missing in ("/no/such/folder", "./missing", "~/missing", tmp_path / "missing"):
        with pytest.raises(ValueError, match=r"base '.*' does not exist \(give an existing"):
            checks.check_name_or_path(missing, "base")
    with pytest.raises(ValueError, match="name_or_path must be a name or a path, got an empty"):
        checks.check_name_or_path("", "name_or_path")
    with pytest.raises(TypeError, match="path must be a name or a path, got int"):
        checks.check_name_or_path(3, "path")
    with pytest.raises(TypeError, match="path must be a name or a path, got bytes"):
        checks.check_name_or_path(b"/tmp", "path")

    class BytesPath:
        def __fspath__(self):
            return b"/tmp"

    with pytest.raises(TypeError, match="path must be a name or a path as text, got bytes"):
        checks.check_name_or_path(BytesPath(), "path")
