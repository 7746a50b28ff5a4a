"""The result: interaction values in the lookup's order, with the paper's views of them
(first order, the image × text matrix, top pairs), the conversion to weighted Banzhaf values
(§3: WBV_i = φ_i + p Σ_j φ_ij) and an export to shapiq's InteractionValues."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from paperplug.extras import requires_extra
from paperplug_fixlip.lookup import Interaction, design_matrix


@dataclass
class Interactions:
    """φ_S for every S of `lookup` (index "FWBII" with its p, or "FSII"); players 0..n_a-1
    are the first modality (image patches), n_a..n-1 the second (text tokens)."""

    values: np.ndarray
    lookup: list[Interaction]
    n_players: int
    index: str = "FWBII"
    p: float | None = 0.5
    n_a: int | None = None
    estimated: bool = True
    n_coalitions: int = 0
    encoder_calls: int = 0
    empty_value: float = 0.0
    names: list[str] | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.values = np.asarray(self.values, dtype=float)
        self._position = {s: k for k, s in enumerate(self.lookup)}

    def __getitem__(self, subset: Interaction) -> float:
        """φ_S (0 for a subset outside the lookup)."""
        k = self._position.get(tuple(sorted(subset)))
        return 0.0 if k is None else float(self.values[k])

    @property
    def max_order(self) -> int:
        return max(len(s) for s in self.lookup)

    @property
    def baseline(self) -> float:
        return self[()]

    @property
    def first_order(self) -> np.ndarray:
        """φ_i, shape (n,)."""
        return np.array([self[(i,)] for i in range(self.n_players)])

    @property
    def second_order(self) -> np.ndarray:
        """φ_ij as a symmetric (n, n) matrix, zero diagonal."""
        out = np.zeros((self.n_players, self.n_players))
        for s, k in self._position.items():
            if len(s) == 2:
                out[s[0], s[1]] = out[s[1], s[0]] = self.values[k]
        return out

    @property
    def cross_matrix(self) -> np.ndarray:
        """φ_ij for i in the first modality, j in the second: shape (n_a, n - n_a)."""
        if self.n_a is None:
            raise ValueError("cross_matrix needs two modalities (n_a is None)")
        return self.second_order[: self.n_a, self.n_a :]

    def predict(self, coalitions: np.ndarray) -> np.ndarray:
        """The additive surrogate Σ_{S⊆T} φ_S for each row T (bool (m, n))."""
        return design_matrix(np.asarray(coalitions, dtype=bool), self.lookup) @ self.values

    def to_first_order(self) -> np.ndarray:
        """Weighted Banzhaf values WBV_i = Σ_{S∋i} p^{|S|-1} φ_S (Shapley: 1/|S| in place of
        p^{|S|-1}); for the exact FWBII this equals the game's own WBV (tested)."""
        out = np.zeros(self.n_players)
        for s, k in self._position.items():
            if not s:
                continue
            share = 1.0 / len(s) if self.index == "FSII" else float(self.p) ** (len(s) - 1)
            for i in s:
                out[i] += share * self.values[k]
        return out

    def top_pairs(self, k: int = 5, *, crossmodal: bool = True) -> list[tuple[int, int, float]]:
        """The k second-order terms largest in value (cross-modal pairs only by default)."""
        pairs = [
            (s[0], s[1], float(self.values[j]))
            for s, j in self._position.items()
            if len(s) == 2 and (not crossmodal or self.n_a is None or (s[0] < self.n_a <= s[1]))
        ]
        return sorted(pairs, key=lambda t: -t[2])[:k]

    def as_dict(self) -> dict[str, Any]:
        """The Explanation's values: baseline, first order (n,), second order (n, n)."""
        return {
            "baseline": self.baseline,
            "first_order": self.first_order,
            "second_order": self.second_order,
        }

    def to_shapiq(self) -> Any:
        """A shapiq.InteractionValues (shapiq's plots then apply); needs `pip install shapiq`."""
        try:
            with requires_extra("paperplug-fixlip", "shapiq", "Interactions.to_shapiq"):
                import shapiq
        except ImportError as err:  # pragma: no cover - depends on the environment
            raise ImportError("to_shapiq needs shapiq: pip install shapiq") from err
        iv = shapiq.InteractionValues(
            values=self.values.copy(),
            index="FBII" if self.index == "FWBII" else self.index,
            max_order=self.max_order,
            n_players=self.n_players,
            min_order=0,
            interaction_lookup={s: k for k, s in enumerate(self.lookup)},
            estimated=self.estimated,
            estimation_budget=self.n_coalitions,
            baseline_value=self.baseline,
        )
        return iv
