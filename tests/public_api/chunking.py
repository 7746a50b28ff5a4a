"""The chunking package's public API: one valid call of each callable, for the battery (a
planted 2-neuron activation sequence, a tiny two-layer net, a one-layer GPT-2 built from a
config)."""

from __future__ import annotations

import numpy as np
import paperplug_chunking as c
import torch
from transformers import GPT2Config, GPT2LMHeadModel

from paperplug import seeded_torch
from paperplug.testing import Sweep

REASONS = {
    "Template": "a result type (what pa_template returns)",
}


def _net() -> torch.nn.Module:
    with seeded_torch(0):
        return torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.ReLU(), torch.nn.Linear(6, 5))


def _gpt2() -> torch.nn.Module:
    config = GPT2Config(vocab_size=10, n_positions=16, n_embd=8, n_layer=1, n_head=2)
    with seeded_torch(0):
        return GPT2LMHeadModel(config).eval()


def sweeps() -> dict[str, Sweep]:
    rng = np.random.default_rng(0)
    H = rng.normal(size=(40, 3))
    positions = np.arange(2, 40, 6)
    H[positions] = [2.0, -1.0, 0.5]  # the planted chunk
    states = np.tile([0, 1, 2, 0, 1, 3], 5)
    net, x = _net(), torch.as_tensor(rng.normal(size=(1, 5, 4)), dtype=torch.float32)
    template = c.pa_template(H, positions[:3], 0.5)
    dsc = c.DiscreteSequenceChunker(n_bins=2, min_freq=2).fit(H[:, :2], list("ab" * 20))
    explainer = c.ChunkExplainer()
    pa = c.PopulationAveraging(n_train=3, taus=(0.5, 1.0)).fit(H, positions)
    ucd = c.UnsupervisedChunkDiscovery(n_chunks=2, epochs=2).fit(H)
    labels = np.zeros(40, dtype=bool)
    labels[positions] = True
    stack = np.stack([H, H])
    return {
        "capture_activations": Sweep(
            c.capture_activations, (net, x, ["0", "2"]), bad_params={"layers": [[], ["9"], "9"]}
        ),
        "hf_hidden_states": Sweep(
            c.hf_hidden_states,
            (_gpt2(), np.array([1, 2, 3])),
            bad_params={"inputs": [np.array([1, 99])], "model": ["no/such/model"]},
            reasons={"tokenizer": "any Hugging Face tokenizer (a text input needs one)"},
            width=False,
        ),
        "load_hf_model": Sweep(c.load_hf_model, (net,), bad_params={"name_or_path": [""]}),
        "neuron_bins": Sweep(
            c.neuron_bins, (H, 2), bad_params={"n_bins": [0], "seed": [-1]}, width=False
        ),
        "assign_bins": Sweep(
            c.assign_bins, (H[:, :2], c.neuron_bins(H[:, :2], 2)[1]), bad_params={"centres": [[]]}
        ),
        "state_ids": Sweep(c.state_ids, (c.neuron_bins(H, 2)[0],), width=False),
        "merge_chunks": Sweep(
            c.merge_chunks,
            (states,),
            {"min_freq": 2},
            bad_params={"n_iter": [-1], "top_k": [0], "min_freq": [0]},
        ),
        "lookup_table": Sweep(
            c.lookup_table, (states, list("abcabd" * 5)), bad_params={"symbols": [["a"]]}
        ),
        "DiscreteSequenceChunker": Sweep(
            c.DiscreteSequenceChunker,
            (2,),
            bad_params={
                "n_bins": [0],
                "n_iter": [-1],
                "top_k": [0],
                "min_freq": [0],
                "max_neurons": [0],
                "seed": [-1],
            },
        ),
        "DiscreteSequenceChunker.fit": Sweep(
            c.DiscreteSequenceChunker(n_bins=2, min_freq=2).fit,
            (H[:, :2], list("ab" * 20)),
            bad_params={"symbols": [["a"]]},
            width=False,
        ),
        "DiscreteSequenceChunker.transform": Sweep(dsc.transform, (H[:, :2],)),
        "DiscreteSequenceChunker.decode": Sweep(dsc.decode, (H[:, :2],)),
        "DiscreteSequenceChunker.centre_state": Sweep(
            dsc.centre_state, (0,), bad_params={"state": [-1, 10**6]}
        ),
        "negatives_threshold": Sweep(
            c.negatives_threshold,
            (rng.random(20), 0.1),
            bad_params={"fpr": [-0.1, 1.0]},
            accepts={"deviations:inf": "an empty subpopulation deviates by +inf everywhere"},
        ),
        "token_positions": Sweep(
            c.token_positions,
            (positions, 40),
            bad_params={"positions": [[40], [-1]], "n": [0], "name": [""]},
        ),
        "pa_template": Sweep(
            c.pa_template,
            (H, positions[:3], 0.5),
            bad_params={"tau": [0.0], "train_positions": [[40]]},
            width=False,
        ),
        "pa_deviation": Sweep(c.pa_deviation, (H, template)),
        "detection_rates": Sweep(c.detection_rates, (labels.copy(), labels)),
        "sweep_auc": Sweep(
            c.sweep_auc,
            ([0.1, 0.5], [0.6, 0.9]),
            bad_params={"fprs": [[0.1], [1.5]], "tprs": [[-0.5, 0.9]]},
        ),
        "PopulationAveraging": Sweep(
            c.PopulationAveraging,
            (3,),
            bad_params={
                "n_train": [0],
                "offset": [3],
                "taus": [[], [0.0]],
                "seed": [-1],
                "threshold": ["mean"],
                "fpr": [1.0],
            },
        ),
        "PopulationAveraging.fit": Sweep(
            c.PopulationAveraging(n_train=3, taus=(0.5, 1.0)).fit,
            (H, positions),
            bad_params={"positions": [[40], [3]]},
            width=False,
        ),
        "PopulationAveraging.decision_function": Sweep(pa.decision_function, (H,)),
        "PopulationAveraging.predict": Sweep(pa.predict, (H,)),
        "PopulationAveraging.evaluate": Sweep(
            pa.evaluate, (H, positions), bad_params={"positions": [[40]]}
        ),
        "pa_layers": Sweep(
            c.pa_layers,
            (stack, positions),
            {"test_states": stack, "test_positions": positions, "n_train": 3, "taus": (0.5,)},
            bad_params={"test_states": [stack[:1]], "n_train": [0]},
            width=False,
        ),
        "UnsupervisedChunkDiscovery": Sweep(
            c.UnsupervisedChunkDiscovery,
            (2,),
            bad_params={
                "n_chunks": [0],
                "lr": [0.0],
                "batch_size": [0],
                "epochs": [0],
                "n_init": [0],
                "seed": [-1],
                "device": ["gpu9"],
            },
        ),
        "UnsupervisedChunkDiscovery.fit": Sweep(
            c.UnsupervisedChunkDiscovery(n_chunks=2, epochs=2).fit, (H,), width=False
        ),
        "UnsupervisedChunkDiscovery.predict": Sweep(ucd.predict, (H,)),
        "UnsupervisedChunkDiscovery.score": Sweep(ucd.score, (H,)),
        "cosine_objective": Sweep(c.cosine_objective, (H, H[:2])),
        "graft": Sweep(
            c.graft,
            (net, "0", np.ones(6)),
            {"positions": [1]},
            bad_params={"layer": ["9"], "positions": [[-1]]},
            reasons={
                "mask": "fits the layer's width, known as it runs (grafting_effect sweeps it)"
            },
            accepts={
                "values:empty": "fits a mask of no neurons; checked against the layer as it runs"
            },
        ),
        "grafting_effect": Sweep(
            c.grafting_effect,
            (net, x, "0", np.ones(6)),
            {"position": 1, "target": 2},
            bad_params={
                "position": [-1, 5],
                "target": [-1, 5],
                "layer": ["9"],
                "mask": [np.ones(5, dtype=bool)],
            },
        ),
        "next_symbol_probs": Sweep(
            c.next_symbol_probs, (net, x, 1), bad_params={"position": [-1, 5]}
        ),
        "ChunkExplainer.activations": Sweep(
            explainer.activations, (None, H), bad_params={"model": ["a model"]}, width=False
        ),
    }
