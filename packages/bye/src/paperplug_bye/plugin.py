"""Registrations only: factories are lazy "module:attr" paths, so listing imports nothing heavy."""

from paperplug import hookimpl

PAPER = "Believe Your Eyes: Backdoor Sample Filtering for Multimodal LLMs via Attention Entropy (NeurIPS 2025)"


@hookimpl
def register_defenses(register):
    register(
        "bye",
        "paperplug_bye.defense:BYE",
        summary="drop fine-tuning rows whose image-token attention entropy collapsed (train_data)",
        paper=PAPER,
        tags=("backdoor", "multimodal", "data-filtering", "attention"),
    )


@hookimpl
def register_attacks(register):
    register(
        "mllm-backdoor-poisoning",
        "paperplug_bye.poisoning:BackdoorPoisoning",
        summary="poison an MLLM fine-tuning set with a patch, blended or text trigger (train_data)",
        paper=PAPER,
        tags=("backdoor", "poisoning", "multimodal"),
    )
