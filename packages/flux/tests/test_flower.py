"""The in-process Flower grid: the pinned internals it touches, determinism, a client that
raises. The simulation engine and a deployment: test_engines.py."""

import subprocess
import sys
from pathlib import Path

import flwr
import numpy as np
import pytest
import torch
from flwr.supercore.task_identity import TaskIdentity
from helpers import LOCAL, Boom, assert_same_state, tiny_clients
from paperplug_flux import FLUX, LocalGrid, make_client_app
from paperplug_flux.data import federated_tensors
from paperplug_flux.embedded import LATENT_LAYER, make_mlp


def test_flower_is_the_pinned_minor_release_with_the_internals_the_grid_sets():
    assert flwr.__version__.startswith("1.42."), (
        "LocalGrid touches TaskIdentity: re-check it before moving the pin"
    )
    for name in ("run_id", "node_id", "task_id"):
        assert isinstance(getattr(type(TaskIdentity), name), property)
    app = make_client_app(
        make_mlp,
        federated_tensors(tiny_clients(2)[0], "t"),
        None,
        latent_layer=LATENT_LAYER,
        n_classes=10,
    )
    saved = (TaskIdentity._run_id, TaskIdentity._node_id, TaskIdentity._task_id)
    with LocalGrid(app, 2) as grid:
        assert TaskIdentity.run_id == 1 and TaskIdentity.node_id == 0
        assert list(grid.get_node_ids()) == [1, 2]
    assert (TaskIdentity._run_id, TaskIdentity._node_id, TaskIdentity._task_id) == saved


def _fit(seed):
    train, test = tiny_clients(4, seed=3)
    return FLUX(make_mlp, LATENT_LAYER, 10, rounds=3, max_warmup_rounds=1, seed=seed, **LOCAL).fit(
        train, test
    )


def test_same_seed_same_run_under_the_in_process_grid():
    a, b = _fit(0), _fit(0)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    np.testing.assert_array_equal(a.descriptors_, b.descriptors_)
    assert [h["accuracy"] for h in a.history_] == [h["accuracy"] for h in b.history_]
    for k in a.cluster_models_:
        assert_same_state(a.cluster_models_[k].state_dict(), b.cluster_models_[k].state_dict())
    c = _fit(1)
    assert not torch.equal(
        c.global_model_.state_dict()["fc1.weight"], a.global_model_.state_dict()["fc1.weight"]
    )


def _fingerprint(flux) -> str:
    w = flux.global_model_.state_dict()["fc1.weight"]
    return f"{flux.labels_.tolist()} {flux.descriptors_.sum():.12e} {float(w.double().sum()):.12e}"


def test_same_seed_same_run_in_a_new_process():
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); import torch; torch.set_num_threads(1);"
        "from test_flower import _fit, _fingerprint; print(_fingerprint(_fit(0)))"
    )
    here = str(Path(__file__).parent)
    out = subprocess.run(
        [sys.executable, "-c", code, here], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip().splitlines()[-1] == _fingerprint(_fit(0))


def test_a_client_that_raises_fails_the_run_with_its_error():
    train, test = tiny_clients(4)
    with pytest.raises(RuntimeError, match="boom: client data is corrupt"):
        FLUX(Boom, "net.latent", 10, rounds=2, max_warmup_rounds=1).fit(train, test)


def test_the_strategy_enters_a_local_grid_it_is_given_unentered():
    """`strategy.start(grid=LocalGrid(...))` without `with` used to fail in Flower ("TaskIdentity.run_id
    is not set"); the grid is entered for the run and left as it was."""
    from flwr.app import ArrayRecord
    from paperplug_flux import FluxStrategy

    train = federated_tensors(tiny_clients(2)[0], "t")
    app = make_client_app(make_mlp, train, None, latent_layer=LATENT_LAYER, n_classes=10)
    grid, strategy = LocalGrid(app, 2), FluxStrategy(n_classes=10, max_warmup_rounds=1)
    saved = (TaskIdentity._run_id, TaskIdentity._node_id, TaskIdentity._task_id)
    strategy.start(grid=grid, initial_arrays=ArrayRecord(make_mlp().state_dict()), num_rounds=2)
    assert [h["phase"] for h in strategy.history] == ["warmup", "clustered"]
    assert not grid.active
    assert (TaskIdentity._run_id, TaskIdentity._node_id, TaskIdentity._task_id) == saved
