"""RDX: representational difference explanations (Kondapaneni et al., NeurIPS 2025).

The public API is imported lazily: the plugin entry point imports this package, and listing
plugins must not import numpy, scikit-learn or torch.
"""

from paperplug import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "neighborhood_ranks": ".distances",
        "max_normalized": ".distances",
        "local_scaling": ".distances",
        "difference": ".difference_graph",
        "affinities": ".difference_graph",
        "spectral_clusters": ".clustering",
        "seeded_neighbourhoods": ".clustering",
        "neighbourhood_grid": ".grids",
        "bsr": ".metrics",
        "mbsr": ".metrics",
        "linear_cka": ".metrics",
        "debiased_cka": ".metrics",
        "align_linear": ".alignment",
        "label_guidance": ".alignment",
        "knn_ranks": ".knn",
        "sparse_difference": ".knn",
        "layer_features": ".features",
        "hf_hidden_states": ".features",
        "RDX": ".explainer",
    },
)
