"""Registrations only: factories are lazy "module:attr" paths, so listing imports nothing heavy."""

from paperplug import hookimpl

PAPER = "AdaptGrad: Adaptive Sampling to Reduce Noise (NeurIPS 2025)"


@hookimpl
def register_explainers(register):
    register(
        "adaptgrad",
        "paperplug_adaptgrad.explainer:AdaptGrad",
        summary="Gradient smoothing with a per-dimension noise scale that bounds out-of-range samples",
        paper=PAPER,
        tags=("gradient", "saliency", "torch"),
    )
    register(
        "smoothgrad",
        "paperplug_adaptgrad.explainer:SmoothGrad",
        summary="SmoothGrad, AdaptGrad's baseline: one noise scale σ = α·(hi − lo) for every dimension",
        paper=PAPER,
        tags=("gradient", "saliency", "torch", "baseline"),
    )
    register(
        "noisegrad",
        "paperplug_adaptgrad.explainer:NoiseGrad",
        summary="NoiseGrad, a baseline of the paper: gradients averaged over copies of the model "
        "with multiplicative weight noise",
        paper=PAPER,
        tags=("gradient", "saliency", "torch", "baseline"),
    )
    register(
        "noisegrad_pp",
        "paperplug_adaptgrad.explainer:NoiseGradPlusPlus",
        summary="NoiseGrad++ (FusionGrad), a baseline of the paper: NoiseGrad's weight noise "
        "around SmoothGrad's input noise",
        paper=PAPER,
        tags=("gradient", "saliency", "torch", "baseline"),
    )
