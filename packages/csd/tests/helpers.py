"""Small models and scorers with planted, known behaviour, shared by the tests."""

from paperplug_csd import DiscreteClaimLM, FunctionScorer

# A model with a dead end: after "Bee" almost everything is unsafe, so CSD must backtrack.
TRAP_CLAIMS = ["Ant is safe.", "Bee is safe.", "Unsafe one.", "Unsafe two."]
TRAP_SCORES = {"Ant is safe.": 0.1, "Bee is safe.": 0.3, "Unsafe one.": 0.7, "Unsafe two.": 0.9}


def trap_lm(max_claims=3):
    first = [0.35, 0.35, 0.2, 0.1, 0.0]
    transition = [
        [0.3, 0.1, 0.1, 0.0, 0.5],
        [0.0, 0.0, 0.6, 0.3, 0.1],
        [0.2, 0.2, 0.2, 0.2, 0.2],
        [0.2, 0.2, 0.2, 0.2, 0.2],
    ]
    return DiscreteClaimLM(TRAP_CLAIMS, first, transition, max_claims=max_claims)


def lookup_scorer(table=None):
    table = table or TRAP_SCORES
    return FunctionScorer(lambda prompt, prefix, claim: table[claim.strip()])


def output_key(result):
    """A CSD result as the discrete output it stands for (REFUSED last on fallback)."""
    from paperplug_csd import REFUSED

    return tuple(result.claim_indices) + ((REFUSED,) if result.fallback else ())
