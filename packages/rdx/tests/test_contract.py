"""The Explainer contract from paperplug.testing, on planted representations."""

from typing import ClassVar

import pytest
from paperplug_rdx.embedded import planted_mixture

from paperplug.testing import ExplainerContract


class TestContract(ExplainerContract):
    component = "rdx"
    bad_params: ClassVar[dict] = {
        "distance": ["cosine"],
        "diff": ["relative"],
        "gamma": [0.0, -0.1, "0.1"],
        "beta": [0, -5.0],
        "n_clusters": [0, 2.5],
        "grid_size": [1, 9.0],
        "seeding": ["kmeans"],
        "min_difference": [-0.05],
        "align": ["yes"],
        "knn": [0, 5000, 30.5],  # 5000 neighbours of 120 items
        "seed": [-1, 0.5],
        "labels": [[0, 1, 2]],  # 3 labels for 120 items
        "target": [0],  # RDX reads no target
        "layer": [2.5, "fc"],  # with model=None there is no layer to read
    }
    accepts: ClassVar[dict] = {
        f"inputs[{i}]:width": "the two models' representations may differ in width: RDX "
        "compares neighbourhood ranks within each, never coordinates across them"
        for i in (0, 1)
    }

    @pytest.fixture
    def explain_case(self):
        R0, R1, _ = planted_mixture(120, seed=0)
        return None, (R0, R1), {}
