"""AdaptGrad: gradient smoothing whose per-dimension noise bounds out-of-range sampling (NeurIPS 2025).

The public API loads lazily (PEP 562): `import paperplug_adaptgrad.plugin`, which `paperplug list`
does, must not import torch through this file.
"""

from paperplug import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "adaptive_sigma": ".noise_scale",
        "resolve_bounds": ".noise_scale",
        "smoothgrad_sigma": ".noise_scale",
        "SmoothedGradient": ".smoothing",
        "class_gradient": ".smoothing",
        "BASE_METHODS": ".composition",
        "gradient_x_input": ".composition",
        "integrated_gradients": ".composition",
        "vanilla_gradient": ".composition",
        "deletion_auc": ".metrics",
        "deletion_curve": ".metrics",
        "expected_out_of_range_rate": ".metrics",
        "gini": ".metrics",
        "out_of_range_rate": ".metrics",
        "WeightNoise": ".noisegrad",
        "AdaptGrad": ".explainer",
        "NoiseGrad": ".explainer",
        "NoiseGradPlusPlus": ".explainer",
        "GradientSmoothing": ".explainer",
        "SmoothGrad": ".explainer",
        "as_forward": ".explainer",
        "load_digits_32": ".embedded",
        "trained_digits_cnn": ".embedded",
        "load_hf_classifier": ".huggingface",
        "pixel_bounds": ".huggingface",
    },
)
