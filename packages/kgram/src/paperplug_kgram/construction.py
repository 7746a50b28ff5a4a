"""The explicit two-layer transformer, one head per layer, that computes the in-context
conditional k-gram estimator for any vocabulary size S and order k (paper §3, Theorem 1).

This ships our construction (attention → MLP → attention, verified to ~1e-12 in float64);
the paper's own, with LayerNorm, could not be retrieved here (see the README).

Residual stream of width 4S + 6 (tokens are preceded by a BOS sink at position 0):
    tok (S) one-hot token │ bos │ const │ key_ok │ query_ok │ code c (S) │ Q (S) │ K (S) │ |Q|² │ |K|²

1. Layer 1 (attention, relative bias −m·ln B on offsets m = 0..k): position i averages the
   one-hot tokens x_{i−m} with weights ∝ B^{−m}; scaled back, c_i = Σ_{m=0..k} B^{−m} e_{x_{i−m}},
   an injective base-B code of the window (B > 2).
2. MLP (exact ReLU interpolation, coordinate-wise on the finite set of code values):
   Q_i = c_i − B^{−k} e_{x_{i−k}} (the last k tokens), K_i = B·(c_i − e_{x_i}) (the k tokens
   before i), and their squared norms.
3. Layer 2 (attention, score β·(2⟨Q_n, K_i⟩ − |K_i|²) = β·(|Q_n|² − |Q_n − K_i|²)): keys whose
   window equals the query's score |Q_n|², all others at least β·δ less (δ the smallest
   squared distance between two codes); the BOS sink scores |Q_n|² + ln(S·α)/β (α > 0: the
   add-α estimate exactly) or |Q_n|² − δ/2 (α = 0: uniform when nothing matches). Values:
   one-hot x_i, uniform for the sink. The output is the predicted distribution.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from paperplug import seeded_torch
from paperplug.checks import check_device, check_scalar, check_type
from paperplug_kgram.estimator import check_tokens, conditional_kgram

MASK = 1e4  # a score offset that no softmax weight survives (times β ≥ 1)


@dataclass(frozen=True)
class Layout:
    """Where each feature lives in the residual stream."""

    S: int

    def span(self, name: str) -> slice:
        S = self.S
        sizes = {"tok": S, "bos": 1, "const": 1, "key_ok": 1, "query_ok": 1, "c": S, "Q": S,
                 "K": S, "q2": 1, "k2": 1}  # fmt: skip
        start = 0
        for key, size in sizes.items():
            if key == name:
                return slice(start, start + size)
            start += size
        raise KeyError(name)

    @property
    def width(self) -> int:
        return 4 * self.S + 6


def code_table(base: float, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every value v(M) = Σ_{m∈M} B^{−m} a coordinate of a window code c can take (M ⊆ 0..k),
    sorted, with q(M) = v − B^{−k}·[k ∈ M] (drop the oldest token) and h(M) = B·(v − [0 ∈ M])
    (drop the newest token, shift): the maps the MLP interpolates."""
    rows = []
    for r in range(k + 2):
        for M in itertools.combinations(range(k + 1), r):
            v = sum(base ** (-m) for m in M)
            rows.append(
                (v, v - (base ** (-k) if k in M else 0.0), base * (v - (1.0 if 0 in M else 0.0)))
            )
    v, q, h = map(np.array, zip(*sorted(rows), strict=True))
    if np.any(np.diff(v) <= 0):
        raise ValueError(f"base {base} does not give an injective code for k={k}")
    return v, q, h


def _check_base(base: float) -> None:
    if check_scalar(base, "base") <= 2:
        raise ValueError(
            f"base must be > 2 for the window code to be injective with a margin, got {base}"
        )


def check_code(base: float, alpha: float, beta: float | None) -> None:
    """The construction's code base B > 2, its smoothing α >= 0 and its β > 0 (or None)."""
    _check_base(base)
    check_scalar(alpha, "alpha", low=0)
    check_scalar(beta, "beta", low=0, inclusive="neither", allow_none=True)


def code_margin(base: float, k: int) -> float:
    """δ: the smallest squared distance between two different k-token codes (digits 0..k−1):
    they differ in at least two coordinates, each by at least B^{−(k−1)}·(B−2)/(B−1)."""
    _check_base(base)
    check_scalar(k, "k", "int", low=1)
    return 2 * (base ** (-(k - 1)) * (base - 2) / (base - 1)) ** 2


class KGramTransformer(nn.Module):
    """The construction as a torch module: `forward(x)` maps token ids (batch, T) to the
    predicted next-token distributions (batch, T, S); `attention_maps` keeps both layers'
    attention weights of the last call."""

    def __init__(
        self,
        vocab_size: int,
        k: int,
        *,
        base: float = 4.0,
        alpha: float = 0.0,
        beta: float | None = None,
        max_len: int = 4096,
        dtype: torch.dtype = torch.float64,
    ) -> None:
        super().__init__()
        check_scalar(vocab_size, "vocab_size", "int", low=2)
        check_scalar(k, "k", "int", low=1)
        check_scalar(max_len, "max_len", "int", low=1)
        check_code(base, alpha, beta)
        check_type(dtype, "dtype", torch.dtype)
        self.S, self.k, self.base, self.alpha = int(vocab_size), int(k), float(base), float(alpha)
        self.margin = code_margin(self.base, self.k)
        self.beta = float(beta) if beta is not None else 60.0 / self.margin
        self.layout = Layout(self.S)
        L, S, d = self.layout, self.S, self.layout.width
        table = code_table(self.base, self.k)  # the values one code coordinate takes
        with seeded_torch(0):  # the layers' random init is overwritten; the caller's RNG is kept
            self.embed = nn.Embedding(S + 1, d, dtype=dtype)  # token ids 0..S−1, S = BOS
            self.position = nn.Embedding(max_len + 1, d, dtype=dtype)
            self.attn1_value = nn.Linear(d, d, bias=False, dtype=dtype)
            self.mlp_in = nn.Linear(d, S * len(table[0]), dtype=dtype)
            self.mlp_out = nn.Linear(S * len(table[0]), d, bias=False, dtype=dtype)
            self.attn2_value = nn.Linear(d, S, bias=False, dtype=dtype)
        with torch.no_grad():
            for p in self.parameters():
                p.zero_()
            self._set_embeddings(L)
            self.attn1_value.weight[L.span("c"), L.span("tok")] = torch.eye(S, dtype=dtype) * sum(
                self.base ** (-m) for m in range(self.k + 1)
            )
            self._set_mlp(L, table)
            self._set_attention2(L)
        self.requires_grad_(False)  # a construction, not a model to train
        self.attention_maps: list[torch.Tensor] = []

    # -- weights -------------------------------------------------------------------------
    def relative_bias(self, n: int, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
        """Layer 1's scores (n, n): −m·ln B for keys m = 0..k positions back (BOS excluded),
        −inf elsewhere. Computed per call, not stored, so that loading a checkpoint (which
        builds the module on the meta device) cannot leave it empty."""
        check_scalar(n, "n", "int", low=1)
        check_type(dtype, "dtype", torch.dtype)
        if not dtype.is_floating_point:
            raise ValueError(f"dtype must be a floating-point dtype, got {dtype}")
        device = check_device(device)
        offset = torch.arange(n, device=device)[:, None] - torch.arange(n, device=device)[None, :]
        bias = -offset.to(dtype) * math.log(self.base)
        keep = (offset >= 0) & (offset <= self.k) & (torch.arange(n, device=device)[None, :] > 0)
        keep[0, 0] = True  # BOS attends to itself (its output is unused)
        return bias.masked_fill(~keep, float("-inf"))

    def _set_embeddings(self, L: Layout) -> None:
        S = self.S
        self.embed.weight[:S, L.span("tok")] = torch.eye(S, dtype=self.embed.weight.dtype)
        self.embed.weight[S, L.span("bos")] = 1.0
        self.embed.weight[:, L.span("const")] = 1.0
        n = self.position.weight.shape[0]
        pos = torch.arange(n)  # position 0 is BOS; token j (0-based) sits at position j + 1
        self.position.weight[:, L.span("key_ok").start] = (pos >= self.k + 1).to(
            self.embed.weight.dtype
        )
        self.position.weight[:, L.span("query_ok").start] = (pos >= self.k).to(
            self.embed.weight.dtype
        )

    def _set_mlp(self, L: Layout, table: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
        """Per code coordinate s, hidden units ReLU(c_s − v_j) over the sorted code values v_j;
        output weights interpolate q, h (K's coordinate), q² and h² exactly at those values."""
        points, q, h = table
        S, P = self.S, len(points)
        c0 = L.span("c").start
        for s in range(S):
            rows = slice(s * P, (s + 1) * P)
            self.mlp_in.weight[rows, c0 + s] = 1.0
            self.mlp_in.bias[rows] = torch.as_tensor(-points)
            for target, values in (("Q", q), ("K", h), ("q2", q**2), ("k2", h**2)):
                col = L.span(target).start + (s if target in ("Q", "K") else 0)
                slopes = np.diff(values) / np.diff(points)
                jumps = np.diff(np.concatenate([[0.0], slopes]))  # slope changes at v_0..v_{P−2}
                self.mlp_out.weight[col, rows.start : rows.start + P - 1] += torch.as_tensor(jumps)

    def _set_attention2(self, L: Layout) -> None:
        """Query/key blocks, each a dot product: [Q]·[2K]; [1]·[−|K|² + sink·bos];
        [|Q|²]·[bos]; [−MASK·(1 − query_ok)]·[1 − bos]; [1]·[−MASK·(1 − key_ok − bos)].
        The masks sit in blocks of their own so that no large number is added to and
        subtracted from a small score (float64 would lose the small one)."""
        S, dtype, n = self.S, self.attn2_value.weight.dtype, self.S + 4
        Wq = torch.zeros(n, L.width, dtype=dtype)
        Wk = torch.zeros(n, L.width, dtype=dtype)
        Wq[:S, L.span("Q")] = torch.eye(S, dtype=dtype)
        Wk[:S, L.span("K")] = 2 * torch.eye(S, dtype=dtype)
        sink = math.log(S * self.alpha) / self.beta if self.alpha > 0 else -self.margin / 2
        Wq[S, L.span("const")] = 1.0
        Wk[S, L.span("k2")] = -1.0
        Wk[S, L.span("bos")] = sink
        Wq[S + 1, L.span("q2")] = 1.0
        Wk[S + 1, L.span("bos")] = 1.0
        Wq[S + 2, L.span("query_ok")] = MASK  # a query without k tokens of context ...
        Wq[S + 2, L.span("const")] = -MASK
        Wk[S + 2, L.span("const")] = 1.0  # ... sees every token key at −MASK
        Wk[S + 2, L.span("bos")] = -1.0
        Wq[S + 3, L.span("const")] = 1.0
        Wk[S + 3, L.span("key_ok")] = MASK  # a key without a complete window is masked
        Wk[S + 3, L.span("bos")] = MASK
        Wk[S + 3, L.span("const")] = -MASK
        self.attn2_query = nn.Linear(L.width, n, bias=False, dtype=dtype, device="meta")
        self.attn2_key = nn.Linear(L.width, n, bias=False, dtype=dtype, device="meta")
        self.attn2_query.weight, self.attn2_key.weight = nn.Parameter(Wq), nn.Parameter(Wk)
        self.attn2_value.weight[:, L.span("tok")] = torch.eye(S, dtype=dtype)
        self.attn2_value.weight[:, L.span("bos")] = 1.0 / S

    # -- forward -------------------------------------------------------------------------
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Next-token distributions (batch, T, S) for token ids x (batch, T)."""
        x = torch.as_tensor(x)
        if x.dim() != 2 or x.dtype not in (torch.int64, torch.int32):
            raise ValueError(
                f"x must be token ids of shape (batch, T), got {x.dtype} {tuple(x.shape)}"
            )
        if x.numel() and (x.min() < 0 or x.max() >= self.S):
            raise ValueError(f"token ids must lie in 0..{self.S - 1}")
        batch, T = x.shape
        if self.position.weight.shape[0] < T + 1:
            raise ValueError(f"sequences longer than max_len={self.position.weight.shape[0] - 1}")
        ids = torch.cat([torch.full((batch, 1), self.S, dtype=torch.long, device=x.device), x], 1)
        h = self.embed(ids) + self.position.weight[: T + 1]  # (batch, T+1, d)
        bias = self.relative_bias(T + 1, h.dtype, h.device)
        weights1 = torch.softmax(bias, -1).expand(batch, -1, -1)  # (batch, T+1, T+1)
        h = h + weights1 @ self.attn1_value(h)
        h = h + self.mlp_out(torch.relu(self.mlp_in(h)))
        scores = self.beta * self.attn2_query(h) @ self.attn2_key(h).transpose(1, 2)
        causal = torch.ones(T + 1, T + 1, dtype=torch.bool, device=x.device).tril()
        weights2 = torch.softmax(scores.masked_fill(~causal, float("-inf")), -1)
        self.attention_maps = [weights1[:, 1:], weights2[:, 1:]]
        return (weights2 @ self.attn2_value(h))[:, 1:]  # drop the BOS row

    @property
    def mlp_width(self) -> int:
        return self.mlp_in.out_features


def verify(model: KGramTransformer, x: object) -> float:
    """max |construction − estimator| over every position of the sequences `x`."""
    check_type(model, "model", KGramTransformer)
    tokens = check_tokens(x, model.S, model.k, "x")
    tokens = tokens[None] if tokens.ndim == 1 else tokens
    with torch.no_grad():
        got = model(torch.as_tensor(tokens)).double().numpy()
    want = conditional_kgram(tokens, model.S, model.k, model.alpha)
    return float(np.abs(got - want).max())
