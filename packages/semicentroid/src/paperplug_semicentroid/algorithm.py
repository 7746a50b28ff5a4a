"""The paper's core approximation algorithm (Algorithm 3): Phase 1 peeling, then Phase 2
selective switching with the slack c matched to the MCC's approximation factor α."""

from __future__ import annotations

import numpy as np

from paperplug.checks import check_choice, check_type
from paperplug_semicentroid.instance import SemiCentroidInstance, check_instance
from paperplug_semicentroid.loss import Clustering
from paperplug_semicentroid.mcc import SEMIBALL_FACTOR
from paperplug_semicentroid.peeling import cohesive_peeling
from paperplug_semicentroid.switching import core_bound, selective_switching, switching_constant

MCC_FACTOR = {"exact": 1.0, "semiball": SEMIBALL_FACTOR}


def semi_centroid_core(
    inst: SemiCentroidInstance, mcc: str = "semiball", switching: bool = True
) -> Clustering:
    """Algorithm 3: a c/(c-1)-core clustering (3 with the exact MCC, 2+√5 with the 2-approximate
    semi-ball MCC, within the paper's 3+2√3 polynomial-time bound). switching=False: Phase 1 only."""
    check_instance(inst)
    check_choice(mcc, "mcc", sorted(MCC_FACTOR))
    check_type(switching, "switching", (bool, np.bool_), what="True or False")
    phase1 = cohesive_peeling(inst, mcc)
    alpha = MCC_FACTOR[mcc]
    if not switching:
        phase1.meta.update(alpha=alpha, fjr_bound=alpha)
        return phase1
    out, _ = selective_switching(inst, phase1, switching_constant(alpha))
    out.meta.update(alpha=alpha, core_bound=core_bound(alpha))
    return out
