"""The bad-input battery catches a component whose check is missing, whose message does not
name the argument, or that mutates its input; a well-checked component passes it."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from paperplug import PluginManager
from paperplug.battery import Opaque, input_variants, names_argument, run_battery, value_variants
from paperplug.checks import check_array, check_data, check_is_fitted, check_scalar, check_type
from paperplug.testing import ExplainerContract, SolverContract, TrainerContract, same


class GoodSolver:
    """Checks every argument at the door."""

    def __init__(self, k: int = 2) -> None:
        self.k = k

    def solve(self, problem, *, seed=None):
        check_scalar(self.k, "k", "int", low=1)
        check_scalar(seed, "seed", "int", low=0, allow_none=True)
        check_type(problem, "problem", dict)
        X = check_array(problem.get("X"), "problem['X']", ndim=2)
        return float(X.sum())


class SilentSolver(GoodSolver):
    """Never checks: NaN flows through, the wrong type surfaces as an AttributeError."""

    def solve(self, problem, *, seed=None):
        return float(np.asarray(problem["X"], dtype=float).sum())


class NamelessSolver(GoodSolver):
    """Checks, but its messages do not say which argument was wrong."""

    def solve(self, problem, *, seed=None):
        try:
            return GoodSolver.solve(self, problem, seed=seed)
        except (ValueError, TypeError) as exc:
            raise type(exc)("invalid input") from None


class MutatingSolver(GoodSolver):
    """Checks, but sorts the caller's array in place first."""

    def solve(self, problem, *, seed=None):
        if isinstance(problem, dict) and isinstance(problem.get("X"), np.ndarray):
            problem["X"].sort(axis=0)
        return GoodSolver.solve(self, problem, seed=seed)


def _failures(solver_cls, bad_params=None, accepts=None):
    pm = PluginManager(entry_points=False)
    pm.register_component("solver", "s", solver_cls)

    class Contract(SolverContract):
        component = "s"

    Contract.bad_params = bad_params or {}
    Contract.accepts = accepts or {}
    contract = Contract()
    case = ({"X": np.arange(6.0).reshape(3, 2)}, {})
    variants = contract.battery(pm, contract.make_instance(pm), case)
    return {v.key for v in variants}, run_battery(variants, contract.accepts, same=same)


def test_a_well_checked_component_passes():
    keys, failures = _failures(GoodSolver, bad_params={"k": [0, 2.5]})
    assert failures == []
    assert keys == {
        "problem:type",
        "problem['X']:nan",
        "problem['X']:inf",
        "problem['X']:dtype",
        "problem['X']:empty",
        "seed:type",
        "seed=2.5",  # read off its int value
        "k:type",  # a constructor parameter gets a wrong type too
        "k=0",
        "k=2.5",
    }


def test_a_missing_check_is_caught():
    _, failures = _failures(SilentSolver, bad_params={"k": [0]})
    text = "\n".join(failures)
    assert "problem['X']:nan: accepted without an error" in text
    assert "problem:type: raised TypeError" not in text  # Opaque()["X"] is a TypeError...
    assert "problem:type: TypeError does not name 'problem'" in text  # ...naming nothing
    assert "k=0: accepted without an error" in text


def test_a_message_that_does_not_name_the_argument_is_caught():
    _, failures = _failures(NamelessSolver)
    assert "problem['X']:nan: ValueError does not name 'problem': 'invalid input'" in failures


def test_a_mutated_input_is_caught():
    _, failures = _failures(MutatingSolver)
    assert "problem['X']:inf: mutated the caller's problem" in failures  # inf sorts last
    silent = _failures(SilentSolver)[1]
    assert "problem['X']:empty: accepted without an error" in silent


class LossyCopy:
    """As a CLIP tokenizer: its constructor sets an attribute that a deep copy loses."""

    def __init__(self) -> None:
        self.patched = True

    def __deepcopy__(self, memo: dict) -> LossyCopy:
        return type(self).__new__(type(self))


def test_an_argument_whose_copy_differs_from_it_is_not_reported_mutated():
    def encode(tokenizer, texts):
        check_type(tokenizer, "tokenizer", LossyCopy)
        check_type(texts, "texts", list)
        return len(texts)

    variants = input_variants(encode, (LossyCopy(), ["a"]), {})
    assert [v.key for v in variants] == ["tokenizer:type", "texts:type"]
    assert run_battery(variants, {}, same=same) == []


def test_accepted_variants_are_skipped_and_stale_declarations_reported():
    _, failures = _failures(
        SilentSolver,
        accepts={"problem['X']:nan": "NaN means missing here", "X:gone": "no such argument"},
    )
    assert not any(f.startswith("problem['X']:nan") for f in failures)
    assert "X:gone: declared in accepts but no such variant" in failures


def test_an_error_from_deep_inside_torch_is_reported_with_its_origin():
    layer = torch.nn.Linear(2, 1)

    def explain(model, inputs):
        return model(inputs)

    variants = input_variants(explain, (layer, torch.ones(3, 2)), {})
    failures = run_battery(variants, {}, same=same)
    width = next(f for f in failures if f.startswith("inputs:width"))
    assert "raised RuntimeError from torch" in width


class Classifier:
    """A small trainer: fit checks X and y, predict checks fitted state and width."""

    def __init__(self, epochs: int = 1) -> None:
        self.epochs = epochs

    def fit(self, X, y):
        check_scalar(self.epochs, "epochs", "int", low=1)
        X = check_array(X, "X", ndim=2)
        y = check_array(y, "y", dtype="int", ndim=1)
        if len(X) != len(y):
            raise ValueError("X and y must have the same number of rows")
        self.means_ = np.stack([X[y == c].mean(0) for c in np.unique(y)])
        self.history_ = [{"epoch": 1}]
        return self

    def predict(self, X):
        check_is_fitted(self, "means_")
        X = check_array(X, "X", shape=(None, self.means_.shape[1]))
        return ((X[:, None] - self.means_) ** 2).sum(-1).argmin(1)


def test_the_trainer_battery_covers_fit_the_calls_after_it_and_before_it():
    pm = PluginManager(entry_points=False)
    pm.register_component("trainer", "c", Classifier)

    class Contract(TrainerContract):
        component = "c"
        bad_params = {"epochs": [0]}

    contract = Contract()
    X, y = np.random.default_rng(0).normal(size=(8, 3)), np.arange(8) % 2
    case = ((X, y), {})
    variants = contract.battery(pm, contract.make_instance(pm), case)
    keys = {v.key for v in variants}
    assert {"X:nan", "y:dtype", "predict:X:width", "predict:not-fitted", "epochs=0"} <= keys
    assert "X:width" not in keys  # fit data may have any width
    assert run_battery(variants, {}, same=same) == []


def test_the_explainer_contract_runs_the_battery(installed_pm):
    class Saliency:
        def explain(self, model, inputs, *, target=None):
            check_type(model, "model", torch.nn.Module)
            x = inputs if isinstance(inputs, torch.Tensor) else None
            if x is None:
                raise TypeError("inputs must be a tensor")
            return x

    installed_pm.register_component("explainer", "sal", Saliency)

    class Contract(ExplainerContract):
        component = "sal"

    contract = Contract()
    case = (torch.nn.Linear(2, 1), torch.ones(3, 2), {})
    with pytest.raises(AssertionError, match=r"inputs:nan: accepted without an error"):
        contract.test_bad_inputs_rejected(installed_pm, contract.make_instance(installed_pm), case)


def test_names_argument_matches_whole_words_only():
    assert names_argument("X holds NaN", "X") and names_argument("bad k=0", "k")
    assert not names_argument("Xs hold NaN", "X") and not names_argument("np.X", "X")
    assert names_argument("problem['X'] holds NaN", "problem")


def test_opaque_equals_its_copy():
    import copy

    o = Opaque()
    assert copy.deepcopy(o) == o and repr(o) == "<Opaque: a wrong type>"


def test_sparse_matrices_get_nan_inf_and_empty_variants():
    from scipy import sparse

    adjacency = sparse.csr_matrix(np.array([[0.0, 0.5], [0.25, 0.0]]))
    variants = dict(value_variants(adjacency, "graph"))
    assert set(variants) == {"graph:nan", "graph:inf", "graph:empty"}
    assert np.isnan(variants["graph:nan"].data[0]) and variants["graph:empty"].shape == (0, 0)
    assert adjacency.data.tolist() == [0.5, 0.25]  # the caller's matrix untouched


class Sampler(Classifier):
    """A trainer with a call after fit that takes its own parameter."""

    def sample(self, n: int, *, steps: int = 10):
        check_is_fitted(self, "means_")
        check_scalar(n, "n", "int", low=1)
        check_scalar(steps, "steps", "int", low=1)
        return np.repeat(self.means_[:1], n, axis=0)


def test_a_bad_parameter_of_a_call_after_fit_is_tried_there_and_an_unknown_one_is_an_error():
    pm = PluginManager(entry_points=False)
    pm.register_component("trainer", "sampler", Sampler)

    class Contract(TrainerContract):
        component = "sampler"
        bad_params = {"steps": [0, 1.5], "epochs": [0]}

        def fitted_calls(self, case):
            return {"sample": ((3,), {})}

    contract = Contract()
    X, y = np.random.default_rng(0).normal(size=(8, 3)), np.arange(8) % 2
    variants = contract.battery(pm, contract.make_instance(pm), ((X, y), {}))
    keys = {v.key for v in variants}
    assert {"sample:steps=0", "sample:steps=1.5", "epochs=0", "sample:n:type"} <= keys
    assert run_battery(variants, {}, same=same) == []
    Contract.bad_params = {"n_t": [0]}  # taken by nothing: passing vacuously would hide it
    with pytest.raises(AssertionError, match="bad_params names 'n_t', which neither the main call"):
        contract.battery(pm, contract.make_instance(pm), ((X, y), {}))


def test_objects_without_equality_are_compared_by_their_attributes():
    import copy

    class Processor:  # like a tokenizer or a model wrapper: no __eq__ of its own
        def __init__(self):
            self.vocab, self.parent = {"a": 1}, None

    p = Processor()
    p.parent = p  # a cycle
    q = copy.deepcopy(p)
    assert same(p, q)  # a deep copy is the same value
    q.vocab["b"] = 2
    assert not same(p, q)  # a mutated attribute is a change


def test_dataclasses_holding_a_module_are_compared_by_their_fields():
    import copy
    from dataclasses import dataclass

    import torch

    @dataclass
    class Victim:  # its generated __eq__ would compare the module by identity
        model: torch.nn.Module
        rows: list

    v = Victim(torch.nn.Linear(2, 1), [1, 2])
    w = copy.deepcopy(v)
    assert v != w and same(v, w)  # a deep copy is the same value
    with torch.no_grad():
        w.model.weight.add_(1.0)
    assert not same(v, w)  # a changed weight is a change


class UncheckedSolver(GoodSolver):
    """Checks its data but not its integer parameter k (int(2.5) is 2: a wrong result later)."""

    def solve(self, problem, *, seed=None):
        check_scalar(seed, "seed", "int", low=0, allow_none=True)
        check_type(problem, "problem", dict)
        return float(check_array(problem.get("X"), "problem['X']", ndim=2).sum()) * int(self.k)


def test_a_non_integer_and_a_wrong_type_are_read_off_a_parameter_no_contract_lists():
    _, failures = _failures(UncheckedSolver)
    text = "\n".join(failures)
    assert "k=2.5: accepted without an error" in text
    assert "k:type: TypeError does not name 'k'" in text  # int(Opaque()) names nothing


def _contract(solver_cls, **attributes):
    pm = PluginManager(entry_points=False)
    pm.register_component("solver", "s", solver_cls)
    contract = type("Contract", (SolverContract,), {"component": "s", **attributes})()
    case = ({"X": np.arange(6.0).reshape(3, 2)}, {})
    return pm, contract, case


class TwoParameterSolver(GoodSolver):
    def __init__(self, k: int = 2, tol: float = 0.1, verbose: bool = False) -> None:
        self.k, self.tol, self.verbose = k, tol, verbose


def test_a_contract_that_omits_a_parameter_fails_its_completeness_check():
    pm, contract, case = _contract(TwoParameterSolver, bad_params={"k": [0]})
    with pytest.raises(AssertionError, match=r"for: tol, seed\n"):  # k listed, verbose a flag
        contract.test_every_parameter_has_a_bad_value(pm, contract.make_instance(pm), case)
    pm, contract, case = _contract(
        TwoParameterSolver, bad_params={"k": [0]}, reasons={"tol": "any", "gone": "stale"}
    )
    with pytest.raises(AssertionError, match=r"gone \(a reason for no such parameter\)"):
        contract.test_every_parameter_has_a_bad_value(pm, contract.make_instance(pm), case)
    pm, contract, case = _contract(
        TwoParameterSolver, bad_params={"k": [0], "tol": [-1.0]}, reasons={"seed": "checked"}
    )
    contract.test_every_parameter_has_a_bad_value(pm, contract.make_instance(pm), case)


def test_nested_data_is_varied_in_every_pair_and_every_dict():
    X, y = np.zeros((3, 2)), np.arange(3)
    pairs = [(X, y), (X, y), (X, y)]
    variants = dict(value_variants(pairs, "train"))
    assert {"train[0][0]:nan", "train[0][1]:dtype", "train[0][1]:empty"} <= set(variants)
    assert {"train[1][0]:nan", "train[2][0]:nan", "train:empty"} <= set(variants)
    bad = variants["train[2][0]:nan"]
    assert np.isnan(bad[2][0][0, 0]) and not np.isnan(bad[1][0]).any() and type(bad[2]) is tuple
    assert not np.isnan(X).any()  # the caller's arrays untouched
    nested = dict(value_variants({"a": {"b": X}, "c": 1}, "problem"))
    assert "problem['a']['b']:inf" in nested and nested["problem['a']['b']:inf"]["c"] == 1


def test_a_long_list_gets_its_first_items_and_its_middle_and_last():
    keys = {k for k, _ in value_variants([np.zeros(2)] * 40, "xs")}
    assert {"xs[1]:nan", "xs[20]:nan", "xs[39]:nan"} <= keys and "xs[2]:nan" not in keys


def kth_power_sum(x, k: int = 2, *, scale: float = 1.0):
    """A public function that checks x but neither k nor scale."""
    x = check_array(x, "x", ndim=1)
    return float((x ** int(k)).sum() * scale)


def test_any_public_callable_gets_the_battery():
    from paperplug.testing import assert_rejects_bad_input

    with pytest.raises(AssertionError, match="no bad value or reason for k, scale"):
        assert_rejects_bad_input(kth_power_sum, (np.ones(3),))
    with pytest.raises(AssertionError, match="k=0: accepted") as info:
        assert_rejects_bad_input(
            kth_power_sum, (np.ones(3),), bad_params={"k": [0]}, reasons={"scale": "any"}
        )
    assert "k=2.5: accepted" in str(info.value) and "scale=nan: accepted" in str(info.value)

    def checked(x, k: int = 2, *, scale: float = 1.0):
        check_scalar(k, "k", "int", low=1)
        check_scalar(scale, "scale")
        return kth_power_sum(x, k, scale=scale)

    assert_rejects_bad_input(
        checked, (np.ones(3),), bad_params={"k": [0]}, reasons={"scale": "any real"}
    )


class SeededSampler(Classifier):
    """A trainer whose constructor and call after fit both take a seed."""

    def __init__(self, epochs: int = 1, seed: int = 0) -> None:
        super().__init__(epochs)
        self.seed = seed

    def fit(self, X, y):
        check_scalar(self.seed, "seed", "int", low=0)
        return super().fit(X, y)

    def sample(self, n: int, *, seed: int = 0, temperature: float = 1.0):
        check_is_fitted(self, "means_")
        check_scalar(n, "n", "int", low=1)
        check_scalar(seed, "seed", "int", low=0)
        check_scalar(temperature, "temperature", low=0, inclusive="neither")
        return np.repeat(self.means_[:1], n, axis=0)


def test_the_parameters_of_the_calls_after_fit_need_bad_values_and_are_tried_there():
    pm = PluginManager(entry_points=False)
    pm.register_component("trainer", "seeded", SeededSampler)

    class Contract(TrainerContract):
        component = "seeded"
        bad_params = {"epochs": [0], "seed": [-1]}  # the constructor's seed
        call_bad_params = {"seed": [-1, 0.5]}  # sample's own, though the constructor takes one

        def fitted_calls(self, case):
            return {"sample": ((3,), {"seed": 1})}

    contract = Contract()
    X, y = np.random.default_rng(0).normal(size=(8, 3)), np.arange(8) % 2
    case = ((X, y), {})
    with pytest.raises(AssertionError, match=r"for: temperature\n"):  # sample's, unlisted
        contract.test_every_parameter_has_a_bad_value(pm, contract.make_instance(pm), case)
    Contract.reasons = {"temperature": "any positive real"}
    contract.test_every_parameter_has_a_bad_value(pm, contract.make_instance(pm), case)
    variants = contract.battery(pm, contract.make_instance(pm), case)
    keys = {v.key for v in variants}
    assert {"seed=-1", "sample:seed=-1", "sample:seed=0.5", "sample:temperature=nan"} <= keys
    assert run_battery(variants, {}, same=same) == []
    Contract.call_bad_params = {"steps": [0]}  # taken by no call after fit
    with pytest.raises(AssertionError, match=r"call_bad_params names \['steps'\]"):
        contract.battery(pm, contract.make_instance(pm), case)


def test_a_public_callable_neither_swept_nor_listed_is_reported():
    import types

    from paperplug.testing import Sweep, public_callables, unswept

    def area(width: float, height: float) -> float:
        check_scalar(width, "width", low=0)
        return width * height  # height unchecked

    def version() -> str:
        return "1"

    def forward(*args, **kw):
        return area(*args, **kw)

    module = types.ModuleType("toy")
    module.area, module.version, module.Result, module.LIMIT = area, version, GoodSolver, 3
    module.forward = forward
    module.__all__ = ["LIMIT", "Result", "area", "forward", "version"]
    # no constant, nothing of no argument; *args and **kw are parameters
    assert public_callables(module) == ["Result", "area", "forward"]
    module.__dir__ = lambda: [*module.__all__, "version", "zeta"]  # PEP 562: an extra's names
    module.zeta = forward
    assert public_callables(module) == ["Result", "area", "forward", "zeta"]
    del module.__dir__, module.zeta
    module.__all__.remove("forward")
    assert unswept(module, [], {}) == ["Result", "area"]
    assert unswept(module, ["Result.solve", "area"], {}) == []
    assert unswept(module, ["area"], {"Result": "a result type", "gone": "?"}) == [
        "gone (no public callable)"
    ]
    assert unswept(module, ["area"], {"Result": " "}) == ["Result (listed with no reason)"]
    with pytest.raises(AssertionError, match=r"height=-1.0: accepted without an error"):
        Sweep(area, (2.0, 3.0), bad_params={"width": [-1.0], "height": [-1.0]}).run()
    with pytest.raises(AssertionError, match="the valid call fails: ValueError: width must be"):
        Sweep(area, (-2.0, 3.0), reasons={"width": "-", "height": "-"}).run()


def test_a_swept_call_that_draws_from_a_global_generator_fails_but_a_torch_module_may():
    from paperplug.testing import Sweep

    def noisy(x: np.ndarray) -> np.ndarray:
        check_data(x, "x")
        return x + np.random.normal(size=x.shape)  # the caller's global numpy generator

    def quiet(x: np.ndarray, seed: int = 0) -> np.ndarray:
        check_data(x, "x")
        check_scalar(seed, "seed", "int", low=0)
        return x + np.random.default_rng(seed).normal(size=x.shape)

    def torch_noise(n: int) -> torch.Tensor:
        check_scalar(n, "n", "int", low=1)
        return torch.rand(n)  # a function, not a module: the caller's torch generator

    class Net(torch.nn.Module):  # torch's idiom: initial weights from torch's generator
        def __init__(self, width: int) -> None:
            super().__init__()
            check_scalar(width, "width", "int", low=1)
            self.layer = torch.nn.Linear(width, 1)

    x = np.ones((3, 2))
    with pytest.raises(AssertionError, match=r"global random state \(numpy\)"):
        Sweep(noisy, (x,)).run()
    with pytest.raises(AssertionError, match=r"global random state \(torch\)"):
        Sweep(torch_noise, (3,), bad_params={"n": [0]}).run()
    Sweep(quiet, (x,), bad_params={"seed": [-1]}, width=False).run()
    Sweep(Net, (2,), bad_params={"width": [0]}).run()


def test_a_swept_call_that_changes_its_argument_fails_unless_declared_with_why():
    from paperplug.testing import Sweep

    def tally(counts: list, rng: np.random.Generator) -> int:
        check_type(counts, "counts", list)
        check_type(rng, "rng", np.random.Generator)
        counts.append(int(rng.integers(3)))  # the caller's list; the generator is drawn from
        return len(counts)

    def total(counts: list, rng: np.random.Generator) -> int:
        check_type(counts, "counts", list)
        check_type(rng, "rng", np.random.Generator)
        return len([*counts, int(rng.integers(3))])

    rng, why = np.random.default_rng(0), {"counts": "any list"}
    with pytest.raises(AssertionError, match=r"changed the caller's counts \("):
        Sweep(tally, ([1], rng), reasons=why).run()
    Sweep(tally, ([1], rng), reasons=why, mutates={"counts": "a tally it keeps"}).run()
    Sweep(total, ([1], rng), reasons=why).run()  # drawing from the generator is its purpose
    with pytest.raises(AssertionError, match=r"mutates names \['count'\]"):
        Sweep(total, ([1], rng), reasons=why, mutates={"count": "a typo"}).run()


def test_torch_generators_are_compared_by_their_state():
    import copy

    gen = torch.Generator().manual_seed(0)
    before = copy.deepcopy(gen)
    assert same(before, gen)
    torch.rand(1, generator=gen)
    assert not same(before, gen)
    rng = np.random.default_rng(0)
    kept = copy.deepcopy(rng)
    assert same(kept, rng)
    rng.random()
    assert not same(kept, rng)


def test_scipy_sparse_matrices_are_compared_by_their_values():
    import copy

    from scipy import sparse

    a = sparse.csr_matrix(np.array([[1.0, 0.0], [0.0, np.nan]]))
    b = copy.deepcopy(a)
    assert same(a, b)  # a deep copy is the same value (NaN equal to NaN)
    b[0, 1] = 2.0
    assert not same(a, b)
