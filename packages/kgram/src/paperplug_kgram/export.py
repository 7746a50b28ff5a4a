"""The construction as a Hugging Face model: `save_pretrained` / `from_pretrained` by path, and
`logits` (log-probabilities) from `input_ids` like any causal LM.

A GPT-2 checkpoint cannot hold it: GPT-2 has LayerNorm and an MLP in every layer, absolute
positions only and GELU, where the construction needs a relative positional bias in layer 1,
an exact ReLU MLP between the attentions and none after. So it ships with its own config."""

from __future__ import annotations

from typing import Any

from paperplug.extras import requires_extra

with requires_extra("paperplug-kgram", "hf", "the construction as a Hugging Face model"):
    import torch
    from transformers import PretrainedConfig, PreTrainedModel
    from transformers.modeling_outputs import CausalLMOutput

from paperplug_kgram.construction import KGramTransformer


class KGramConfig(PretrainedConfig):
    """The Hugging Face config of the exported construction (vocabulary, k, widths)."""

    model_type = "paperplug-kgram"

    def __init__(
        self,
        vocab_size: int = 2,
        k: int = 1,
        base: float = 4.0,
        alpha: float = 0.0,
        beta: float | None = None,
        max_len: int = 1024,
        **kw: Any,
    ) -> None:
        self.k, self.base, self.alpha, self.beta, self.max_len = k, base, alpha, beta, max_len
        super().__init__(vocab_size=vocab_size, **kw)


class KGramForCausalLM(PreTrainedModel):
    """`KGramForCausalLM(KGramConfig(vocab_size=S, k=k))`: the construction in float64."""

    config_class = KGramConfig
    main_input_name = "input_ids"

    def __init__(self, config: KGramConfig) -> None:
        super().__init__(config)
        self.kgram = KGramTransformer(
            config.vocab_size, config.k, base=config.base, alpha=config.alpha, beta=config.beta,
            max_len=config.max_len,
        )  # fmt: skip
        self.post_init()

    def _init_weights(self, module: torch.nn.Module) -> None:
        """The weights are the construction's: nothing is drawn at random."""

    def forward(self, input_ids: torch.Tensor, **kw: Any) -> CausalLMOutput:
        probs = self.kgram(input_ids)
        return CausalLMOutput(logits=torch.log(probs.clamp_min(1e-300)))
