"""Registrations only: factories are lazy "module:attr" paths, so listing imports nothing heavy."""

from paperplug import hookimpl

PAPER = "Beyond Masked and Unmasked: Discrete Diffusion Models via Partial Masking (NeurIPS 2025)"


@hookimpl
def register_trainers(register):
    register(
        "prime",
        "paperplug_prime.trainer:PrimeMDM",
        summary="masked diffusion with partial masking: ℓ sub-tokens per token, carry-over, NELBO in bits, Euler sampler with idle steps",
        paper=PAPER,
        tags=("diffusion", "discrete", "generative", "masked-diffusion"),
    )
