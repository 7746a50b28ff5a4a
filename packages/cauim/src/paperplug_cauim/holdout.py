"""How many samples G-CauIM needs, chosen by a held-out check (as Stop-and-Stare does for
RIS): greedy on one set of reverse samples, its seeds valued on an independent set of the
same size; while the held-out value is not known to within the tolerance (5%, at two
standard errors) or the in-sample value exceeds it by more, both sets are doubled. The reported value is the held-out one: the in-sample estimate of a
greedy's own choice is biased upwards (it picks the candidates whose noise was lucky)."""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from paperplug.checks import check_callable, check_scalar, check_seed, check_type
from paperplug_cauim.exposure import TauFn
from paperplug_cauim.greedy import SeedSelection, g_cauim
from paperplug_cauim.network import DiffusionNetwork, check_network
from paperplug_cauim.reverse import ReverseObjective, ReverseSamples


@dataclass
class CheckedValue:
    """A seed set's held-out value (estimate, standard error) and what produced it."""

    held_out: float
    standard_error: float
    in_sample: float
    samples: int
    converged: bool


def checked_greedy(
    network: DiffusionNetwork,
    tau: TauFn,
    k: int,
    *,
    seed: int = 0,
    start: int = 4096,
    max_samples: int = 65536,
    tolerance: float = 0.05,
    exclude_seeds: bool = True,
) -> tuple[SeedSelection, CheckedValue, ReverseObjective]:
    """G-CauIM on reverse samples, doubled from `start` until the held-out value of its seeds
    is known to `tolerance` (2 standard errors ≤ tolerance·|held-out|) and their in-sample
    value exceeds it by at most tolerance·|held-out| + 2 standard errors, or `max_samples` is
    reached (a warning says so). Returns the seeds, their checked value and
    the held-out objective (to value other seed sets on the same samples)."""
    check_network(network)
    check_callable(tau, "tau", what="function tau(nodes, exposures)")
    check_scalar(k, "k", "int", low=1, high=network.n)
    check_seed(seed, allow_none=False)
    check_type(exclude_seeds, "exclude_seeds", (bool, np.bool_), what="True or False")
    check_scalar(start, "start", "int", low=2)
    check_scalar(max_samples, "max_samples", "int", low=2)
    check_scalar(tolerance, "tolerance", "real", low=0.0)
    fit_seed, held_out_seed = np.random.SeedSequence(seed).spawn(2)
    size = min(start, max_samples)
    fit = ReverseSamples(network, size, fit_seed)
    check = ReverseSamples(network, size, held_out_seed)
    while True:
        held_out = ReverseObjective(network, tau, check, exclude_seeds=exclude_seeds)
        selection = g_cauim(ReverseObjective(network, tau, fit, exclude_seeds=exclude_seeds), k)
        in_sample = selection.values[-1] if selection.values else 0.0
        value, se = held_out.value(np.array(selection.seeds))
        converged = (in_sample - value <= tolerance * abs(value) + 2 * se) and (
            2 * se <= tolerance * abs(value)
        )
        if converged or 2 * size > max_samples:
            break
        fit.extend(size)
        check.extend(size)
        size *= 2
    if not converged:
        warnings.warn(
            f"G-CauIM's held-out check did not pass with {size} samples (max_samples="
            f"{max_samples}): in-sample {in_sample:.4g}, held-out {value:.4g} ± {se:.2g}, where "
            f"2 SE must be within tolerance={tolerance} of the held-out value and the in-sample "
            "value within it too; the held-out value is reported; more samples give better seeds",
            RuntimeWarning,
            stacklevel=2,
        )
    return selection, CheckedValue(value, se, in_sample, size, bool(converged)), held_out
