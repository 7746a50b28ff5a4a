"""The price of opportunity fairness in matroid allocation (Castera et al., NeurIPS 2025).

The public API is imported lazily: the plugin entry point imports this package, and listing
plugins must not import numpy or scipy.
"""

from paperplug import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "Matroid": ".matroids",
        "TransversalMatroid": ".matroids",
        "GraphicMatroid": ".matroids",
        "UniformMatroid": ".matroids",
        "PartitionMatroid": ".matroids",
        "RankOracleMatroid": ".matroids",
        "as_matroid": ".matroids",
        "check_matroid_axioms": ".matroids",
        "FairPoint": ".characterisation",
        "Groups": ".characterisation",
        "as_groups": ".characterisation",
        "fair_point": ".characterisation",
        "union_ranks": ".characterisation",
        "Lottery": ".lottery",
        "fair_lottery": ".lottery",
        "IntegralAllocation": ".integral",
        "integral_allocation": ".integral",
        "random_colouring": ".markets",
        "random_colouring_trend": ".markets",
        "random_market": ".markets",
        "worst_case_market": ".markets",
        "OpportunityFairAllocation": ".solver",
    },
)
