"""EAReranker: document adequacy for RAG from embeddings alone (Zeng et al., NeurIPS 2025).

The public API is imported lazily: the plugin entry point imports this package, and listing
plugins must not import torch.
"""

from paperplug import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "BIN_EDGES": ".bins",
        "BIN_NAMES": ".bins",
        "adequacy_bin": ".bins",
        "report": ".metrics",
        "ndcg_at": ".metrics",
        "mrr": ".metrics",
        "reciprocal_rank": ".metrics",
        "lacc": ".metrics",
        "acc": ".metrics",
        "bin_accuracy": ".metrics",
        "aggregate_judges": ".aggregation",
        "calibrate_within_bins": ".aggregation",
        "DimensionExpansion": ".expansion",
        "EARScorer": ".scorer",
        "bin_aware_mse": ".loss",
        "listwise_loss": ".loss",
        "EAReranker": ".training",
        "LLMJudge": ".judges",
        "DigitJudge": ".judges",
        "label_pairs": ".judges",
        "parse_score": ".judges",
        "encode": ".embedders",
        "sentence_transformer": ".embedders",
        "model_digest": ".embedders",
    },
)
