"""Neural chunking (Wu et al., "Concept-Guided Interpretability via Neural Chunking",
NeurIPS 2025): DSC, PA and UCD chunks of a network's population activity, and grafting.

The public API is imported lazily: the plugin entry point imports this package, and listing
plugins must not import torch.
"""

from paperplug import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "capture_activations": ".capture",
        "hf_hidden_states": ".capture",
        "load_hf_model": ".capture",
        "neuron_bins": ".dsc",
        "assign_bins": ".dsc",
        "state_ids": ".dsc",
        "merge_chunks": ".dsc",
        "lookup_table": ".dsc",
        "DiscreteSequenceChunker": ".dsc",
        "negatives_threshold": ".pa",
        "token_positions": ".pa",
        "TAUS": ".pa",
        "Template": ".pa",
        "pa_template": ".pa",
        "pa_deviation": ".pa",
        "detection_rates": ".pa",
        "sweep_auc": ".pa",
        "PopulationAveraging": ".pa",
        "pa_layers": ".pa",
        "UnsupervisedChunkDiscovery": ".ucd",
        "cosine_objective": ".ucd",
        "graft": ".grafting",
        "grafting_effect": ".grafting",
        "next_symbol_probs": ".grafting",
        "ChunkExplainer": ".explainer",
    },
)
