"""Real inputs (numpy arrays, tensors, torch Datasets, any module with a named latent layer)
and bad inputs rejected at the door with the caller's data untouched."""

import copy

import numpy as np
import pytest
import torch
from helpers import LOCAL, tiny_clients
from paperplug_flux import FLUX
from paperplug_flux.embedded import LATENT_LAYER, make_mlp

QUICK = {"rounds": 2, "max_warmup_rounds": 1, **LOCAL}


class PairDataset(torch.utils.data.Dataset):
    def __init__(self, x, y):
        self.x, self.y = x, y

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return torch.tensor(self.x[i]), int(self.y[i])


def test_torch_datasets_tensors_and_arrays_give_the_same_run():
    train, test = tiny_clients(3)
    as_arrays = FLUX(make_mlp, LATENT_LAYER, 10, **QUICK).fit(train, test)
    as_datasets = FLUX(make_mlp, LATENT_LAYER, 10, **QUICK).fit(
        [PairDataset(x, y) for x, y in train], test
    )
    as_tensors = FLUX(make_mlp, LATENT_LAYER, 10, **QUICK).fit(
        [(torch.tensor(x), torch.tensor(y)) for x, y in train], test
    )
    np.testing.assert_array_equal(as_arrays.descriptors_, as_datasets.descriptors_)
    np.testing.assert_array_equal(as_arrays.descriptors_, as_tensors.descriptors_)


def test_any_module_with_a_named_latent_layer():
    class ConvNet(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(1, 4, 3, padding=1)
            self.pool = torch.nn.AdaptiveAvgPool2d(2)
            self.head = torch.nn.Linear(16, 10)

        def forward(self, x):
            z = self.pool(torch.relu(self.conv(x.view(-1, 1, 8, 8)))).flatten(1)
            return self.head(z)

    train, test = tiny_clients(3)
    flux = FLUX(ConvNet, "pool", 10, **QUICK).fit(train, test)
    assert flux.descriptors_.shape == (3, 2 * 10 * 11)  # 16-d latents, projected to d_p = 10
    assert flux.predict(test[0][0]).shape == (len(test[0][0]),)


def test_inputs_are_untouched():
    train, test = tiny_clients(3)
    before = copy.deepcopy((train, test))
    FLUX(make_mlp, LATENT_LAYER, 10, **QUICK).fit(train, test)
    for (a, b), (c, d) in zip(before[0] + before[1], train + test, strict=True):
        np.testing.assert_array_equal(a, c)
        np.testing.assert_array_equal(b, d)


@pytest.mark.parametrize(
    ("mutate", "error", "match"),
    [
        (lambda tr: tr[:1], ValueError, r"train_sets must hold at least 2"),
        (
            lambda tr: [(np.where(tr[0][0] > 0.5, np.nan, tr[0][0]), tr[0][1]), *tr[1:]],
            ValueError,
            r"train_sets\[0\]\[0\] holds NaN",
        ),
        (
            lambda tr: [(tr[0][0], tr[0][1][:-1]), *tr[1:]],
            ValueError,
            r"train_sets\[0\]\[0\] and train_sets\[0\]\[1\] must have the same number of rows",
        ),
        (lambda tr: [(tr[0][0], tr[0][1] + 10), *tr[1:]], ValueError, r"labels in \[0, 10\)"),
        (lambda tr: [(tr[0][0][:, :10], tr[0][1]), *tr[1:]], ValueError, "share one shape"),
        (lambda tr: [tr[0][0], *tr[1:]], TypeError, r"train_sets\[0\] must be an \(X, y\) pair"),
        (lambda tr: tr[0], TypeError, "train_sets must be a list"),
    ],
)
def test_bad_client_data_is_rejected(mutate, error, match):
    train, _test = tiny_clients(3)
    with pytest.raises(error, match=match):
        FLUX(make_mlp, LATENT_LAYER, 10, **QUICK).fit(mutate(train))


def test_bad_model_and_settings_are_rejected():
    train, test = tiny_clients(3)
    with pytest.raises(ValueError, match="latent_layer 'hidden' is not a submodule"):
        FLUX(make_mlp, "hidden", 10, **QUICK).fit(train)
    with pytest.raises(TypeError, match=r"model_fn\(\) must be a torch nn\.Module"):
        FLUX(lambda: "not a model", LATENT_LAYER, 10, **QUICK).fit(train)
    with pytest.raises(ValueError, match="train_sets and test_sets must have the same number"):
        FLUX(make_mlp, LATENT_LAYER, 10, **QUICK).fit(train, test[:2])
    with pytest.raises(ValueError, match="lr must be > 0"):
        FLUX(make_mlp, LATENT_LAYER, 10, **{**QUICK, "lr": -1.0}).fit(train)
    with pytest.raises(ValueError, match="train_sets does not fit the model"):
        FLUX(make_mlp, LATENT_LAYER, 10, **QUICK).fit([(x[:, :60], y) for x, y in train])


def test_calls_after_fit_name_their_bad_argument():
    """The issue's examples: `assign(X)` with the wrong feature width ended in torch's "mat1
    and mat2 shapes cannot be multiplied"; before fit, NotFittedError."""
    from paperplug.checks import NotFittedError

    train, test = tiny_clients(3)
    with pytest.raises(NotFittedError):
        FLUX(make_mlp, LATENT_LAYER, 10).assign(test[0][0])
    flux = FLUX(make_mlp, LATENT_LAYER, 10, **QUICK).fit(train, test)
    x, y = test[0]
    with pytest.raises(ValueError, match=r"X must have samples of shape \(64\) .* got \(65,\)"):
        flux.assign(np.c_[x, x[:, :1]])
    with pytest.raises(ValueError, match=r"X must have samples of shape \(64\)"):
        flux.predict(x[:, :63])
    with pytest.raises(ValueError, match=r"y must hold labels in \[0, 10\)"):
        flux.score(x, y + 10)
    with pytest.raises(ValueError, match="X and y must have the same number of rows"):
        flux.score(x, y[:-1])
    with pytest.raises(ValueError, match="cluster must lie in"):
        flux.predict(x, cluster=flux.n_clusters_)


def test_rounds_that_leave_no_round_to_cluster_in_are_rejected_before_any_round(monkeypatch):
    """One round, or a warm-up that cannot end before the last round, used to run every round
    and then fail ("the warm-up never ended"); a plateau can end it from round 3."""
    import paperplug_flux.trainer as trainer

    train, test = tiny_clients(3)

    class RoundRan(Exception):
        pass

    def first_round(*args, **kwargs):
        raise RoundRan

    monkeypatch.setattr(trainer, "run_strategy", first_round)
    with pytest.raises(ValueError, match="rounds must be >= 2"):
        FLUX(make_mlp, LATENT_LAYER, 10, **{**QUICK, "rounds": 1}).fit(train, test)
    for rounds, warmup in ((3, 3), (3, 8), (2, 2)):
        with pytest.raises(ValueError, match=f"rounds={rounds} leaves no round to cluster in"):
            FLUX(
                make_mlp,
                LATENT_LAYER,
                10,
                **{**QUICK, "rounds": rounds, "max_warmup_rounds": warmup},
            ).fit(train)
    with pytest.raises(RoundRan):  # a plateau at round 3 may end the warm-up
        FLUX(make_mlp, LATENT_LAYER, 10, **{**QUICK, "rounds": 4, "max_warmup_rounds": 8}).fit(
            train
        )


def test_save_client_data_returns_the_file_numpy_wrote(tmp_path):
    from paperplug_flux import save_client_data

    (x, y), (xt, yt) = tiny_clients(1)[0][0], tiny_clients(1)[1][0]
    out = save_client_data(tmp_path / "node-0", x, y, xt, yt)  # numpy adds ".npz"
    assert out == tmp_path / "node-0.npz" and out.is_file()
    with np.load(out) as npz:
        np.testing.assert_array_equal(npz["X_test"], xt)
    with pytest.raises(ValueError, match="y_test is None"):
        save_client_data(tmp_path / "node-1.npz", x, y, xt)


def test_a_missing_run_is_a_file_not_found_and_a_value_error(tmp_path):
    from paperplug_flux import load_run

    for error in (FileNotFoundError, ValueError):
        with pytest.raises(error, match=r"directory .* holds no FLUX run"):
            load_run(tmp_path)


def test_the_superlink_checks_a_run_before_starting_it(tmp_path):
    """`flwr run` starts processes for tens of seconds: its arguments are checked first."""
    from paperplug_flux import LocalSuperLink, write_app

    link = LocalSuperLink()
    with pytest.raises(ValueError, match=r"app_dir .* holds no Flower App"):
        link.run_app(tmp_path, tmp_path / "run")
    with pytest.raises(ValueError, match=r"app_dir .* holds no Flower App"):
        link.run_on_supernodes(tmp_path, tmp_path / "run", [{"data-path": "x.npz"}])
    app = write_app(tmp_path / "app", model="paperplug_flux.embedded:make_mlp",
                    latent_layer=LATENT_LAYER, n_classes=10, output_dir=tmp_path / "run")  # fmt: skip
    with pytest.raises(ValueError, match="timeout must be > 0"):
        link.flwr_run(app, timeout=0)
    with pytest.raises(TypeError, match="run_config must be a mapping"):
        link.flwr_run(app, run_config=["num-rounds=2"])
    with pytest.raises(RuntimeError, match="the SuperLink is not running"):
        link.run_app(app, tmp_path / "run")
