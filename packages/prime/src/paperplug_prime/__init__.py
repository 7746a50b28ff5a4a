"""Prime (NeurIPS 2025): masked discrete diffusion with partial masking — each token split into
ℓ base-b sub-tokens masked independently, a denoiser over whole tokens with carry-over, the
NELBO in bits per token and an Euler sampler that counts idle steps.

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
        "nelbo_loss": ".nelbo",
        "token_nll": ".nelbo",
        "antithetic_times": ".nelbo",
        "euler_sample": ".sampler",
        "PrimeMDM": ".trainer",
    },
)
