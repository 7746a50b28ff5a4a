"""BYE as a train_data Defense (paper Alg. 1), and stage 5: the filtered dataset."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from paperplug import Verdict
from paperplug.checks import (
    check_callable,
    check_choice,
    check_context,
    check_scalar,
    check_type,
)
from paperplug_bye.attention import AttentionExtractor, ImageTokenMask
from paperplug_bye.clustering import Clustering, cluster_suspicious
from paperplug_bye.entropy import entropy_matrix
from paperplug_bye.finetuning import unseen_rows
from paperplug_bye.profiling import (
    MIN_GAP,
    VARIANTS,
    LayerProfile,
    SeparationTest,
    Variant,
    check_entropy,
    profile_layers,
)
from paperplug_bye.prompting import PROMPT_TEMPLATE, check_indices, check_rows, check_template

NO_BACKDOOR = "no backdoor found: no layer's image-attention entropy passes the {} rule"


@dataclass
class Detection:
    """One rule's outcome: its layer profile and, when a layer is sensitive, the clustering."""

    profile: LayerProfile
    clustering: Clustering | None

    @property
    def removed(self) -> list[int]:
        return [] if self.clustering is None else np.flatnonzero(self.clustering.flags).tolist()


def detect(
    entropy: np.ndarray,
    *,
    variant: Variant = "collapse",
    separation: float = 2.0,
    min_weight: float = 0.02,
    min_gap: float = MIN_GAP,
    direction: Literal["low", "minority"] = "low",
    test: SeparationTest = "paper",
    standardize: bool | None = None,
    seed: int = 0,
) -> Detection:
    """Stages 3-4 on a (samples, layers) entropy matrix: profile the layers, cluster the scores."""
    profile = profile_layers(
        entropy, separation=separation, variant=variant, seed=seed, min_weight=min_weight,
        test=test, min_gap=min_gap,
    )  # fmt: skip
    if not profile.scored:
        return Detection(profile, None)
    clustering = cluster_suspicious(
        entropy, profile.scored, variant=variant, direction=direction,
        standardize=standardize, seed=seed,
    )  # fmt: skip
    return Detection(profile, clustering)


def _first(*values: Any) -> Any:
    return next((v for v in values if v is not None), None)


def filter_dataset(dataset: Sequence[Any], removed: Sequence[int]) -> tuple[Any, list[int]]:
    """Stage 5: the kept rows in order (a `select` view for Hugging Face datasets) and their indices."""
    if isinstance(dataset, (str, bytes, Mapping)) or not hasattr(dataset, "__len__"):
        raise TypeError(f"dataset must be a sequence of rows, got {type(dataset).__name__}")
    if not len(dataset):
        raise ValueError("dataset is empty")
    drop = set(check_indices(removed, len(dataset)))
    kept = [i for i in range(len(dataset)) if i not in drop]
    if hasattr(dataset, "select") and not isinstance(dataset, (list, tuple)):
        return dataset.select(kept), kept
    return [dataset[i] for i in kept], kept


class BYE:
    """Believe Your Eyes: drop the fine-tuning rows whose image-token attention entropy collapsed.

    The model fine-tuned on the rows comes from, in order: `context["model"]`, the attack's
    result in `paperplug.evaluate` (`context["attack_result"].meta["finetuned_model"]`), the
    constructor or `fit(model, processor)`. The processor: `context["processor"]`, the
    constructor, or the evaluated target's `.processor`. A model fine-tuned by this package
    records its rows; one that was not fine-tuned on the rows being filtered is refused.
    A precomputed (samples, layers) matrix can come as `context["entropy"]`.

    All three rules are computed and reported; `variant` picks the one that filters
    ("collapse" by default: it answers "no backdoor found" on clean data; "paper" is the
    official rule exactly; "robust" the minority rule). `test` and `standardize` apply to all.
    """

    stage = "train_data"
    name = "bye"

    def __init__(
        self,
        model: Any = None,
        processor: Any = None,
        *,
        variant: Variant = "collapse",
        separation: float = 2.0,
        min_weight: float = 0.02,
        min_gap: float = MIN_GAP,
        direction: Literal["low", "minority"] = "low",
        test: SeparationTest = "paper",
        standardize: bool | None = None,
        relative: bool = False,
        seed: int = 0,
        template: str = PROMPT_TEMPLATE,
        image_token_mask: ImageTokenMask | None = None,
        batch_size: int = 16,
    ) -> None:
        check_choice(variant, "variant", VARIANTS)
        check_choice(test, "test", ("paper", "ashman"))
        check_choice(direction, "direction", ("low", "minority"))
        check_scalar(separation, "separation", low=0, inclusive="neither")
        check_scalar(min_weight, "min_weight", low=0, high=0.5)
        check_scalar(min_gap, "min_gap", low=0)
        check_scalar(seed, "seed", "int")
        check_scalar(batch_size, "batch_size", "int", low=1)
        for name, value in (("model", model), ("processor", processor)):
            if value is not None:
                check_callable(value, name, what="a callable model or processor")
        if standardize is not None:
            check_type(standardize, "standardize", bool)
        check_type(relative, "relative", bool)
        check_template(template)
        if image_token_mask is not None:
            check_callable(image_token_mask, "image_token_mask")
        self.model, self.processor, self.variant = model, processor, variant
        self.separation, self.min_weight, self.min_gap = separation, min_weight, min_gap
        self.direction, self.test, self.standardize = direction, test, standardize
        self.relative, self.seed, self.template = relative, seed, template
        self.image_token_mask, self.batch_size = image_token_mask, batch_size

    def fit(self, model: Any, processor: Any = None) -> BYE:
        """Set the fine-tuned model whose attention BYE reads (and its processor)."""
        self.model, self.processor = model, processor if processor is not None else self.processor
        return self

    def resolve(self, context: Mapping[str, Any] | None = None) -> tuple[Any, Any]:
        """The fine-tuned model and processor this check reads (see the class docstring)."""
        context = check_context(context)
        meta = getattr(context.get("attack_result"), "meta", None) or {}
        model = _first(context.get("model"), meta.get("finetuned_model"), self.model)
        processor = _first(
            context.get("processor"),
            self.processor,
            getattr(context.get("target"), "processor", None),
        )
        if model is None or processor is None:
            raise ValueError(
                "BYE needs the model fine-tuned on these rows and its processor: BYE(model, "
                "processor), .fit(model, processor), context={'model': ..., 'processor': ...}, or "
                "paperplug.evaluate with an attack whose result.meta holds 'finetuned_model'"
            )
        return model, processor

    def _attention(self, rows: Sequence[Any], context: Mapping[str, Any] | None) -> list[Any]:
        model, processor = self.resolve(context)
        unseen = unseen_rows(model, rows)
        if unseen:
            raise ValueError(
                f"the model was not fine-tuned on {len(unseen)} of the {len(rows)} rows being "
                f"filtered (payload rows {unseen[:5]}...): BYE must read the model fine-tuned on "
                "these rows"
            )
        extractor = AttentionExtractor(
            model, processor, template=self.template, image_token_mask=self.image_token_mask,
            batch_size=self.batch_size,
        )  # fmt: skip
        return extractor.extract(rows)

    def entropy(
        self, dataset: Sequence[Any], context: Mapping[str, Any] | None = None
    ) -> np.ndarray:
        """Stages 1-2: the (samples, layers) image-attention entropy matrix of `dataset`."""
        rows = check_rows(dataset)
        return entropy_matrix(self._attention(rows, context), relative=self.relative)

    def detect(
        self, entropy: np.ndarray, variant: Variant | None = None, *, min_gap: float | None = None
    ) -> Detection:
        """Stages 3-4 with this defense's settings."""
        return detect(
            entropy, variant=variant or self.variant, separation=self.separation,
            min_weight=self.min_weight, min_gap=self.min_gap if min_gap is None else min_gap,
            direction=self.direction, test=self.test, standardize=self.standardize, seed=self.seed,
        )  # fmt: skip

    def check(self, payload: Sequence[Any], context: Mapping[str, Any] | None = None) -> Verdict:
        """The kept rows as payload; details: removed indices, layers, scores, every rule."""
        rows = check_rows(payload, "payload")
        context = check_context(context)
        given = context.get("entropy")
        min_gap = self.min_gap
        if given is not None:
            E = check_entropy(given, "context['entropy']")
        else:
            maps = self._attention(rows, context)
            E = entropy_matrix(maps, relative=self.relative)
            if self.relative:  # the gap is in nats; relative entropies are in units of log N
                n = float(np.median([m.shape[-1] for m in maps]))
                min_gap = min_gap / math.log(n) if n > 1 else min_gap
        if E.shape[0] != len(rows):
            raise ValueError(f"context['entropy'] has {E.shape[0]} rows for {len(rows)} samples")
        every = {v: self.detect(E, v, min_gap=min_gap) for v in VARIANTS}
        chosen = every[self.variant]
        kept_rows, _ = filter_dataset(payload, chosen.removed)
        if chosen.clustering is None:
            reason = NO_BACKDOOR.format(self.variant)
        else:
            reason = f"removed {len(chosen.removed)} rows with collapsed image attention"
        return Verdict(
            payload=kept_rows,
            valid=not chosen.removed,
            risk=len(chosen.removed) / len(rows),
            reason=reason,
            details={
                "removed": chosen.removed,
                "variant": self.variant,
                "backdoor_found": chosen.clustering is not None,
                "sensitive_layers": chosen.profile.sensitive,
                "scored_layers": chosen.profile.scored,
                "kl_per_layer": chosen.profile.kl,
                "gap_per_layer": chosen.profile.gaps,
                "layer_ranking": chosen.profile.ranking,
                "scores": None if chosen.clustering is None else chosen.clustering.scores,
                "entropy": E,
                **{
                    v: {"sensitive_layers": d.profile.sensitive, "removed": d.removed}
                    for v, d in every.items()
                },
            },
        )
