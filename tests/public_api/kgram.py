"""KGram's public API: one valid call of each callable, for the battery (the construction on a
vocabulary of 3 at k = 2, a small Markov transformer, a few chains)."""

from __future__ import annotations

import numpy as np
import paperplug_kgram as g
import torch

from paperplug.testing import Sweep

REASONS = {
    "KGramConfig": "swept through KGramTransformer, which builds it (its own parameters: **kw)",
    "MarkovICLTrainer": "the Trainer role's contract sweeps it (packages/kgram/tests/test_contract.py)",
}
CONSTRUCTION = {"base": [2.0, 1.5], "alpha": [-0.1], "beta": [0.0]}


def sweeps() -> dict[str, Sweep]:
    X = np.random.default_rng(1).integers(0, 3, size=(2, 12))
    model = g.KGramTransformer(3, 2, max_len=16)
    attention = torch.softmax(torch.randn(12, 12, generator=torch.Generator().manual_seed(0)), -1)
    return {
        "KGramConstruction": Sweep(g.KGramConstruction, bad_params=CONSTRUCTION),
        "KGramConstruction.solve": Sweep(
            g.KGramConstruction().solve,
            ({"vocab_size": 3, "k": 2, "sequences": np.array([[0, 1, 2, 1, 0, 2]])},),
            {"seed": 0},
            bad_params={
                "problem": [
                    {"vocab_size": 3},
                    {"vocab_size": 1, "k": 2},
                    {"vocab_size": 3, "k": 0},
                    {"vocab_size": 3, "k": 2, "sequences": np.array([[0, 5]])},
                ],
                "seed": [-1],
            },
            width=False,  # sequences of any length
        ),
        "KGramTransformer.relative_bias": Sweep(
            model.relative_bias,
            (5, torch.float32, torch.device("cpu")),
            bad_params={"n": [0], "dtype": [torch.int64], "device": ["no-such-device"]},
        ),
        "KGramForCausalLM": Sweep(
            g.KGramForCausalLM, (g.KGramConfig(vocab_size=3, k=2, max_len=16),)
        ),
        "KGramTransformer": Sweep(
            g.KGramTransformer,
            (3, 2),
            {"max_len": 16},
            bad_params={
                "vocab_size": [1, 0],
                "k": [0, -1],
                **CONSTRUCTION,
                "max_len": [0],
                "dtype": ["float64"],
            },
        ),
        "MarkovTransformer": Sweep(
            g.MarkovTransformer,
            (3, 1, 8, 16),
            bad_params={"vocab_size": [1], "n_layers": [0], "d_model": [0], "max_len": [0]},
        ),
        "bayes_nll": Sweep(
            g.bayes_nll,
            (X, 3, 2),
            bad_params={"vocab_size": [1], "k": [0], "alpha": [-1.0]},
            width=False,
        ),
        "code_margin": Sweep(g.code_margin, (4.0, 2), bad_params={"base": [2.0, 1.5], "k": [0]}),
        "conditional_kgram": Sweep(
            g.conditional_kgram,
            (X, 3, 2),
            bad_params={"vocab_size": [1, 2], "k": [0], "alpha": [-1.0]},
            width=False,
        ),
        "matching_mass": Sweep(
            g.matching_mass,
            (attention[None], torch.as_tensor(X[:1]), 2),
            bad_params={"k": [0, 12]},
            width=False,
        ),
        "sample_chains": Sweep(
            g.sample_chains,
            (2, 12, 3, 2),
            {"rng": np.random.default_rng(0)},
            bad_params={
                "n_sequences": [0],
                "length": [0],
                "vocab_size": [1],
                "k": [-1],
                "alpha": [0.0],
            },
        ),
        "unigram_nll": Sweep(
            g.unigram_nll, (X, 3), bad_params={"vocab_size": [1, 2], "alpha": [-1.0]}, width=False
        ),
        "verify": Sweep(g.verify, (model, X), width=False),
    }
