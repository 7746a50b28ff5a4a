"""CauIM: causal influence maximisation (Su, Zhang, Qiu; NeurIPS 2025).

The public API is imported lazily: the plugin entry point imports this package, and listing
plugins must not import numpy, scikit-learn or torch.
"""

from paperplug import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "DiffusionNetwork": ".network",
        "from_networkx": ".network",
        "from_scipy": ".network",
        "to_network": ".network",
        "ReverseSamples": ".reverse",
        "ReverseObjective": ".reverse",
        "checked_greedy": ".holdout",
        "CheckedValue": ".holdout",
        "proxy_objective": ".proxy",
        "LiveEdgeWorlds": ".worlds",
        "ExposureGrid": ".exposure",
        "active_exposure": ".exposure",
        "TLearner": ".ite",
        "records_from_frame": ".ite",
        "CausalObjective": ".objective",
        "SeedSelection": ".greedy",
        "g_cauim": ".greedy",
        "a_cauim": ".proxy",
        "message_passing": ".proxy",
        "Hypergraph": ".hypergraph",
        "HypergraphObjective": ".hypergraph",
        "celf_spread": ".baselines",
        "top_degree": ".baselines",
        "top_effect": ".baselines",
        "random_seeds": ".baselines",
        "CausalInfluenceMaximization": ".solver",
    },
)
