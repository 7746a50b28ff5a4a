"""ChunkExplainer on the three activation sources: arrays, a torch module + layer name, and a
Hugging Face model given by path + hidden-state index; bad inputs rejected."""

import numpy as np
import pytest
import torch
from paperplug_chunking import ChunkExplainer
from paperplug_chunking.embedded import SymbolRNN, abcd_sequence
from transformers import GPT2Config, GPT2LMHeadModel

from paperplug import seeded_torch


def test_module_with_layer_name_equals_arrays():
    with seeded_torch(0):
        model = SymbolRNN()
    seq = torch.as_tensor(abcd_sequence(20, 0))
    by_hook = ChunkExplainer("dsc", layer="cell").explain(model, seq, target=seq.tolist())
    H = ChunkExplainer("dsc", layer="cell").activations(model, seq)
    by_array = ChunkExplainer("dsc").explain(None, H, target=seq.tolist())
    assert np.array_equal(by_hook.values, by_array.values)
    assert by_hook.meta["chunks"] and by_hook.meta["lookup"]


def test_hf_model_by_path(tmp_path):
    cfg = GPT2Config(
        vocab_size=20,
        n_positions=32,
        n_embd=16,
        n_layer=2,
        n_head=2,
        bos_token_id=None,
        eos_token_id=None,
    )
    with seeded_torch(0):
        GPT2LMHeadModel(cfg).save_pretrained(tmp_path)
    ids = np.arange(20) % 7
    ex = ChunkExplainer("pa", layer=2).explain(str(tmp_path), ids, target=np.arange(0, 20, 3))
    assert ex.values.shape == (20,) and ex.meta["method"] == "pa"


def test_bad_inputs():
    with pytest.raises(ValueError, match="method"):
        ChunkExplainer("sae")
    with pytest.raises(ValueError, match="target"):
        ChunkExplainer("pa").explain(None, np.zeros((10, 3)))
    with pytest.raises(ValueError, match=r"target must be token positions in \[0, 10\)"):
        ChunkExplainer("pa").explain(None, np.zeros((10, 3)), target=[2, 12])
    with pytest.raises(ValueError, match="inputs and target must have the same number of rows"):
        ChunkExplainer("dsc").explain(None, np.zeros((10, 3)), target=["a"] * 9)
    with pytest.raises(ValueError, match="inputs does not fit the model"):  # 4 neurons for 3
        ChunkExplainer("ucd", layer="").explain(torch.nn.Linear(3, 3), torch.zeros(4, 4))
    with pytest.raises(TypeError, match="layer"):
        ChunkExplainer("ucd").explain(torch.nn.Linear(3, 3), torch.zeros(4, 3))
    with pytest.raises(ValueError, match="not a module"):
        ChunkExplainer("ucd", layer="nope").explain(torch.nn.Linear(3, 3), torch.zeros(4, 3))
