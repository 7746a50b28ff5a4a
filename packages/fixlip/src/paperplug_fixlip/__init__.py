"""FIxLIP: faithful weighted-Banzhaf interaction explanations of dual encoders (Baniecki et
al., NeurIPS 2025).

The public API is imported lazily: the plugin entry point imports this package, and listing
plugins must not import torch.
"""

from paperplug import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "DualEncoderGame": ".game",
        "FunctionGame": ".game",
        "clip_game": ".masking",
        "clip_game_from_processor": ".masking",
        "text_pair_game": ".masking",
        "interaction_lookup": ".lookup",
        "design_matrix": ".lookup",
        "sample_coalitions": ".sampling",
        "banzhaf_size_weights": ".sampling",
        "shapley_size_weights": ".sampling",
        "NormalEquations": ".regression",
        "moebius_transform": ".banzhaf",
        "weighted_banzhaf_interactions": ".banzhaf",
        "weighted_banzhaf_values": ".banzhaf",
        "game_table": ".banzhaf",
        "exact_fwbii": ".estimators",
        "exact_fsii": ".estimators",
        "approximate": ".estimators",
        "approximate_crossmodal": ".estimators",
        "small_side_floor": ".estimators",
        "split_budget": ".estimators",
        "split_passes": ".estimators",
        "fit_dual": ".estimators",
        "Interactions": ".interactions",
        "FIxLIP": ".explainer",
        "explain_game": ".explainer",
        "p_faithfulness": ".metrics",
        "pointing_game": ".metrics",
        "insertion_deletion": ".metrics",
        "plot_interaction_heatmap": ".plots",
        "plot_top_pairs": ".plots",
    },
)
