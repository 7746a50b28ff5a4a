"""BYE, Believe Your Eyes (NeurIPS 2025): backdoor-sample filtering for multimodal LLMs.

The public API is imported lazily: the plugin entry point imports this package, and listing
plugins must not import torch.
"""

from paperplug import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "AttentionExtractor": ".attention",
        "decoder_attentions": ".attention",
        "eager_attention": ".attention",
        "image_token_id": ".attention",
        "image_token_mask": ".attention",
        "last_token_attention": ".attention",
        "attention_entropy": ".entropy",
        "entropy_matrix": ".entropy",
        "LayerFit": ".profiling",
        "LayerProfile": ".profiling",
        "fit_layer": ".profiling",
        "gaussian_kl": ".profiling",
        "profile_layers": ".profiling",
        "Clustering": ".clustering",
        "cluster_suspicious": ".clustering",
        "suspicion_scores": ".clustering",
        "BYE": ".defense",
        "Detection": ".defense",
        "NO_SENSITIVE_LAYER": ".defense",
        "detect": ".defense",
        "filter_dataset": ".defense",
        "BackdoorPoisoning": ".poisoning",
        "BlendTrigger": ".poisoning",
        "PatchTrigger": ".poisoning",
        "TextTrigger": ".poisoning",
        "poison_dataset": ".poisoning",
        "Victim": ".finetuning",
        "answers_correct": ".finetuning",
        "fine_tune": ".finetuning",
        "PROMPT_TEMPLATE": ".prompting",
        "encode_prompts": ".prompting",
        "encode_with_answers": ".prompting",
        "synthetic_vqa": ".synthetic",
        "TinyProcessor": ".tiny",
        "tiny_llava": ".tiny",
        "Backdoored": ".embedded",
        "EmbeddedConfig": ".embedded",
        "backdoored_run": ".embedded",
        "filter_quality": ".embedded",
        "random_drop": ".embedded",
    },
)
