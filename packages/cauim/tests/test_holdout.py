"""The held-out check that sizes G-CauIM's samples: it doubles until the check passes, warns
when it cannot within `max_samples`, and the value it reports (held-out) is unbiased where the
in-sample value of the greedy's own choice is not."""

import warnings

import networkx as nx
import numpy as np
import pytest
from paperplug_cauim import checked_greedy, from_networkx
from test_objective import exact, small_graphs


def tau(nodes, e):
    return np.cos(nodes) + np.asarray(e) - 0.2


def test_doubles_until_the_check_passes_and_reports_an_unbiased_held_out_value():
    errors = []
    for g, network in enumerate(small_graphs()):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # the check passes within max_samples here
            selection, checked, _ = checked_greedy(network, tau, 2, seed=g, start=256)
        assert checked.converged and checked.samples in {256 * 2**j for j in range(9)}
        truth = exact(network, tau, selection.seeds)
        assert 2 * checked.standard_error <= 0.05 * abs(checked.held_out)
        assert (
            checked.in_sample - checked.held_out
            <= 0.05 * abs(checked.held_out) + 2 * checked.standard_error
        )
        errors.append((checked.held_out - truth) / checked.standard_error)
    assert np.abs(errors).max() < 4 and abs(np.mean(errors)) < 2


def test_warns_when_max_samples_stops_it_and_still_reports_held_out():
    network = from_networkx(nx.gnp_random_graph(60, 0.08, seed=1, directed=True), p=0.3)
    with pytest.warns(RuntimeWarning, match="held-out value is reported"):
        selection, checked, held_out = checked_greedy(network, tau, 5, start=64, max_samples=64)
    assert not checked.converged and checked.samples == 64
    assert held_out.value(np.array(selection.seeds)) == (checked.held_out, checked.standard_error)
