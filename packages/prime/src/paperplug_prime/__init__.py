"""Prime (NeurIPS 2025): masked discrete diffusion with partial masking — each token split into
ℓ base-b sub-tokens masked independently, a denoiser over whole tokens with carry-over, the
paper's training objective, the NELBO of the sub-token process in bits per token (a valid
bound) and an Euler sampler that counts idle steps.

The public API is imported lazily: the plugin entry point imports this package, and listing
plugins must not import torch.
"""

from paperplug import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "Subtokenizer": ".subtokenizer",
        "smallest_base": ".subtokenizer",
        "Schedule": ".schedule",
        "mask_subtokens": ".forward",
        "PrimeDenoiser": ".denoiser",
        "carry_over": ".denoiser",
        "prime_loss": ".objective",
        "token_nll": ".objective",
        "nelbo_draw": ".nelbo",
        "subtoken_nll": ".nelbo",
        "prior_nll": ".nelbo",
        "euler_sample": ".sampler",
        "PrimeMDM": ".trainer",
    },
)
