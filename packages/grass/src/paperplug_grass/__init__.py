"""GraSS / FactGraSS (NeurIPS 2025): gradient-based data attribution made scalable by
compressing per-sample gradients — sparsify, then a sparse Johnson–Lindenstrauss sketch; on
linear and conv layers, work on the gradient's two factors without forming it.

The public API is imported lazily: the plugin entry point imports this package, and listing
plugins must not import torch.
"""

from paperplug import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "Compressor": ".compressors",
        "SJLT": ".compressors",
        "FactoredCompressor": ".factored",
        "learn_selective_mask": ".selective_mask",
        "per_sample_gradients": ".gradients",
        "layer_factors": ".gradients",
        "factored_layers": ".gradients",
        "target_values": ".gradients",
        "GradientFeatures": ".attributor",
        "InfluenceAttributor": ".attributor",
        "lds": ".datamodeling",
    },
)
