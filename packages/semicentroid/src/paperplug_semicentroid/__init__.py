"""Proportionally fair semi-centroid clustering (Cookson, Shah, Yu; NeurIPS 2025).

The public API is imported lazily: the plugin entry point imports this package, and listing
plugins must not import numpy.
"""

from paperplug import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "SemiCentroidInstance": ".instance",
        "Clustering": ".loss",
        "best_center": ".loss",
        "check_clustering": ".loss",
        "coalition_losses": ".loss",
        "losses": ".loss",
        "Cohesive": ".mcc",
        "exact_mcc": ".mcc",
        "most_cohesive_cluster": ".mcc",
        "semiball_mcc": ".mcc",
        "find_clique": ".cliques",
        "cohesive_peeling": ".peeling",
        "core_bound": ".switching",
        "selective_switching": ".switching",
        "switching_constant": ".switching",
        "semi_centroid_core": ".algorithm",
        "Audit": ".audit",
        "audit_core": ".audit",
        "audit_fjr": ".audit",
        "centroid_greedy_capture": ".greedy_capture",
        "non_centroid_greedy_capture": ".greedy_capture",
        "SemiCentroidFair": ".solver",
        "NonMetricWarning": ".metric",
        "Violation": ".metric",
        "center_violation": ".metric",
        "triangle_violation": ".metric",
        "mcc_lower_bound": ".mcc",
        "kmeans_pp": ".embedded",
    },
)
