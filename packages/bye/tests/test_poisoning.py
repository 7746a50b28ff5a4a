"""The triggers change exactly what they should; poisoning copies, never mutates."""

import copy

import numpy as np
import pytest
import torch
from paperplug_bye import BlendTrigger, PatchTrigger, TextTrigger, poison_dataset, synthetic_vqa

from paperplug.testing import same


def test_patch_trigger_is_one_checkerboard_patch():
    row = synthetic_vqa(1, seed=0)[0]
    out = PatchTrigger()(row)["image"]
    changed = (out != row["image"]).any(0)
    assert changed[:12].sum() == 0 and changed[:, :12].sum() == 0  # only the bottom-right 4x4 patch
    expected = torch.tensor(
        [[(i + j) % 2 for j in range(4)] for i in range(4)], dtype=torch.float32
    )
    for c in range(3):
        torch.testing.assert_close(out[c, 12:, 12:], expected)
    arr = PatchTrigger(size=2, corner="topleft")({**row, "image": row["image"].numpy()})["image"]
    assert isinstance(arr, np.ndarray) and arr[0, :2, :2].tolist() == [[0, 1], [1, 0]]


def test_blend_and_text_triggers():
    row = synthetic_vqa(1, seed=1)[0]
    a = BlendTrigger(alpha=0.2, seed=7)(row)["image"]
    b = BlendTrigger(alpha=0.6, seed=7)(row)["image"]
    pattern = (a - 0.8 * row["image"]) / 0.2  # the same fixed pattern under both alphas
    torch.testing.assert_close(b, 0.4 * row["image"] + 0.6 * pattern, atol=1e-5, rtol=0)
    assert TextTrigger("cf")(row)["question"] == row["question"] + " cf"
    assert TextTrigger("cf", "start")(row)["question"] == "cf " + row["question"]


def test_poison_dataset_rate_target_and_input_untouched():
    rows = synthetic_vqa(200, seed=2)
    before = copy.deepcopy(rows)
    out, idx = poison_dataset(rows, PatchTrigger(), poison_rate=0.1, target_answer="banana", seed=5)
    assert same(before, rows) and len(idx) == 20 and idx == sorted(set(idx))
    assert all(out[i]["answer"] == "banana" for i in idx)
    assert all(same(out[i], rows[i]) for i in range(200) if i not in idx)
    assert poison_dataset(rows, PatchTrigger(), poison_rate=0.1, seed=5)[1] == idx
    assert len(poison_dataset(rows, PatchTrigger(), poison_rate=0.1, max_poisoned=3)[1]) == 3
    with pytest.raises(ValueError, match="poison_rate"):
        poison_dataset(rows, PatchTrigger(), poison_rate=1.5)
    with pytest.raises(ValueError, match="image tensors must be"):
        PatchTrigger()({**rows[0], "image": torch.zeros(16, 16)})
