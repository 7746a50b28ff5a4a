"""Stages 1, 4 and 5 alone: the warm-up rule, (per-cluster) FedAvg, nearest-centroid assignment."""

import numpy as np
import pytest
from paperplug_flux import (
    BlockScaler,
    Clustering,
    assign_clients,
    cluster_fedavg,
    fedavg,
    warmup_decision,
    warmup_finished,
)


@pytest.mark.parametrize(
    ("accs", "done"),
    [
        ([0.1, 0.12], False),  # before round 3 the plateau rule is off
        ([0.1, 0.3, 0.5], False),  # still climbing by >= 0.05
        ([0.1, 0.3, 0.33], True),  # +0.03 < 0.05: plateau
        ([0.1, 0.3, 0.5, 0.7, 0.9], True),  # the cap of 5 rounds
    ],
)
def test_warmup_rule(accs, done):
    assert warmup_finished(accs, max_rounds=5) is done


def test_warmup_decision_reports_the_gain_and_warns_when_the_stop_was_close():
    d = warmup_decision([0.1, 0.3, 0.345], max_rounds=5)
    assert d.statistic == "accuracy gain" and d.threshold == 0.05
    assert d.value == pytest.approx(0.045) and d.outcome == "stop: plateau at round 3"
    assert d.close  # 0.045 is within 20 % of 0.05
    with pytest.warns(
        UserWarning, match=r"accuracy gain 0\.045 is within 20% of its threshold 0\.05"
    ):
        d.warn_if_close("warm-up")
    far = warmup_decision([0.1, 0.3, 0.31], max_rounds=5)
    assert far.outcome.startswith("stop") and not far.close
    assert warmup_decision([0.1], max_rounds=5).to_dict()["close"] is False  # no gain yet
    with pytest.raises(ValueError, match="max_rounds must be >= 1"):
        warmup_decision([0.1], max_rounds=0)


def test_fedavg_is_the_example_weighted_mean():
    a = {"w": np.array([1.0, 2.0]), "b": np.array([0.0])}
    b = {"w": np.array([3.0, 6.0]), "b": np.array([4.0])}
    out = fedavg([a, b], [1, 3])
    np.testing.assert_allclose(out["w"], [2.5, 5.0])
    np.testing.assert_allclose(out["b"], [3.0])
    np.testing.assert_array_equal(a["w"], [1.0, 2.0])  # inputs untouched
    with pytest.raises(ValueError, match="example counts"):
        fedavg([a], [0])


def test_cluster_fedavg_averages_within_each_cluster_only():
    ws = [{"w": np.array([float(v)])} for v in (0, 2, 10, 20)]
    out = cluster_fedavg(ws, [1, 1, 1, 3], [0, 0, 1, 1])
    assert sorted(out) == [0, 1]
    assert out[0]["w"][0] == pytest.approx(1.0) and out[1]["w"][0] == pytest.approx(17.5)


def test_assignment_is_the_nearest_centroid_on_the_marginal_block():
    # descriptors: marginal block of 2 floats, conditional block of 2
    train = np.array(
        [[0.0, 0.0, 5.0, 5.0], [0.0, 0.2, 0.0, 0.0], [1.0, 1.0, 5.0, 5.0], [1.0, 0.8, 0.0, 0.0]]
    )
    scaler = BlockScaler.fit(train, marginal_size=2)
    labels = np.array([0, 0, 1, 1])
    scaled = scaler.transform(train)
    centroids = np.stack([scaled[labels == k].mean(0) for k in (0, 1)])
    clustering = Clustering(
        labels=labels, centroids=centroids, scaler=scaler, eps=0.5, method="dbscan"
    )
    got = assign_clients(np.array([[0.1, 0.0], [0.9, 1.0], [0.4, 0.4]]), clustering)
    assert got.tolist() == [0, 1, 0]
    with pytest.raises(ValueError, match="2 floats"):
        assign_clients(np.zeros((1, 3)), clustering)
