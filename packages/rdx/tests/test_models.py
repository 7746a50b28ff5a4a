"""Representations read from two torch models by layer name; the digits story."""

import numpy as np
import pytest
import torch
from paperplug_rdx import RDX, layer_features


def test_layer_features_read_a_named_layer_and_leave_the_model_as_it_was():
    with torch.random.fork_rng():
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    model.train()
    x = np.random.default_rng(0).normal(size=(5, 4)).astype(np.float32)
    features = layer_features(model, x, "1")
    expected = torch.relu(model[0](torch.as_tensor(x))).detach().numpy()
    assert np.allclose(features, expected, atol=1e-6) and model.training
    with pytest.raises(ValueError, match="no layer 'body'"):
        layer_features(model, x, "body")


def shows_merge(grid, labels):
    """A grid of 3s and 5s only, at least two of each: the planted merge, and nothing else."""
    counts = np.bincount(labels[grid], minlength=10)
    return set(labels[grid].tolist()) == {3, 5} and min(counts[3], counts[5]) >= 2


@pytest.fixture(scope="module")
def digits():
    from paperplug_rdx.embedded import digits_pair

    return digits_pair(seed=0, n_items=300)


def test_the_relabelled_model_merges_3_and_5_in_the_digits_story(digits):
    explanation = RDX().explain(digits.models, digits.inputs, layer="3")
    grids = explanation.values["1_over_0"]
    assert grids and np.mean([shows_merge(g, digits.labels) for g in grids]) >= 0.5
    assert not any(shows_merge(g, digits.labels) for g in explanation.values["0_over_1"])


def test_inputs_the_model_cannot_take_are_named():
    with torch.random.fork_rng():
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    x = np.zeros((6, 5), dtype=np.float32)  # five features for a model of four
    with pytest.raises(ValueError, match="inputs does not fit the model"):
        RDX().explain((model, model), x, layer="1")
    with pytest.raises(ValueError, match="inputs holds NaN"):
        RDX().explain((model, model), np.full((6, 4), np.nan), layer="1")
    with pytest.raises(TypeError, match="model must be a pair"):
        RDX().explain(model, x[:, :4], layer="1")
