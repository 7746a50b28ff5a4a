"""SCM (NeurIPS 2025): a Streaming Content Monitor trained with token- and response-level
supervision, which stops harmful LLM output after reading part of it.

The public API is imported lazily: the plugin entry point imports this package, and listing
plugins must not import torch.
"""

from paperplug import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "IGNORE_INDEX": ".fineharm",
        "EncodedExample": ".fineharm",
        "encode_fineharm": ".fineharm",
        "load_fineharm": ".fineharm",
        "read_jsonl": ".fineharm",
        "token_labels": ".fineharm",
        "response_text": ".fineharm",
        "validate_example": ".fineharm",
        "check_examples": ".fineharm",
        "stitch_replies": ".stitching",
        "n_words": ".stitching",
        "DualSupervisionLoss": ".loss",
        "logic_consistency_loss": ".loss",
        "SCMModel": ".model",
        "score_responses": ".model",
        "load_checkpoint": ".checkpoint",
        "save_checkpoint": ".checkpoint",
        "IncrementalTokens": ".retokenisation",
        "hold_back": ".retokenisation",
        "tail_retokenisation_is_exact": ".retokenisation",
        "SCMTrainer": ".training",
        "DelayKCounter": ".stopping",
        "delay_k_stop": ".stopping",
        "naive_stop": ".stopping",
        "Decision": ".streaming",
        "MonitorSession": ".streaming",
        "StreamingMonitor": ".streaming",
        "prompt_of": ".streaming",
        "MonitoredGeneration": ".generate",
        "monitored_generate": ".generate",
        "binary_metrics": ".evaluation",
        "choose_theta_k": ".evaluation",
        "stream_metrics": ".evaluation",
        "build_word_tokenizer": ".synthetic",
        "make_fineharm_like": ".synthetic",
        "notional_labels": ".synthetic",
        "EMBEDDED_TRAINING": ".embedded",
        "PAPER_READING": ".embedded",
        "load_data": ".embedded",
        "long_reply": ".embedded",
    },
)
