"""Grafting: set and freeze on a sequence layer, exact by construction; the caller's model
is restored when the block ends."""

import numpy as np
import pytest
import torch
from paperplug_chunking import capture_activations, graft


class Seq(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = torch.nn.Identity()

    def forward(self, x):
        return self.inner(x) * 1.0


def test_set_and_freeze_exact():
    model, x = Seq(), torch.arange(24.0).reshape(1, 6, 4)
    mask = np.array([True, False, True, False])
    with graft(model, "inner", [-1.0, -2.0], mask=mask, positions=[1, 3]):
        out = model(x)
    expected = x.clone()
    for p in (1, 3):
        expected[0, p, 0], expected[0, p, 2] = -1.0, -2.0
    assert torch.equal(out, expected)
    with graft(model, "inner", mask=mask, positions=[2, 4, 5], freeze=True):
        out = model(x)
    assert torch.equal(out[0, [2, 4, 5]][:, [0, 2]], x[0, 2, [0, 2]].expand(3, 2))
    assert torch.equal(out[0, [2, 4, 5]][:, [1, 3]], x[0, [2, 4, 5]][:, [1, 3]])
    assert torch.equal(model(x), x)  # hook removed
    np.testing.assert_array_equal(capture_activations(model, x, "inner")["inner"], x[0].numpy())


def test_bad_inputs():
    with pytest.raises(ValueError, match="freeze"), graft(Seq(), "inner", [1.0], freeze=True):
        pass
    with pytest.raises(ValueError, match="not a module"), graft(Seq(), "outer", [1.0]):
        pass


def test_a_graft_that_does_not_fit_the_layer_is_named():
    """issue 33: a graft of the wrong width failed inside torch ("The expanded size...")."""
    model, x = Seq(), torch.arange(24.0).reshape(1, 6, 4)
    too_many = graft(model, "inner", [1.0, 2.0, 3.0], mask=[True, False, True, False])
    with pytest.raises(ValueError, match="values has 3 entries for the 2 neurons"), too_many:
        model(x)
    short_mask = graft(model, "inner", [1.0, 2.0], mask=[True, False, True])
    with (
        pytest.raises(ValueError, match="mask has 3 entries, layer 'inner' has 4 neurons"),
        short_mask,
    ):
        model(x)
    with pytest.raises(ValueError, match="values holds NaN"):
        graft(model, "inner", [np.nan, 1.0]).__enter__()
    assert torch.equal(model(x), x)  # every hook removed
