"""CSD: Claim-based Stream Decoding with a certified safety risk (C-SafeGen, NeurIPS 2025).

The public API is imported lazily: the plugin entry point imports this package, and listing
plugins must not import torch.
"""

from paperplug import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "guard_then_refuse": ".baselines",
        "stop_rule": ".baselines",
        "unguarded": ".baselines",
        "BOUNDS": ".certificate",
        "Certificate": ".certificate",
        "LTTResult": ".certificate",
        "RiskCertifier": ".certificate",
        "bentkus_bound": ".certificate",
        "clopper_pearson_bound": ".certificate",
        "hb_bound": ".certificate",
        "hb_p_value": ".certificate",
        "hoeffding_bound": ".certificate",
        "learn_then_test": ".certificate",
        "Claim": ".claims",
        "ClaimSegmenter": ".claims",
        "CSDResult": ".decoding",
        "ClaimStream": ".decoding",
        "ClaimStreamDecoder": ".decoding",
        "CSD": ".defense",
        "SafeDecodingChatModel": ".defense",
        "REFUSED": ".discrete",
        "DiscreteClaimLM": ".discrete",
        "accept_from": ".discrete",
        "csd_distribution": ".discrete",
        "target_distribution": ".discrete",
        "total_variation": ".discrete",
        "ChatClaimGenerator": ".generators",
        "ClaimGenerator": ".generators",
        "HFClaimGenerator": ".generators",
        "claim_generator": ".generators",
        "OnlineRun": ".online",
        "OnlineTau": ".online",
        "run_online": ".online",
        "ClaimClassifier": ".scorers",
        "ClaimScorer": ".scorers",
        "DefenseScorer": ".scorers",
        "FunctionScorer": ".scorers",
        "JudgeScorer": ".scorers",
        "as_scorer": ".scorers",
        "minilm_encoder": ".scorers",
    },
)
