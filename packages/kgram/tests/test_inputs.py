"""Bad inputs are refused at the door, naming what is wrong."""

import numpy as np
import pytest
from paperplug_kgram import (
    KGramConstruction,
    KGramTransformer,
    MarkovICLTrainer,
    conditional_kgram,
    sample_chains,
)


def test_bad_inputs():
    with pytest.raises(ValueError, match=r"x must hold ids in 0\.\.2"):
        conditional_kgram(np.array([0, 3]), 3, 1)
    with pytest.raises(TypeError, match="integers"):
        conditional_kgram(np.array([0.5, 1.0]), 3, 1)  # whole-number floats are token ids
    with pytest.raises(ValueError, match="k must be"):
        conditional_kgram(np.array([0, 1]), 3, 0)
    with pytest.raises(ValueError, match="vocab_size"):
        conditional_kgram(np.array([0, 1]), 1, 1)
    with pytest.raises(ValueError, match="alpha"):
        conditional_kgram(np.array([0, 1]), 2, 1, alpha=-1)
    with pytest.raises(ValueError, match="base must be > 2"):
        KGramTransformer(2, 1, base=2.0)
    with pytest.raises(ValueError, match=r"shape \(batch, T\)"):
        KGramTransformer(2, 1)(np.zeros(3))
    with pytest.raises(TypeError, match="'vocab_size' and 'k'"):
        KGramConstruction().solve({"k": 1})
    with pytest.raises(ValueError, match="length > k"):
        sample_chains(4, 1, 2, 1)
    with pytest.raises(ValueError, match="lr must be"):
        MarkovICLTrainer(lr=0).fit()
    with pytest.raises(ValueError, match="steps must be"):
        MarkovICLTrainer(steps=0).fit()
