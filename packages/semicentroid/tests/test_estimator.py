"""SemiCentroidFair as a scikit-learn clusterer: check_estimator, clone, get/set_params,
pipelines, pandas input, predict, and a grid search that recovers a planted number of clusters."""

import numpy as np
import pytest
from paperplug_semicentroid import SemiCentroidFair
from sklearn.base import clone
from sklearn.metrics import adjusted_rand_score, silhouette_score
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import check_estimator


def blobs(per=10, seed=0, k=3):
    rng = np.random.default_rng(seed)
    means = np.array([[0.0, 0.0], [8.0, 0.0], [0.0, 8.0], [8.0, 8.0]])[:k]
    return np.concatenate([m + rng.normal(scale=0.5, size=(per, 2)) for m in means])


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.SkipTestWarning")
def test_check_estimator():
    """Every scikit-learn estimator check (the audit is off: it is tested on its own; with the
    exact audit the checks pass too, in about 30 s)."""
    check_estimator(SemiCentroidFair(audit=None))


def test_get_set_params_and_clone():
    est = SemiCentroidFair(4, lam=0.3, mcc="exact", audit_time_limit=5.0)
    params = est.get_params()
    assert params["n_clusters"] == 4 and params["lam"] == 0.3 and params["mcc"] == "exact"
    twin = clone(est)
    assert twin is not est and twin.get_params() == params
    assert not hasattr(twin, "labels_")
    twin.set_params(n_clusters=3, lam=0.5)
    assert twin.n_clusters == 3 and est.n_clusters == 4
    X = blobs()
    np.testing.assert_array_equal(
        twin.fit(X).labels_, SemiCentroidFair(3, lam=0.5, mcc="exact").fit(X).labels_
    )


def test_pipeline_equals_the_steps_by_hand():
    X = blobs(seed=1) * np.array([1.0, 30.0])  # unequal scales: the scaler matters
    pipe = make_pipeline(StandardScaler(), SemiCentroidFair(3))
    labels = pipe.fit_predict(X)
    by_hand = SemiCentroidFair(3).fit(StandardScaler().fit_transform(X)).labels_
    np.testing.assert_array_equal(labels, by_hand)
    np.testing.assert_array_equal(pipe.predict(X[:5]), pipe[-1].predict(pipe[0].transform(X[:5])))


def test_pandas_dataframe_in_feature_names_kept_and_data_untouched():
    pd = pytest.importorskip("pandas")
    X = blobs(seed=2)
    frame = pd.DataFrame(X, columns=["lon", "lat"])
    before = frame.copy()
    est = SemiCentroidFair(3).fit(frame)
    pd.testing.assert_frame_equal(frame, before)
    assert list(est.feature_names_in_) == ["lon", "lat"]
    np.testing.assert_array_equal(est.labels_, SemiCentroidFair(3).fit(X).labels_)
    np.testing.assert_array_equal(est.centers_, X[est.center_indices_])
    with pytest.raises(ValueError, match="feature names"):
        est.predict(frame.rename(columns={"lat": "latitude"}))


def test_predict_sends_a_newcomer_to_the_cluster_it_loses_least_in():
    """A point at a planted blob's mean joins that blob's cluster; the rule is the semi-centroid
    loss it would bear, checked by hand for one point."""
    X = blobs(seed=3)
    est = SemiCentroidFair(3).fit(X)
    means = np.array([[0.0, 0.0], [8.0, 0.0], [0.0, 8.0]])
    got = est.predict(means)
    blob_of = est.labels_[[0, 10, 20]]  # the first member of each blob
    np.testing.assert_array_equal(got, blob_of)
    x = np.array([[4.0, 1.0]])
    loss = [
        0.5 * np.linalg.norm(X[est.labels_ == t] - x, axis=1).max()
        + 0.5 * np.linalg.norm(est.centers_[t] - x)
        for t in range(3)
    ]
    assert est.predict(x)[0] == int(np.argmin(loss))


@pytest.mark.parametrize("seed", range(5))
def test_grid_search_recovers_the_planted_clusters(seed):
    """Four planted blobs of 12; n_clusters chosen by the silhouette of held-out predictions over
    folds stratified by blob. The refitted best has the 4 blobs exactly, on every seed. (k = 5
    ties with k = 4: Phase 2 empties the fifth cluster, which is then dropped.)"""
    X, blob = blobs(per=12, seed=seed, k=4), np.repeat(np.arange(4), 12)

    def silhouette(est, X_test, y=None):
        return silhouette_score(X_test, est.predict(X_test))

    search = GridSearchCV(
        SemiCentroidFair(audit=None),
        {"n_clusters": [2, 3, 4, 5, 6]},
        scoring=silhouette,
        cv=StratifiedKFold(4, shuffle=True, random_state=seed),
    ).fit(X, blob)
    assert search.best_params_["n_clusters"] in (4, 5)
    assert adjusted_rand_score(blob, search.best_estimator_.labels_) == 1.0
