"""Real inputs (numpy, torch modules, a Hugging Face classifier from disk) and bad inputs rejected."""

import copy

import numpy as np
import pytest
import torch
from paperplug_adaptgrad import AdaptGrad, load_hf_classifier, pixel_bounds

from paperplug import seeded_torch
from paperplug.testing import assert_unchanged


def test_numpy_in_numpy_out_and_caller_data_untouched(cnn, digits_like):
    array = digits_like.numpy().copy()
    before = array.copy()
    values = AdaptGrad(n_samples=4).explain(cnn, array, target=0).values
    assert isinstance(values, np.ndarray) and values.shape == array.shape
    np.testing.assert_array_equal(array, before)


def test_float64_numpy_into_a_float32_model_is_cast(mlp):
    """Issue 14: a float64 array (numpy's default) into a float32 model raised torch's raw dtype
    error. It is cast to the model's dtype; the attributions come back as a float64 array."""
    X = np.random.default_rng(0).random((6, 5))
    assert X.dtype == np.float64 and next(mlp.parameters()).dtype == torch.float32
    values = AdaptGrad(n_samples=8).explain(mlp, X, target=1).values
    assert isinstance(values, np.ndarray) and values.dtype == np.float64
    as_float32 = AdaptGrad(n_samples=8).explain(mlp, torch.from_numpy(X).float(), target=1).values
    np.testing.assert_array_equal(values, as_float32.double().numpy())


def test_float32_inputs_into_a_float64_model(mlp):
    model = copy.deepcopy(mlp).double()
    x = torch.rand(4, 5, generator=torch.Generator().manual_seed(0))
    values = AdaptGrad(n_samples=4).explain(model, x, target=0).values
    assert values.dtype == torch.float32
    reference = AdaptGrad(n_samples=4).explain(model, x.double(), target=0).values
    torch.testing.assert_close(values, reference.float())


def test_inside_inference_mode_the_error_says_so(mlp):
    """Issue 14: inside torch.inference_mode() the error was torch's cryptic 'does not require grad'."""
    x = torch.rand(4, 5, generator=torch.Generator().manual_seed(0))
    with torch.inference_mode(), pytest.raises(RuntimeError, match="inference_mode"):
        AdaptGrad(n_samples=2).explain(mlp, x, target=0)
    with torch.no_grad():  # no_grad is fine: the gradients are taken under enable_grad
        inside = AdaptGrad(n_samples=2).explain(mlp, x, target=0).values
    torch.testing.assert_close(inside, AdaptGrad(n_samples=2).explain(mlp, x, target=0).values)


def test_inputs_made_under_inference_mode_are_explained_outside_it(mlp):
    with torch.inference_mode():
        x = torch.rand(4, 5, generator=torch.Generator().manual_seed(0))
    assert x.is_inference()
    values = AdaptGrad(n_samples=2).explain(mlp, x, target=0).values
    torch.testing.assert_close(
        values, AdaptGrad(n_samples=2).explain(mlp, x.clone(), target=0).values
    )


def test_model_on_another_device_is_named():
    model = torch.nn.Linear(5, 2, device="meta")
    with pytest.raises(ValueError, match="inputs are on cpu but the model's parameters on meta"):
        AdaptGrad().explain(model, torch.rand(2, 5, generator=torch.Generator().manual_seed(0)))


def test_target_defaults_to_the_predicted_class(cnn, digits_like):
    result = AdaptGrad(n_samples=4).explain(cnn, digits_like)
    assert result.meta["target"].tolist() == cnn(digits_like).argmax(1).tolist()


def test_user_defined_base_method(cnn, digits_like):
    """A callable base gets the smoothed gradient operator, like a method wrapped by NoiseTunnel."""
    squared = lambda gradient, x, targets: gradient(x, targets) ** 2  # noqa: E731
    got = AdaptGrad(n_samples=4, base=squared).explain(cnn, digits_like, target=1).values
    plain = AdaptGrad(n_samples=4).explain(cnn, digits_like, target=1).values
    torch.testing.assert_close(got, plain**2)


def test_hugging_face_classifier_by_path_with_per_channel_bounds(tmp_path):
    transformers = pytest.importorskip("transformers")
    config = transformers.ViTConfig(
        image_size=16, patch_size=8, num_channels=3, hidden_size=16, num_hidden_layers=1,
        num_attention_heads=2, intermediate_size=32, num_labels=3,
    )  # fmt: skip
    with seeded_torch(0):
        transformers.ViTForImageClassification(config).save_pretrained(tmp_path)
    mean, std = [0.5, 0.4, 0.3], [0.2, 0.25, 0.3]
    transformers.ViTImageProcessor(image_mean=mean, image_std=std).save_pretrained(tmp_path)

    model, (lo, hi) = load_hf_classifier(str(tmp_path))
    torch.testing.assert_close(lo, -torch.tensor(mean) / torch.tensor(std))
    torch.testing.assert_close(hi, (1 - torch.tensor(mean)) / torch.tensor(std))
    pixels = (
        torch.rand(2, 3, 16, 16, generator=torch.Generator().manual_seed(0))
        - torch.tensor(mean)[:, None, None]
    ) / torch.tensor(std)[:, None, None]

    vanilla = AdaptGrad(n_samples=0, bounds=(lo, hi)).explain(model, pixels, target=2).values
    x = pixels.clone().requires_grad_(True)
    (expected,) = torch.autograd.grad(model(pixel_values=x).logits[:, 2].sum(), x)
    torch.testing.assert_close(vanilla, expected)
    smoothed = AdaptGrad(n_samples=8, bounds=(lo, hi)).explain(model, pixels, target=2)
    assert smoothed.values.shape == pixels.shape
    assert (
        smoothed.meta["out_of_range_rate"] <= 0.05 + 4 * (0.05 * 0.95 / (8 * pixels.numel())) ** 0.5
    )
    with pytest.raises(ValueError, match="outside the stated bounds"):
        AdaptGrad(bounds=(0.0, 1.0)).explain(model, pixels)


def test_pixel_bounds_without_normalisation():
    class Plain:
        do_normalize = False

    assert [float(b) for b in pixel_bounds(Plain())] == [0.0, 1.0]


def returns_text(x):
    return "not logits"


@pytest.mark.parametrize(
    ("inputs", "kwargs", "error", "match"),
    [
        (torch.zeros(2, 1, 8, 8, dtype=torch.long), {}, TypeError, "floating point"),
        ([[0.0] * 64], {}, TypeError, "torch.Tensor or numpy"),
        (torch.zeros(64), {}, ValueError, r"inputs must be a batch \(batch, ...\)"),
        (torch.zeros(0, 1, 8, 8), {}, ValueError, "inputs is empty"),
        (torch.full((1, 1, 8, 8), float("nan")), {}, ValueError, "NaN"),
        (torch.full((1, 1, 8, 8), 2.0), {}, ValueError, "outside the stated bounds"),
        (torch.zeros(2, 1, 8, 8), {"target": [0, 1, 2]}, ValueError, "one per input"),
        (torch.zeros(2, 1, 8, 8), {"target": 9}, ValueError, "out of range for 4 classes"),
        (torch.zeros(2, 1, 8, 8), {"target": -1}, ValueError, "non-negative"),
        (torch.zeros(2, 1, 8, 8), {"target": 0.5}, TypeError, "target must hold integers"),
        (torch.zeros(2, 1, 8, 9), {}, ValueError, "inputs does not fit the model"),
        (torch.zeros(2, 1, 8, 8), {"bounds": ([0.0, 0.0], [1.0, 1.0])}, ValueError, "per-channel"),
    ],
)
def test_bad_inputs_are_rejected_and_left_untouched(cnn, inputs, kwargs, error, match):
    before = copy.deepcopy(inputs)
    with pytest.raises(error, match=match):
        AdaptGrad(n_samples=2).explain(cnn, inputs, **kwargs)
    assert_unchanged(before, inputs)


@pytest.mark.parametrize(
    ("explainer", "model", "match"),
    [
        (AdaptGrad(c=1.2), None, r"c must lie in \(0.0, 1.0\)"),
        (AdaptGrad(base="nope"), None, "base must be one of"),
        (AdaptGrad(n_samples=-1), None, "n_samples"),
        (AdaptGrad(batch_size=0), None, "batch_size"),
        (AdaptGrad(seed=1.5), None, "seed must be an int"),
        (AdaptGrad(), returns_text, "logits tensor"),
        (AdaptGrad(), "a string", "model must be"),
    ],
)
def test_bad_settings_are_rejected(cnn, digits_like, explainer, model, match):
    with pytest.raises((ValueError, TypeError), match=match):
        explainer.explain(cnn if model is None else model, digits_like, target=0)
