"""The demo's sweep asks each compressor for a k it computes exactly: no "gives n features,
not k" warning, and the same features as the nominal k computed before (the README's table
stands)."""

import warnings

import numpy as np
import pytest
import torch
from paperplug_grass import GradientFeatures
from paperplug_grass.demo import asked_k, jobs
from paperplug_grass.embedded import mlp
from paperplug_grass.factored import FACTORED, exact_k


def test_the_demos_sweep_asks_for_what_each_compressor_computes():
    model, rng = mlp(0), np.random.default_rng(0)
    X = torch.as_tensor(rng.random((6, 64)), dtype=torch.float32)
    y = torch.as_tensor(rng.integers(0, 10, 6))
    asked = {}
    for kind, k in jobs():
        asked[kind, k] = asked_k(kind, k, model)
        if kind not in FACTORED:
            assert asked[kind, k] == k
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # the demo's run: no warning
            now = GradientFeatures(kind, asked[kind, k], seed=1)(model, X, y)
        with pytest.warns(UserWarning, match=rf"{kind} gives {asked[kind, k]} features, not k={k}"):
            nominal = GradientFeatures(kind, k, seed=1)(model, X, y)
        assert now.shape == (6, asked[kind, k]) and torch.equal(now, nominal)
    # 3 linear layers: k split in 3 (FactGraSS), each share as ⌊√·⌋ × ⌊·/⌊√·⌋⌋ (LoGra)
    assert [asked["factgrass", k] for k in (256, 1024, 4096)] == [255, 1023, 4095]
    assert [asked["logra", k] for k in (256, 1024, 4096)] == [243, 972, 3996]


@pytest.mark.parametrize("kind", FACTORED)
@pytest.mark.parametrize("layers", [1, 2, 3, 7])
def test_exact_k_is_what_the_compressor_computes(kind, layers):
    from paperplug_grass import FactoredCompressor

    shapes = [(40, 30)] * layers
    for k in (7, 50, 100, 257):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fitted = FactoredCompressor(kind, k).fit(shapes)
        assert sum(fitted.blocks) == exact_k(kind, k, layers)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # asked for it: exact, no warning
            assert sum(FactoredCompressor(kind, exact_k(kind, k, layers)).fit(shapes).blocks) == (
                exact_k(kind, k, layers)
            )
