"""NeuRules (NeurIPS 2025): ordered rule lists learned end to end by gradient descent.

The public API is imported lazily: the plugin entry point imports this package, and listing
plugins must not import torch.
"""

from paperplug import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "NeuRulesClassifier": ".classifier",
        "Condition": ".extraction",
        "Rule": ".extraction",
        "RuleList": ".extraction",
        "extract_rule_list": ".extraction",
        "prune_conditions": ".extraction",
        "Conjunctions": ".conjunction",
        "harmonic_and": ".conjunction",
        "NeuralRuleList": ".network",
        "RuleSelector": ".ordering",
        "gumbel_select": ".ordering",
        "priorities": ".ordering",
        "support_penalty": ".ordering",
        "PLANTED_RULES": ".embedded",
        "planted_rule_data": ".embedded",
        "datasets": ".embedded",
        "IntervalPredicates": ".predicates",
        "soft_interval": ".predicates",
        "initial_cut_points": ".predicates",
        "weighted_quantile": ".predicates",
        "annealed": ".schedule",
        "heads_frozen": ".schedule",
        "batch_rows": ".schedule",
        "cross_validate": ".evaluation",
        "TrainingConfig": ".training",
        "objective": ".training",
        "readable_threshold": ".extraction",
        "train_rule_list": ".training",
    },
)
