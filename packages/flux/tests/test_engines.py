"""The Flower App (`app.py`) under `flwr run`: on a deployment of a local SuperLink and two
SuperNodes on loopback, started here as subprocesses, and on Flower's simulation engine (Ray,
`simulate`). Each run equals the in-process run of the same clients and seed (up to the order
in which float updates are summed), and under the simulation engine a client that raises
fails the run with its error.

These start real Flower processes (every ClientApp task is a process of its own on a
deployment; Ray starts a cluster), so they are the slowest tests of the suite: 2 clients,
2 rounds, one local epoch each."""

import numpy as np
import pytest
from helpers import LOCAL, Boom, tiny_clients
from paperplug_flux import FLUX, LocalSuperLink, save_client_data, simulate, write_app
from paperplug_flux.embedded import LATENT_LAYER, make_mlp

RUN = {**LOCAL, "local_epochs": 1, "rounds": 2, "max_warmup_rounds": 1}


@pytest.fixture(scope="module")
def clients():
    return tiny_clients(2)


@pytest.fixture(scope="module")
def in_process(clients):
    return FLUX(make_mlp, LATENT_LAYER, 10, **RUN).fit(*clients)


def _same_run(engine: FLUX, reference: FLUX) -> None:
    np.testing.assert_array_equal(engine.labels_, reference.labels_)
    np.testing.assert_allclose(engine.descriptors_, reference.descriptors_, rtol=1e-4, atol=1e-5)
    assert [h["phase"] for h in engine.history_] == ["warmup", "clustered"]
    for k, model in reference.cluster_models_.items():
        for name, w in model.state_dict().items():
            got = engine.cluster_models_[k].state_dict()[name]
            np.testing.assert_allclose(got.numpy(), w.numpy(), rtol=1e-4, atol=1e-5)


def test_a_deployment_of_supernodes_on_loopback_runs_the_flower_app(clients, in_process, tmp_path):
    train, test = clients
    data = [save_client_data(tmp_path / f"node-{i}.npz", *train[i], *test[i]) for i in range(2)]
    app = write_app(
        tmp_path / "app",
        model="paperplug_flux.embedded:make_mlp",
        latent_layer=LATENT_LAYER,
        n_classes=10,
        output_dir=tmp_path / "run",
        num_rounds=RUN["rounds"],
        min_nodes=2,
        **{k: v for k, v in RUN.items() if k != "rounds"},
    )
    with LocalSuperLink() as link:  # flower-superlink --insecure on a free loopback port
        configs = [{"partition-id": i, "data-path": str(p)} for i, p in enumerate(data)]
        link.run_on_supernodes(app, tmp_path / "run", configs)
    served = FLUX.from_run(tmp_path / "run", make_mlp, input_shape=(64,))
    _same_run(served, in_process)
    assert served.assign(test[1][0]) == in_process.assign(test[1][0])


def test_the_simulation_engine_runs_the_same_app(clients, in_process):
    sim = simulate(make_mlp, LATENT_LAYER, 10, *clients, num_cpus=1, **RUN)
    _same_run(sim, in_process)


def test_under_the_simulation_engine_a_client_that_raises_fails_the_run(clients):
    with pytest.raises(RuntimeError, match="boom: client data is corrupt"):
        simulate(Boom, "net.latent", 10, *clients, num_cpus=1, **RUN)
