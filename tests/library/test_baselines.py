"""Tests of craft.baselines: DP-means, DP-means(R) and DP-RF.

The vectorised passes are compared label for label with literal per-point
loops written here as the reference (the paper's Algorithm, read literally).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.metrics import adjusted_rand_score

from craft import datasets
from craft.baselines import DPMeans, DPRF, _dpmeans_pass, _dprf_pass
from craft.encoding import Encoder
from craft.exceptions import CraftInputError
from craft.priors import prior_terms
from craft.synthetic import fig2_numeric


# ----------------------------------------------------------------------------
# literal reference implementations
# ----------------------------------------------------------------------------
def literal_dpmeans_pass(X, centers, lam):
    """Per-point loop: centres fixed during the pass, new ones opened in order."""
    centers = [np.array(c, dtype=float) for c in centers]
    labels = np.empty(len(X), dtype=int)
    for n, x in enumerate(X):
        dist = [float(np.sum((x - c) ** 2)) for c in centers]
        best = int(np.argmin(dist))
        if dist[best] > lam:
            centers.append(x.copy())
            labels[n] = len(centers) - 1
        else:
            labels[n] = best
    return labels, len(centers)


def literal_dprf_pass(X, centers, masks, threshold, terms, rng):
    centers = [np.array(c, dtype=float) for c in centers]
    masks = [np.array(v, dtype=bool) for v in masks]
    labels = np.empty(len(X), dtype=int)
    for n, x in enumerate(X):
        dist = [
            float(np.sum(v * (x - c) ** 2)) + v.sum() * terms.f_delta
            for c, v in zip(centers, masks, strict=True)
        ]
        best = int(np.argmin(dist))
        if dist[best] > threshold:
            share = np.mean(np.array(masks, dtype=float), axis=0)
            v = rng.random(X.shape[1]) < terms.selection_probability(share)
            centers.append(x.copy())
            masks.append(v)
            labels[n] = len(centers) - 1
        else:
            labels[n] = best
    return labels, len(centers)


def literal_compact(labels):
    mapping = {old: new for new, old in enumerate(sorted(set(labels.tolist())))}
    return np.array([mapping[v] for v in labels]), len(mapping)


def literal_dpmeans_fit(X, lam, start, max_iter=100):
    labels = np.zeros(len(X), dtype=int)
    centers = [start]
    for _ in range(max_iter):
        raw, _ = literal_dpmeans_pass(X, centers, lam)
        new_labels, k = literal_compact(raw)
        centers = [X[new_labels == j].mean(axis=0) for j in range(k)]
        changed = not np.array_equal(new_labels, labels)
        labels = new_labels
        if not changed:
            break
    return labels


def literal_dprf_fit(X, m, lam, seed, max_iter=100):
    terms = prior_terms(m)
    rng = np.random.default_rng(seed)
    n, d = X.shape
    first = int(rng.integers(n))
    masks = [rng.random(d) < m]
    centers = [X[first].copy()]
    threshold = lam + d * terms.f0
    n_select = int(math.floor(m * d + 0.5))
    labels = np.zeros(n, dtype=int)
    for _ in range(max_iter):
        raw, _ = literal_dprf_pass(X, centers, masks, threshold, terms, rng)
        new_labels, k = literal_compact(raw)
        centers, masks = [], []
        for j in range(k):
            members = X[new_labels == j]
            centers.append(members.mean(axis=0))
            variance = members.var(axis=0)
            chosen = sorted(range(d), key=lambda f: (variance[f], f))[:n_select]
            mask = np.zeros(d, dtype=bool)
            mask[chosen] = True
            masks.append(mask)
        changed = not np.array_equal(new_labels, labels)
        labels = new_labels
        if not changed:
            break
    return labels, np.array(masks)


# ----------------------------------------------------------------------------
# fixtures and data
# ----------------------------------------------------------------------------
@pytest.fixture
def rng():
    return np.random.default_rng(2024)


def blobs(rng, centers, n_per=60, sd=0.5):
    centers = np.asarray(centers, dtype=float)
    X = np.vstack([rng.normal(c, sd, size=(n_per, centers.shape[1])) for c in centers])
    return X, np.repeat(np.arange(len(centers)), n_per)


def random_case(seed, n, d, n_old):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.uniform(0.5, 3.0, size=d)
    centers = rng.normal(size=(n_old, d))
    return X, centers


# ----------------------------------------------------------------------------
# vectorised pass == literal loop
# ----------------------------------------------------------------------------
pass_cases = st.tuples(
    st.integers(0, 2**31 - 1),  # seed
    st.integers(2, 60),  # n
    st.integers(1, 5),  # d
    st.integers(1, 4),  # old centres
    st.floats(0.0, 1.0),  # lambda as a quantile of the distances
)


@settings(max_examples=60, deadline=None)
@given(pass_cases)
def test_dpmeans_pass_equals_literal_loop(case):
    seed, n, d, n_old, q = case
    X, centers = random_case(seed, n, d, n_old)
    dist = ((X[:, None, :] - centers[None]) ** 2).sum(-1).min(axis=1)
    lam = float(np.quantile(dist, q)) * 0.999 + 1e-3
    labels, opened = _dpmeans_pass(X, (X * X).sum(axis=1), centers, lam)
    expected, n_total = literal_dpmeans_pass(X, centers, lam)
    np.testing.assert_array_equal(labels, expected)
    assert n_old + opened.size == n_total


@settings(max_examples=60, deadline=None)
@given(pass_cases, st.sampled_from([0.2, 1 / 3, 0.5, 0.8]))
def test_dprf_pass_equals_literal_loop(case, m):
    seed, n, d, n_old, q = case
    X, centers = random_case(seed, n, d, n_old)
    terms = prior_terms(m)
    masks = np.random.default_rng(seed + 1).random((n_old, d)) < m
    masks[:, 0] = True  # no empty mask
    dist = (masks[None] * (X[:, None, :] - centers[None]) ** 2).sum(-1).min(axis=1)
    threshold = float(np.quantile(dist, q)) * 0.999 + 1e-3
    labels, opened, new_masks = _dprf_pass(
        X, X * X, centers, masks, threshold, terms, np.random.default_rng(seed)
    )
    expected, n_total = literal_dprf_pass(
        X, centers, masks, threshold, terms, np.random.default_rng(seed)
    )
    np.testing.assert_array_equal(labels, expected)
    assert n_old + opened.size == n_total == n_old + new_masks.shape[0]


@pytest.mark.parametrize("init", ["mean", "random"])
@pytest.mark.parametrize("lam", [0.5, 2.0, 8.0, 30.0])
def test_dpmeans_fit_equals_literal_algorithm(rng, init, lam):
    X = rng.normal(size=(80, 3)) * [1.0, 2.0, 3.0]
    model = DPMeans(lam=lam, init=init, random_state=11).fit(X)
    if init == "mean":
        start = X.mean(axis=0)
    else:
        start = X[int(np.random.default_rng(11).integers(len(X)))]
    expected = literal_dpmeans_fit(X, lam, start)
    np.testing.assert_array_equal(model.labels_, expected)


@pytest.mark.parametrize("m", [0.25, 0.5, 0.75])
@pytest.mark.parametrize("lam", [1.0, 5.0, 20.0])
def test_dprf_fit_equals_literal_algorithm(rng, m, lam):
    X, _ = blobs(rng, [[0, 0, 0, 0], [4, 4, 0, 0], [0, 4, 4, 4]], n_per=25, sd=1.0)
    model = DPRF(m=m, lam=lam, random_state=5).fit(X)
    labels, masks = literal_dprf_fit(X, m, lam, seed=5)
    np.testing.assert_array_equal(model.labels_, labels)
    np.testing.assert_array_equal(model.feature_mask_, masks)


# ----------------------------------------------------------------------------
# DP-means
# ----------------------------------------------------------------------------
def test_hand_computed_tiny_example():
    X = np.array([[0.0], [0.1], [10.0], [10.1]])
    model = DPMeans(lam=1.0).fit(X)
    assert model.labels_.tolist() == [0, 0, 1, 1]
    assert model.n_clusters_ == 2
    np.testing.assert_allclose(model.cluster_centers_, [[0.05], [10.05]], atol=1e-12)
    # within SSE = 4 * 0.05^2 = 0.01, plus lambda * K = 2
    assert model.objective_ == pytest.approx(2.01, abs=1e-12)
    assert model.lam_ == 1.0
    assert model.n_iter_ == 2


def test_large_lambda_gives_one_cluster_at_the_mean():
    X = np.array([[0.0], [0.1], [10.0], [10.1]])
    model = DPMeans(lam=100.0).fit(X)
    assert model.n_clusters_ == 1
    assert model.objective_ == pytest.approx(((X - X.mean()) ** 2).sum() + 100.0)


def test_farthest_first_lambda_by_hand():
    # global mean 4.25; round 1 adds 11 (45.5625); round 2 adds 0 (4.25^2)
    X = np.array([[0.0], [1.0], [5.0], [11.0]])
    assert DPMeans(k=1).fit(X).lam_ == pytest.approx(6.75**2)
    assert DPMeans(k=2).fit(X).lam_ == pytest.approx(4.25**2)


@pytest.mark.parametrize("init, seed", [("mean", None), ("random", 0), ("random", 1), ("random", 2)])
def test_three_blobs_with_k3(rng, init, seed):
    X, y = blobs(rng, [[0, 0], [10, 0], [0, 10]])
    model = DPMeans(k=3, init=init, random_state=seed).fit(X)
    assert model.n_clusters_ == 3
    assert adjusted_rand_score(y, model.labels_) == 1.0


@pytest.mark.parametrize("k", [2, 4, 6])
def test_farthest_first_gives_about_k_clusters(rng, k):
    corners = [[10 * i, 10 * j] for i in range(3) for j in range(2)][:k]
    X, y = blobs(rng, corners, n_per=40, sd=0.4)
    model = DPMeans(k=k).fit(X)
    assert abs(model.n_clusters_ - k) <= 1
    assert model.n_clusters_ == len(np.unique(model.labels_))


def test_predict_equals_labels_and_fit_predict(rng):
    X, _ = blobs(rng, [[0, 0], [5, 5], [0, 8]], sd=1.0)
    model = DPMeans(k=3, init="random", random_state=3)
    labels = model.fit_predict(X)
    np.testing.assert_array_equal(labels, model.labels_)
    np.testing.assert_array_equal(model.predict(X), model.labels_)
    assert model.labels_.min() == 0 and model.labels_.max() == model.n_clusters_ - 1


def test_objective_is_sse_plus_lambda_k(rng):
    X, _ = blobs(rng, [[0, 0], [6, 0]], sd=1.0)
    model = DPMeans(lam=4.0).fit(X)
    sse = ((X - model.cluster_centers_[model.labels_]) ** 2).sum()
    assert model.objective_ == pytest.approx(sse + 4.0 * model.n_clusters_)


def test_same_seed_same_labels_and_clone(rng):
    X = rng.normal(size=(100, 4))
    a = DPMeans(k=4, init="random", random_state=9).fit(X)
    b = clone(a).fit(X)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    assert b.get_params()["init"] == "random"


def test_convergence_warning(rng):
    X = rng.normal(size=(200, 2))
    with pytest.warns(ConvergenceWarning, match="max_iter=1"):
        model = DPMeans(lam=0.5, max_iter=1).fit(X)
    assert model.n_iter_ == 1


# ----------------------------------------------------------------------------
# DP-RF
# ----------------------------------------------------------------------------
def test_dprf_recovers_fig2_subspaces():
    X_frame, y, true_mask = fig2_numeric(random_state=0)
    model = DPRF(m=1 / 3, k=3, random_state=5).fit(X_frame.to_numpy())
    assert model.n_clusters_ == 3
    assert adjusted_rand_score(y, model.labels_) == 1.0
    for k in range(3):
        cluster = model.labels_[y == k][0]
        np.testing.assert_array_equal(model.feature_mask_[cluster], true_mask[k])


@pytest.mark.parametrize("seed", range(4))
def test_dprf_masks_are_the_lowest_variance_features(seed):
    X = fig2_numeric(random_state=seed)[0].to_numpy()
    model = DPRF(m=1 / 3, k=3, random_state=seed).fit(X)
    assert model.feature_mask_.shape == (model.n_clusters_, 36)
    assert model.feature_mask_.sum(axis=1).tolist() == [12] * model.n_clusters_
    for j in range(model.n_clusters_):
        variance = X[model.labels_ == j].var(axis=0)
        selected = variance[model.feature_mask_[j]]
        others = variance[~model.feature_mask_[j]]
        assert selected.max() <= others.min() + 1e-12


def test_dprf_tie_break_takes_lower_feature_index():
    # one-hot-like 0/1 data: columns with equal counts tie exactly
    X = np.array([[1, 0, 1, 0], [1, 0, 0, 1], [1, 0, 1, 0], [1, 0, 0, 1]], dtype=float)
    model = DPRF(m=0.5, lam=100.0, random_state=0).fit(X)
    assert model.n_clusters_ == 1
    assert model.feature_mask_.tolist() == [[True, True, False, False]]


def test_dprf_objective_and_predict(rng):
    X, _ = blobs(rng, [[0, 0, 0], [5, 5, 0]], sd=0.5)
    model = DPRF(m=2 / 3, k=2, random_state=1).fit(X)
    terms = prior_terms(2 / 3)
    masks = model.feature_mask_
    diff = X - model.cluster_centers_[model.labels_]
    discrepancy = ((diff**2) * masks[model.labels_]).sum()
    expected = (
        discrepancy
        + (model.lam_ + 3 * terms.f0) * model.n_clusters_
        + terms.f_delta * masks.sum()
    )
    assert model.objective_ == pytest.approx(expected)
    np.testing.assert_array_equal(model.predict(X), model.labels_)


def test_dprf_lambda_from_farthest_first():
    X = np.array([[0.0, 0.0], [1.0, 0.0], [3.0, 4.0], [0.0, 0.5]])
    m = 0.5
    terms = prior_terms(m)
    model = DPRF(m=m, k=1, random_state=0).fit(X)
    first = int(np.random.default_rng(0).integers(4))
    sq = ((X - X[first]) ** 2).sum(axis=1).max()
    assert model.lam_ == pytest.approx(m * sq + m * 2 * terms.f_delta)


def test_dprf_same_seed_same_result(rng):
    X = rng.normal(size=(120, 6))
    a = DPRF(m=0.5, k=3, random_state=4).fit(X)
    b = DPRF(m=0.5, k=3, random_state=4).fit(X)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    np.testing.assert_array_equal(a.feature_mask_, b.feature_mask_)
    assert np.isfinite(a.objective_)


# ----------------------------------------------------------------------------
# the default lambda (neither lam nor k): CRAFT's rule on each one's distance
# ----------------------------------------------------------------------------
def _encoded(name):
    """A bundled dataset as the baselines take it: standardized numbers beside one-hot levels."""
    X, y = datasets.load(name)
    schema = datasets.dataset_schema(name)
    return Encoder(list(schema.numeric), list(schema.categorical), True).fit_transform(X).euclidean(), y


@pytest.mark.parametrize("name", ["wine", "zoo"])
def test_dpmeans_default_lambda_is_the_mean_cost_under_one_cluster(name):
    X, _ = _encoded(name)
    for init, seed in (("mean", None), ("random", 0)):
        model = DPMeans(init=init, random_state=seed).fit(X)
        # The mean squared distance of a row to the global mean: a row's cost when one cluster holds every row.
        assert model.lam_ == pytest.approx(((X - X.mean(axis=0)) ** 2).sum(axis=1).mean(), rel=1e-12)
        assert model.n_clusters_ == len(np.unique(model.labels_)) > 1
        np.testing.assert_array_equal(model.predict(X), model.labels_)
        assert np.isfinite(model.objective_)
    if name == "wine":  # 13 standardized columns: each contributes its variance, 1
        assert model.lam_ == pytest.approx(13.0)


@pytest.mark.parametrize("name, m", [("wine", 0.5), ("zoo", 0.3), ("zoo", 0.7)])
def test_dprf_default_lambda_is_the_mean_cost_under_one_cluster(name, m):
    X, _ = _encoded(name)
    terms = prior_terms(m)
    model = DPRF(m=m, random_state=0).fit(X)
    # One cluster at the global mean selecting the round(m D) lowest-variance features, as DP-RF's update does.
    n_select = math.floor(m * X.shape[1] + 0.5)
    variances = np.sort(X.var(axis=0), kind="stable")
    assert model.lam_ == pytest.approx(variances[:n_select].sum() + n_select * terms.f_delta, rel=1e-12)
    assert model.lam_ > 0 and model.n_clusters_ > 1
    np.testing.assert_array_equal(model.predict(X), model.labels_)


def test_dprf_default_lambda_falls_back_where_the_mean_cost_is_not_positive():
    # m = 0.8 keeps 4 of 5 features; the 4 lowest variances are 0, and F_Delta < 0 makes their mean cost negative:
    # lambda is then every column's variance with no feature-control term, as CRAFT's default_lambda does.
    rng = np.random.default_rng(0)
    X = np.column_stack([np.zeros((30, 4)), rng.normal(size=30)])
    assert prior_terms(0.8).f_delta < 0
    model = DPRF(m=0.8, random_state=0).fit(X)
    assert model.lam_ == pytest.approx(X[:, 4].var(), rel=1e-12)


@pytest.mark.parametrize("Estimator", [DPMeans, DPRF])
def test_default_lambda_refuses_a_table_of_equal_rows(Estimator):
    with pytest.raises(CraftInputError, match="every row of X is the same"):
        Estimator().fit(np.ones((6, 3)))


# ----------------------------------------------------------------------------
# errors
# ----------------------------------------------------------------------------
@pytest.mark.parametrize("Estimator", [DPMeans, DPRF])
@pytest.mark.parametrize(
    "params, message",
    [
        ({"lam": 1.0, "k": 3}, "at most one of lam and k"),
        ({"lam": 0.0}, "lam=0.0 must be a finite number > 0"),
        ({"lam": float("nan")}, "lam=nan"),
        ({"k": 0}, "k=0 must be an integer >= 1"),
        ({"k": 2.5}, "k=2.5"),
        ({"lam": 1.0, "max_iter": 0}, "max_iter=0"),
    ],
)
def test_parameter_errors(Estimator, params, message):
    X = np.arange(12, dtype=float).reshape(6, 2)
    with pytest.raises(CraftInputError, match=message):
        Estimator(**params).fit(X)


@pytest.mark.parametrize("Estimator", [DPMeans, DPRF])
@pytest.mark.parametrize(
    "X, message",
    [
        (np.arange(5.0), "must be 2-D"),
        (np.array([[1.0, 2.0]]), "n_samples=1"),
        (np.array([[1.0, np.nan], [0.0, 1.0], [np.inf, 0.0]]), "2 non-finite values"),
        ([["a", "b"], ["c", "d"]], "numeric matrix"),
    ],
)
def test_data_errors(Estimator, X, message):
    with pytest.raises(CraftInputError, match=message):
        Estimator(lam=1.0).fit(X)


def test_other_errors(rng):
    X = rng.normal(size=(10, 2))
    with pytest.raises(CraftInputError, match="init='kmeans\\+\\+' must be"):
        DPMeans(lam=1.0, init="kmeans++").fit(X)
    with pytest.raises(CraftInputError, match="m=1.5"):
        DPRF(m=1.5, lam=1.0).fit(X)
    with pytest.raises(CraftInputError, match="rho"):
        DPRF(m=0.5, rho=0.3, lam=1.0).fit(X)
    with pytest.raises(CraftInputError, match="rho='big'"):
        DPRF(m=0.5, rho="big", lam=1.0).fit(X)
    duplicates = np.array([[0.0, 0.0], [0.0, 0.0], [1.0, 1.0]])
    with pytest.raises(CraftInputError, match="k=3 is too large"):
        DPMeans(k=3).fit(duplicates)
    model = DPMeans(lam=1.0).fit(X)
    with pytest.raises(CraftInputError, match="X has 3 features, but DPMeans is expecting 2 features as input"):
        model.predict(rng.normal(size=(4, 3)))
    with pytest.raises(NotFittedError):
        DPRF(lam=1.0).predict(X)


@pytest.mark.parametrize("block", [1, 3])
def test_blocked_assignment_equals_literal_loop(monkeypatch, block):
    import craft.baselines as baselines

    monkeypatch.setattr(baselines, "_BLOCK", block)
    X, centers = random_case(17, 70, 2, 2)
    labels, opened = _dpmeans_pass(X, (X * X).sum(axis=1), centers, 0.3)
    expected, _ = literal_dpmeans_pass(X, centers, 0.3)
    assert opened.size > 3 * block
    np.testing.assert_array_equal(labels, expected)
    terms = prior_terms(0.5)
    masks = np.ones((2, 2), dtype=bool)
    labels, opened, _ = _dprf_pass(X, X * X, centers, masks, 0.3, terms, np.random.default_rng(1))
    expected, _ = literal_dprf_pass(X, centers, masks, 0.3, terms, np.random.default_rng(1))
    assert opened.size > 3 * block
    np.testing.assert_array_equal(labels, expected)
