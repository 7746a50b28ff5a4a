"""The Explainer component and `explain_game`: pick the paper's estimator for the game at
hand (exact when enumeration is cheap, the cross-modal estimator for a dual encoder, the
joint sampled regression otherwise) and return an Explanation of kind "interaction"."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from paperplug import Explanation
from paperplug.checks import check_choice, check_scalar, check_seed, check_type
from paperplug_fixlip.estimators import (
    approximate,
    approximate_crossmodal,
    exact_fsii,
    exact_fwbii,
    small_side_floor,
    split_budget,
)
from paperplug_fixlip.game import DualEncoderGame, FunctionGame
from paperplug_fixlip.interactions import Interactions
from paperplug_fixlip.memory import (
    EXACT_BATCH,
    GIB,
    dual_fit_bytes,
    fmt_bytes,
    joint_fit_bytes,
    lookup_size,
)

EXACT_PASSES = 2**14  # enumerate a modality (or a joint game) up to this many coalitions
DEFAULT_PAIRS = 2**16  # the cross-modal budget in pairs when none is given
DEFAULT_JOINT = 2**11  # the joint budget in coalitions when none is given


def explain_game(
    value_fn: Callable[[np.ndarray], Any],
    n: int,
    *,
    p: float = 0.5,
    max_order: int = 2,
    mode: str = "banzhaf",
    budget: int | None = None,
    random_state: int | np.random.Generator | None = 0,
) -> Interactions:
    """FWBII (or FSII) of any cooperative game `value_fn(bool (m, n)) -> (m,)`: exact when
    2^n ≤ 16384 and no budget is given, else the sampled regression with the border trick."""
    return FIxLIP(
        p=p, max_order=max_order, mode=mode, budget=budget, random_state=random_state
    ).interactions(FunctionGame(value_fn, n))


class FIxLIP:
    """Faithful interaction explanations of a dual encoder's similarity (FWBII, order ≤ 2).

    `interactions`: "all" pairs, "crossmodal" (image × text pairs besides the first order:
    the paper's lookup for large patch grids) or "auto" (all pairs when the estimator's
    memory, estimated before anything is allocated, stays under `max_memory_gib`, else the
    image × text lookup with a warning). `budget`: pairs for a dual game (split by the
    paper's heuristic), coalitions for any other game; None means exact where cheap."""

    def __init__(
        self,
        p: float = 0.5,
        max_order: int = 2,
        mode: str = "banzhaf",
        interactions: str = "auto",
        budget: int | None = None,
        budget_a: int | None = None,
        budget_b: int | None = None,
        random_state: int | None = 0,
        max_memory_gib: float = 2.0,
    ) -> None:
        self.p, self.max_order, self.mode = p, max_order, mode
        self.interactions_ = None
        self.lookup_kind, self.budget = interactions, budget
        self.budget_a, self.budget_b, self.random_state = budget_a, budget_b, random_state
        if str(mode).lower() not in ("banzhaf", "shapley"):
            raise ValueError(f"mode must be 'banzhaf' or 'shapley', got {mode!r}")
        check_choice(interactions, "interactions", ("auto", "all", "crossmodal"))
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 < p < 1:
            raise ValueError(f"p must lie in (0, 1), got {p!r}")
        if max_order not in (1, 2):
            raise ValueError(f"max_order must be 1 or 2, got {max_order!r}")
        for name, value in (("budget", budget), ("budget_a", budget_a), ("budget_b", budget_b)):
            check_scalar(value, name, "int", low=1, allow_none=True)
        check_seed(random_state, "random_state")
        self.max_memory_gib = check_scalar(
            max_memory_gib, "max_memory_gib", "real", low=0, inclusive="neither"
        )

    def interactions(self, game: DualEncoderGame | FunctionGame) -> Interactions:
        """The Interactions of a game, with the estimator the settings call for, after
        checking its memory estimate against `max_memory_gib`."""
        check_type(game, "game", (DualEncoderGame, FunctionGame))
        limit = self.max_memory_gib * GIB
        dual = isinstance(game, DualEncoderGame)
        cross = self.lookup_kind == "crossmodal"
        run, size = self._estimator(game, cross=cross)
        if size > limit and self.lookup_kind == "auto" and dual and self.max_order == 2:
            cross_run, cross_size = self._estimator(game, cross=True)
            warnings.warn(
                f"the all-pairs lookup ({self._terms(game, False):,} terms) would need about "
                f"{fmt_bytes(size)} (> max_memory_gib={self.max_memory_gib:g}): fitting the "
                f"image x text lookup ({self._terms(game, True):,} terms, about "
                f"{fmt_bytes(cross_size)}) instead; pass interactions='crossmodal' to silence "
                "this, or a larger max_memory_gib for all pairs",
                UserWarning,
                stacklevel=3,
            )
            run, size, cross = cross_run, cross_size, True
        if size > limit:
            hints = ["max_order=1", "a larger max_memory_gib"]
            if dual and not cross:
                hints.insert(0, "interactions='crossmodal' (the image x text pairs)")
            if self.budget is not None or self.budget_a is not None:
                hints.insert(-1, "a smaller budget")
            what = "the image x text lookup" if cross else "the all-pairs lookup"
            raise ValueError(
                f"{what} ({self._terms(game, cross):,} terms on {game.n_players} players) would "
                f"need about {fmt_bytes(size)} of memory, over max_memory_gib="
                f"{self.max_memory_gib:g}; pass " + ", or ".join(hints)
            )
        return run()

    def _terms(self, game: DualEncoderGame | FunctionGame, cross: bool) -> int:
        n_a = game.n_a if isinstance(game, DualEncoderGame) else None
        return lookup_size(game.n_players, self.max_order, n_a=n_a, crossmodal_only=cross)

    def _estimator(
        self, game: DualEncoderGame | FunctionGame, *, cross: bool
    ) -> tuple[Callable[[], Interactions], int]:
        """The estimator the settings call for (not yet run) and its peak memory in bytes."""
        n, m = game.n_players, self._terms(game, cross)
        common = {"max_order": self.max_order, "crossmodal_only": cross}
        sampled = {"random_state": self.random_state, **common}
        if str(self.mode).lower() == "shapley":
            if self.budget is None and n <= 14:
                return partial(exact_fsii, game, self.max_order), joint_fit_bytes(m, 2**n)
            budget = self.budget or DEFAULT_JOINT
            run = partial(approximate, game, budget, mode="shapley", **sampled)
            return run, joint_fit_bytes(m, budget)
        if isinstance(game, DualEncoderGame):
            n_a, n_b = game.n_a, game.n_b
            if self.budget_a is not None or self.budget_b is not None:
                run = partial(
                    approximate_crossmodal,
                    game,
                    budget_a=self.budget_a,
                    budget_b=self.budget_b,
                    p=self.p,
                    **sampled,
                )
                rows_a, rows_b = self.budget_a or 1, self.budget_b or 1  # None raises on run
            elif self.budget is None and 2**n_a + 2**n_b <= 2 * EXACT_PASSES:
                run = partial(exact_fwbii, game, self.p, **common)
                rows_a, rows_b = 2**n_a, 2**n_b
            else:
                budget = self.budget or DEFAULT_PAIRS
                run = partial(approximate_crossmodal, game, budget, p=self.p, **sampled)
                floor = small_side_floor(n_a, n_b, self.max_order, cross)
                rows_a, rows_b = (
                    split_budget(budget, n_a, n_b, min_small=floor) if budget >= 4 else (1, 1)
                )
            rows_a, rows_b = min(rows_a, 2**n_a), min(rows_b, 2**n_b)
            size = dual_fit_bytes(
                n_a, n_b, rows_a, rows_b, max_order=self.max_order, crossmodal=cross
            )
            return run, size
        if self.budget is None and 2**n <= EXACT_PASSES:
            run = partial(exact_fwbii, game, self.p, **common)
            return run, joint_fit_bytes(m, 2**n, EXACT_BATCH)
        budget = self.budget or DEFAULT_JOINT
        run = partial(approximate, game, budget, p=self.p, **sampled)
        return run, joint_fit_bytes(m, budget)

    def explain(
        self, model: Any, inputs: Any = None, *, target: Any = None, **kw: Any
    ) -> Explanation:
        """Explain `model` on `inputs`:

        - a DualEncoderGame / FunctionGame (inputs ignored);
        - two encoder callables (encode_a, encode_b) with inputs (n_a, n_b);
        - a Hugging Face CLIPModel / SiglipModel with inputs {pixel_values, input_ids[, attention_mask]};
        - a value function with inputs n (any cooperative game).
        Values: baseline, first_order (n,), second_order (n, n); meta: the estimator's record."""
        from paperplug_fixlip.masking import clip_game

        if target is not None:
            raise ValueError("FIxLIP explains the pair's similarity; target must be None")
        if isinstance(model, (DualEncoderGame, FunctionGame)):
            game = model
        elif isinstance(model, (tuple, list)) and len(model) == 2 and all(map(callable, model)):
            if not isinstance(inputs, (tuple, list)) or len(inputs) != 2:
                raise ValueError("two encoders need inputs=(n_a, n_b), the players of each input")
            game = DualEncoderGame(model[0], model[1], *inputs, **kw)
        elif hasattr(model, "get_image_features"):
            if not isinstance(inputs, dict) or not {"pixel_values", "input_ids"} <= inputs.keys():
                raise ValueError(
                    "a CLIP-like model needs inputs={'pixel_values', 'input_ids'[, 'attention_mask']}"
                )
            game = clip_game(
                model,
                inputs["pixel_values"],
                inputs["input_ids"],
                inputs.get("attention_mask"),
                **kw,
            )
        elif callable(model):
            if isinstance(inputs, bool) or not isinstance(inputs, (int, np.integer)):
                raise ValueError("a value function needs inputs=n, the number of players")
            game = FunctionGame(model, inputs)
        else:
            raise TypeError(
                "model must be a game, a pair of encoders, a CLIP-like model or a value "
                f"function; got {type(model).__name__}"
            )
        result = self.interactions(game)
        self.interactions_ = result
        meta = {
            "index": result.index,
            "p": result.p,
            "max_order": result.max_order,
            "estimated": result.estimated,
            "n_coalitions": result.n_coalitions,
            "encoder_calls": result.encoder_calls,
            "empty_value": result.empty_value,
            "n_a": result.n_a,
            "names": result.names,
            "weighted_banzhaf_values": result.to_first_order(),
        }
        return Explanation(values=result.as_dict(), kind="interaction", meta=meta)
