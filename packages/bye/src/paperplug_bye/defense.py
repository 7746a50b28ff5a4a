"""BYE as a train_data Defense (paper Alg. 1), and stage 5: the filtered dataset."""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from paperplug.roles import Verdict
from paperplug_bye.attention import AttentionExtractor, ImageTokenMask
from paperplug_bye.clustering import Clustering, cluster_suspicious
from paperplug_bye.entropy import entropy_matrix
from paperplug_bye.profiling import (
    LayerProfile,
    SeparationTest,
    Variant,
    check_entropy,
    profile_layers,
)
from paperplug_bye.prompting import PROMPT_TEMPLATE, check_rows

NO_SENSITIVE_LAYER = "no sensitive layer: no layer's entropy is bimodal, so BYE removed nothing"


@dataclass
class Detection:
    """One variant's outcome: its layer profile and, when a layer is sensitive, the clustering."""

    profile: LayerProfile
    clustering: Clustering | None

    @property
    def removed(self) -> list[int]:
        return [] if self.clustering is None else np.flatnonzero(self.clustering.flags).tolist()


def detect(
    entropy: np.ndarray,
    *,
    variant: Variant = "paper",
    separation: float = 2.0,
    min_weight: float = 0.02,
    direction: Literal["low", "minority"] = "low",
    test: SeparationTest = "paper",
    standardize: bool | None = None,
    seed: int = 0,
) -> Detection:
    """Stages 3-4 on a (samples, layers) entropy matrix: profile the layers, cluster the scores."""
    profile = profile_layers(
        entropy, separation=separation, variant=variant, seed=seed, min_weight=min_weight,
        test=test,
    )  # fmt: skip
    if not profile.sensitive:
        return Detection(profile, None)
    clustering = cluster_suspicious(
        entropy, profile.sensitive, variant=variant, direction=direction,
        standardize=standardize, seed=seed,
    )  # fmt: skip
    return Detection(profile, clustering)


def filter_dataset(dataset: Sequence[Any], removed: Sequence[int]) -> tuple[Any, list[int]]:
    """Stage 5: the kept rows in order (a `select` view for Hugging Face datasets) and their indices."""
    drop = {int(i) for i in removed}
    if drop and not 0 <= min(drop) <= max(drop) < len(dataset):
        raise ValueError(f"removed indices out of range 0..{len(dataset) - 1}")
    kept = [i for i in range(len(dataset)) if i not in drop]
    if hasattr(dataset, "select") and not isinstance(dataset, (list, tuple)):
        return dataset.select(kept), kept
    return [dataset[i] for i in kept], kept


class BYE:
    """Believe Your Eyes: drop the fine-tuning rows whose image-token attention entropy collapsed.

    The fine-tuned model (and its processor) come from the constructor, `fit(model, processor)`,
    or the `check` context keys "model" / "processor"; a precomputed (samples, layers) matrix
    can come as context["entropy"]. Both variants are always computed and reported; `variant`
    picks the one that filters ("paper" by default, "robust" opt-in). `test` ("paper" or
    "ashman") and `standardize` (None: z-scores under the robust variant only) apply to both.
    """

    stage = "train_data"
    name = "bye"

    def __init__(
        self,
        model: Any = None,
        processor: Any = None,
        *,
        variant: Variant = "paper",
        separation: float = 2.0,
        min_weight: float = 0.02,
        direction: Literal["low", "minority"] = "low",
        test: SeparationTest = "paper",
        standardize: bool | None = None,
        relative: bool = False,
        seed: int = 0,
        template: str = PROMPT_TEMPLATE,
        image_token_mask: ImageTokenMask | None = None,
        batch_size: int = 16,
    ) -> None:
        if variant not in ("paper", "robust"):
            raise ValueError(f"variant must be 'paper' or 'robust', got {variant!r}")
        self.model, self.processor, self.variant = model, processor, variant
        if test not in ("paper", "ashman"):
            raise ValueError(f"test must be 'paper' or 'ashman', got {test!r}")
        self.separation, self.min_weight, self.direction = separation, min_weight, direction
        self.test, self.standardize = test, standardize
        self.relative, self.seed, self.template = relative, seed, template
        self.image_token_mask, self.batch_size = image_token_mask, batch_size

    def fit(self, model: Any, processor: Any = None) -> BYE:
        """Set the fine-tuned model whose attention BYE reads (and its processor)."""
        self.model, self.processor = model, processor if processor is not None else self.processor
        return self

    def entropy(
        self, dataset: Sequence[Any], context: Mapping[str, Any] | None = None
    ) -> np.ndarray:
        """Stages 1-2: the (samples, layers) image-attention entropy matrix of `dataset`."""
        context = context or {}
        model, processor = (
            context.get("model", self.model),
            context.get("processor", self.processor),
        )
        if model is None or processor is None:
            raise ValueError(
                "BYE needs the fine-tuned model and its processor: BYE(model, processor), "
                ".fit(model, processor) or context={'model': ..., 'processor': ...}"
            )
        extractor = AttentionExtractor(
            model, processor, template=self.template, image_token_mask=self.image_token_mask,
            batch_size=self.batch_size,
        )  # fmt: skip
        return entropy_matrix(extractor.extract(dataset), relative=self.relative)

    def detect(self, entropy: np.ndarray, variant: Variant | None = None) -> Detection:
        """Stages 3-4 with this defense's settings."""
        return detect(
            entropy, variant=variant or self.variant, separation=self.separation,
            min_weight=self.min_weight, direction=self.direction, test=self.test,
            standardize=self.standardize, seed=self.seed,
        )  # fmt: skip

    def check(self, payload: Sequence[Any], context: Mapping[str, Any] | None = None) -> Verdict:
        """The kept rows as payload; details: removed indices, layers, scores, both variants."""
        rows = check_rows(payload)
        given = (context or {}).get("entropy")
        E = check_entropy(given) if given is not None else self.entropy(rows, context)
        if E.shape[0] != len(rows):
            raise ValueError(f"context['entropy'] has {E.shape[0]} rows for {len(rows)} samples")
        both = {v: self.detect(E, v) for v in ("paper", "robust")}
        chosen = both[self.variant]
        kept_rows, _ = filter_dataset(payload, chosen.removed)
        reason = ""
        if chosen.clustering is None:
            reason = f"{NO_SENSITIVE_LAYER} ({self.variant} rule)"
            warnings.warn(reason, stacklevel=2)
        elif chosen.removed:
            reason = f"removed {len(chosen.removed)} rows with collapsed image attention"
        return Verdict(
            payload=kept_rows,
            valid=not chosen.removed,
            risk=len(chosen.removed) / len(rows),
            reason=reason,
            details={
                "removed": chosen.removed,
                "variant": self.variant,
                "no_sensitive_layer": chosen.clustering is None,
                "sensitive_layers": chosen.profile.sensitive,
                "kl_per_layer": chosen.profile.kl,
                "layer_ranking": chosen.profile.ranking,
                "scores": None if chosen.clustering is None else chosen.clustering.scores,
                "entropy": E,
                **{
                    v: {"sensitive_layers": d.profile.sensitive, "removed": d.removed}
                    for v, d in both.items()
                },
            },
        )
