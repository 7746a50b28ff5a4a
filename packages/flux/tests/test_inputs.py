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
