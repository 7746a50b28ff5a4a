"""FLUX: clustered federated learning from client distribution descriptors, on Flower
(Fenoglio et al., NeurIPS 2025).

The public API is imported lazily: the plugin entry point imports this package, and listing
plugins must not import torch or flwr.
"""

from paperplug import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "FLUX": ".trainer",
        "warmup_finished": ".warmup",
        "warmup_decision": ".warmup",
        "Decision": ".decisions",
        "noise_ratios": ".calibration",
        "block_ratio": ".calibration",
        "average_linkage": ".clustering",
        "Projection": ".descriptors",
        "data_free_projection": ".descriptors",
        "client_descriptor": ".descriptors",
        "descriptor_size": ".descriptors",
        "wasserstein2_diagonal": ".descriptors",
        "BlockScaler": ".clustering",
        "Clustering": ".clustering",
        "cluster_clients": ".clustering",
        "knee": ".clustering",
        "spanning_tree_distances": ".clustering",
        "nearest_neighbour_distances": ".clustering",
        "dbscan_with_singletons": ".clustering",
        "silhouette_kmeans": ".clustering",
        "fedavg": ".aggregation",
        "cluster_fedavg": ".aggregation",
        "assign_clients": ".assignment",
        "FluxStrategy": ".strategy",
        "IfcaStrategy": ".strategy",
        "make_client_app": ".client",
        "LocalGrid": ".grid",
        "simulate": ".simulation",
        "write_app": ".app",
        "save_client_data": ".app",
        "LocalSuperLink": ".superlink",
        "FluxRun": ".runs",
        "save_run": ".runs",
        "load_run": ".runs",
        "run_method": ".baselines",
        "MethodResult": ".baselines",
        "run_strategy": ".federation",
        "train_config": ".federation",
        "FederationRun": ".federation",
        "latents": ".models",
    },
)
