"""Registrations only: factories are lazy "module:attr" paths, so listing imports nothing heavy."""

from paperplug import hookimpl

PAPER = "What One Cannot, Two Can: Two-Layer Transformers Provably Represent Induction Heads on Any-Order Markov Chains (NeurIPS 2025)"


@hookimpl
def register_solvers(register):
    register(
        "kgram",
        "paperplug_kgram.solver:KGramConstruction",
        summary="the explicit 2-layer, 1-head transformer computing the in-context conditional k-gram (verified)",
        paper=PAPER,
        tags=("transformers", "in-context-learning", "markov", "construction"),
    )


@hookimpl
def register_trainers(register):
    register(
        "kgram",
        "paperplug_kgram.training:MarkovICLTrainer",
        summary="train 1- and 2-layer one-head transformers on in-context Markov chains; gap to Bayes, attention",
        paper=PAPER,
        tags=("transformers", "in-context-learning", "markov", "learning-dynamics"),
    )
