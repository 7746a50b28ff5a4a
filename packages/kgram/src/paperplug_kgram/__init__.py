"""Two-layer, one-head transformers represent any conditional k-gram (Ekbote et al., NeurIPS 2025).

The public API is imported lazily: the plugin entry point imports this package, and listing
plugins must not import torch.
"""

from paperplug import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "conditional_kgram": ".estimator",
        "KGramTransformer": ".construction",
        "code_margin": ".construction",
        "verify": ".construction",
        "sample_chains": ".markov",
        "bayes_nll": ".markov",
        "unigram_nll": ".markov",
        "MarkovICLTrainer": ".training",
        "MarkovTransformer": ".training",
        "matching_mass": ".training",
        "KGramConstruction": ".solver",
        "KGramConfig": ".export",
        "KGramForCausalLM": ".export",
    },
)
