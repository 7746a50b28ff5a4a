"""Stage 5, test-time assignment (§3.3): an unseen, unlabelled client sends only the marginal
block of its descriptor (computed under the global model); the server scales it like the
training descriptors and picks the nearest cluster centroid on that block alone.

Label-free marginals cannot see a pure P(Y|X) shift (same inputs, other labels): there the
assignment is no better than chance, a limit of the method, not of this code.
"""

from __future__ import annotations

import numpy as np

from paperplug.checks import check_array, check_type
from paperplug_flux.clustering import Clustering


def assign_clients(marginals: np.ndarray, clustering: Clustering) -> np.ndarray:
    """Cluster id of each unseen client from its raw marginal descriptor [mean(Pz), std(Pz)]."""
    check_type(clustering, "clustering", Clustering, what="a Clustering (cluster_clients)")
    width = clustering.scaler.edges[1]
    m = check_array(marginals, "marginals", ndim=(1, 2))
    m = np.atleast_2d(m)
    if m.shape[1] != width:
        raise ValueError(f"marginals must have {width} floats per client, got {m.shape[1]}")
    scaled = clustering.scaler.transform(m)
    dist = np.linalg.norm(scaled[:, None, :] - clustering.centroids[None, :, :width], axis=2)
    return dist.argmin(axis=1).astype(np.int64)
