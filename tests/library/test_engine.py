"""The numerical core: prior terms, the pass against a literal transcription, objective, special cases."""

import dataclasses
import inspect
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from library_helpers import engine_options
from literal_craft import LiteralCluster, Prior, encode, literal_craft

from craft import CRAFT, _engine
from craft.encoding import Encoder
from craft.priors import default_rho, prior_terms
from craft.special import NO_SELECTION, binary_discrepancy, binary_entropy, dp_means, entropy_clustering

ESTIMATOR_PARAMETERS = inspect.signature(CRAFT.__init__).parameters


# ---------------------------------------------------------------------------
# F0, F_Delta and rho, by hand


def _f(a, b):
    return (a + b) * math.log(a + b) - a * math.log(a) - b * math.log(b)


@pytest.mark.parametrize(
    ("m", "f0", "f_delta"),
    [(1 / 3, 0.0816, 0.0595), (0.5, 0.1021, 0.0), (0.8, 0.2117, -0.1401)],
)
def test_prior_terms_match_hand_computed_values(m, f0, f_delta):
    terms = prior_terms(m)
    rho = m * (1 - m) - 0.01
    a0 = m * m * (1 - m) / rho - m
    b0 = m * (1 - m) ** 2 / rho + m
    assert terms.rho == pytest.approx(rho)
    assert terms.f0 == pytest.approx(_f(a0, b0), rel=1e-12)
    assert terms.f_delta == pytest.approx(_f(a0 + 1, b0 - 1) - _f(a0, b0), abs=1e-12)
    # Hand-computed from Eq. ComputeF (see _f), to four decimals.
    assert terms.f0 == pytest.approx(f0, abs=1e-4)
    assert terms.f_delta == pytest.approx(f_delta, abs=1e-4)


def test_f_delta_is_zero_at_half_and_negative_above():
    assert abs(prior_terms(0.5).f_delta) < 1e-12
    assert prior_terms(0.6).f_delta < 0 < prior_terms(0.4).f_delta


def test_default_rho_is_the_papers_and_stays_in_range():
    assert default_rho(0.5) == pytest.approx(0.24)
    assert default_rho(0.3) == pytest.approx(0.2)
    # m(1-m) - 0.01 falls below 0.01: the paper's max() gives 0.01, still inside (0, m(1-m)).
    assert default_rho(0.02) == pytest.approx(0.01)
    # m(1-m) <= 0.01: the paper's value is out of range, so it is halved into range.
    assert default_rho(0.005) == pytest.approx(0.005 * 0.995 / 2)
    assert default_rho(0.05) == pytest.approx(0.0375)


def test_selection_probability_moves_between_global_and_local():
    near_local = prior_terms(0.5, 0.2499)
    near_global = prior_terms(0.5, 1e-4)
    assert near_local.selection_probability(1.0) == pytest.approx(1.0, abs=1e-3)
    assert near_local.selection_probability(0.0) == pytest.approx(0.0, abs=1e-3)
    assert near_global.selection_probability(1.0) == pytest.approx(0.5, abs=1e-3)


# ---------------------------------------------------------------------------
# The objective of a tiny example, by hand


def _encode(table, numeric, categorical, standardize=False):
    return Encoder(numeric, categorical, standardize=standardize).fit_transform(table)


def test_engine_options_take_every_estimator_parameter_from_the_caller():
    """The defaults of the options that mirror CRAFT's parameters have one place: the estimator's signature."""
    mirrored = [field for field in dataclasses.fields(_engine.Options) if field.name in ESTIMATOR_PARAMETERS]
    assert {field.name for field in mirrored} >= {"smoothing", "min_variance", "budget", "eps_c", "eps_v", "init",
                                                  "rho_selection", "max_iter"}
    assert [f.name for f in mirrored if f.default is not dataclasses.MISSING] == []
    with pytest.raises(TypeError, match="smoothing"):
        _engine.Options(terms=prior_terms(0.5), lam=1.0)  # type: ignore[call-arg]  # the refusal is what is tested
    # The estimator hands the engine its own defaults.
    options = CRAFT(lam=1.0)._validated_options()
    assert (options.smoothing, options.min_variance) == (ESTIMATOR_PARAMETERS["smoothing"].default,
                                                         ESTIMATOR_PARAMETERS["min_variance"].default) == (0.1, 0.3)


def test_objective_of_a_tiny_example_by_hand():
    table = pd.DataFrame({"x": [0.0, 2.0, 10.0, 12.0], "c": ["a", "a", "b", "a"]})
    data = _encode(table, ["x"], ["c"])
    m, lam = 0.5, 3.0
    opts = engine_options(terms=prior_terms(m), lam=lam, smoothing=1.0, min_variance=0.01)
    labels = np.array([0, 0, 1, 1])
    clusters, stats = _engine.fit_clusters(data, labels, 2, opts)
    # Fixed budget with m = 0.5: round(0.5) = 1 numeric, round(0.5) = 1 categorical per cluster.
    np.testing.assert_array_equal(clusters.weights, [[1, 1], [1, 1]])
    value, _ = _engine.objective(data, clusters, stats, opts)

    terms = prior_terms(m)
    eta0 = {"a": 0.75, "b": 0.25}
    # Cluster 0: x = 0, 2 -> mean 1, variance 1; c = a, a -> eta = (2 + 0.75) / 3 for a.
    numeric0 = 2 * 1.0 / (2 * 1.0)
    categorical0 = -2 * math.log((2 + eta0["a"]) / 3)
    # Cluster 1: x = 10, 12 -> variance 1; c = b, a -> eta_b = (1 + .25) / 3, eta_a = (1 + .75) / 3.
    numeric1 = 2 * 1.0 / (2 * 1.0)
    categorical1 = -math.log((1 + eta0["b"]) / 3) - math.log((1 + eta0["a"]) / 3)
    expected = numeric0 + categorical0 + numeric1 + categorical1 + (lam + 2 * terms.f0) * 2 + terms.f_delta * 4
    assert value == pytest.approx(expected, rel=1e-12)


def test_distance_matrix_matches_the_kernel_and_the_formula():
    rng = np.random.default_rng(3)
    table = pd.DataFrame({"x": rng.normal(size=30), "y": rng.normal(size=30), "c": rng.choice(list("pqr"), 30)})
    data = _encode(table, ["x", "y"], ["c"], standardize=True)
    opts = engine_options(terms=prior_terms(0.5), lam=1.0)
    clusters, _ = _engine.fit_clusters(data, rng.integers(0, 3, 30), 3, opts)
    costs = _engine.cost_matrix(data, clusters, opts.terms)
    best, arg = _engine.nearest_cluster(data, clusters, opts.terms)
    np.testing.assert_allclose(best, costs.min(axis=1), rtol=1e-12)
    np.testing.assert_array_equal(arg, costs.argmin(axis=1))
    # One entry by the paper's formula.
    n, k = 4, 1
    v = clusters.weights[k]
    by_hand = sum(
        v[j] * (data.numeric[n, j] - clusters.means[k, j]) ** 2 / (2 * clusters.variances[k, j]) for j in range(2)
    )
    level = data.codes[n, 0]
    by_hand += -clusters.log_eta[k, level] if v[2] else -data.log_eta0[level]
    by_hand += v.sum() * opts.terms.f_delta
    assert costs[n, k] == pytest.approx(by_hand, rel=1e-12)


# ---------------------------------------------------------------------------
# The vectorized pass equals the literal pseudo-code


def _random_mixed(seed, n_rows, n_numeric, n_categorical):
    rng = np.random.default_rng(seed)
    groups = rng.integers(0, 3, n_rows)
    columns = {}
    for j in range(n_numeric):
        columns[f"n{j}"] = rng.normal(size=n_rows) + 3.0 * groups * rng.integers(0, 2)
    for j in range(n_categorical):
        n_levels = int(rng.integers(2, 5))
        noisy = rng.integers(0, n_levels, n_rows)
        columns[f"c{j}"] = np.where(rng.random(n_rows) < 0.6, (groups + j) % n_levels, noisy).astype(str)
    table = pd.DataFrame(columns)
    return table, [f"n{j}" for j in range(n_numeric)], [f"c{j}" for j in range(n_categorical)]


def _literal_initial(clusters, data):
    """The engine's seeding as the literal loop's starting clusters (the seeding is not the Algorithm)."""
    return [
        LiteralCluster(
            list(clusters.means[k]),
            list(clusters.variances[k]),
            [np.exp(clusters.log_eta[k, o : o + n]) for o, n in zip(data.offsets, data.n_levels, strict=True)],
            [bool(x) for x in clusters.weights[k] > 0.5],
        )
        for k in range(clusters.n_clusters)
    ]


def _assert_same_iterations(fast, literal):
    """Iteration by iteration: labels, masks, and the paper's objective (summed point by point there).

    The stopping rules differ in one documented case (docs/numerics.md,
    "Stopping rule"): the engine compares labels after empty clusters are
    dropped and renumbered, the literal loop compares clusters by identity as
    the paper reads. Where the engine stops and the literal loop goes on, the
    engine's last pass must be exactly that case: the same labels as the pass
    before, every point that changed cluster now in a cluster opened in that
    pass (it replaced an old cluster with the same members), whether the
    literal loop goes on or ends there at ``max_iter``.
    """
    for ours, theirs in zip(fast.history, literal.history, strict=False):
        np.testing.assert_array_equal(ours.labels, theirs.labels)
        np.testing.assert_array_equal(ours.feature_mask, theirs.masks)
        assert ours.objective == pytest.approx(theirs.objective, rel=1e-9, abs=1e-9)
        assert ours.n_opened == theirs.n_opened
    # The literal loop may also stop at max_iter on the very pass where the engine stops by that case.
    if fast.converged and (len(fast.history) < len(literal.history) or not literal.converged):
        last = literal.history[len(fast.history) - 1]
        before = literal.history[len(fast.history) - 2].labels if len(fast.history) > 1 else np.zeros_like(last.labels)
        np.testing.assert_array_equal(last.labels, before)
        assert last.n_opened > 0 and 0 < last.reassigned == last.reassigned_to_opened
    else:
        assert fast.converged == literal.converged and len(fast.history) == len(literal.history)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    n_rows=st.integers(3, 45),
    n_numeric=st.integers(0, 3),
    n_categorical=st.integers(0, 3),
    m=st.sampled_from([0.2, 1 / 3, 0.5, 0.8]),
    rho_share=st.sampled_from([None, 0.001, 0.5, 0.999]),
    lam=st.floats(0.05, 12.0),
    budget=st.sampled_from(["fixed", "approximate"]),
    eps=st.sampled_from([(0.5, 0.2), (0.8, 0.5), (0.95, 1.5)]),
    smoothing=st.sampled_from([0.1, 1.0]),
    min_variance=st.sampled_from([0.01, 0.3]),
)
# The engine stops by the renumbering case on the 25th pass, where the literal loop ends at max_iter.
@example(seed=23, n_rows=22, n_numeric=3, n_categorical=3, m=0.2, rho_share=None, lam=2.5625, budget="approximate",
         eps=(0.95, 1.5), smoothing=0.1, min_variance=0.01)
def test_vectorized_pass_equals_literal_pass(seed, n_rows, n_numeric, n_categorical, m, rho_share, lam, budget, eps,
                                             smoothing, min_variance):
    """The engine against the paper read literally: rho at both ends of (0, m(1-m)) and the default,
    the shipped smoothing (0.1) and variance floor (0.3) among others, several eps for the approximate budget."""
    if n_numeric + n_categorical == 0:
        n_categorical = 1
    rho = None if rho_share is None else rho_share * m * (1 - m)
    eps_c, eps_v = eps
    table, numeric, categorical = _random_mixed(seed, n_rows, n_numeric, n_categorical)
    data = _encode(table, numeric, categorical, standardize=True)
    opts = engine_options(
        terms=prior_terms(m, rho), lam=lam, budget=budget, eps_c=eps_c, eps_v=eps_v, smoothing=smoothing,
        min_variance=min_variance, init="random", max_iter=25,
    )
    fast = _engine.run(data, opts, np.random.default_rng(seed))
    literal = literal_craft(
        table, numeric, categorical, m=m, rho=opts.terms.rho, lam=lam, budget=budget, eps_c=eps_c, eps_v=eps_v,
        smoothing=smoothing, min_variance=min_variance, max_iter=25, rng=np.random.default_rng(seed),
    )
    _assert_same_iterations(fast, literal)


def test_literal_encoding_and_prior_agree_with_the_engine():
    """The two sides encode and derive F0, F_Delta and the new-cluster probability independently."""
    table, numeric, categorical = _random_mixed(3, 40, 2, 2)
    data = _encode(table, numeric, categorical, standardize=True)
    numbers, codes, n_levels = encode(table, numeric, categorical)
    np.testing.assert_allclose(numbers, data.numeric, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(codes, data.codes)
    assert n_levels == list(data.n_levels)
    for m, share in [(0.2, 0.001), (0.5, 0.5), (0.8, 0.999), (1 / 3, None)]:
        ours = prior_terms(m, None if share is None else share * m * (1 - m))
        theirs = Prior(m, ours.rho)
        assert (theirs.f0, theirs.f_delta) == pytest.approx((ours.f0, ours.f_delta), rel=1e-12)
        existing = [LiteralCluster([], [], [], v) for v in ([True, False], [True, True], [False, False])]
        for d, selected in enumerate([2, 1]):
            assert theirs.new_cluster_probability(existing, d) == pytest.approx(
                float(ours.selection_probability(selected / 3)), rel=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_craft_plus_plus_passes_equal_literal_passes(seed):
    """craft++ seeding, then the literal loop from the same clusters with the same generator."""
    table, numeric, categorical = _random_mixed(seed, 60, 2, 2)
    data = _encode(table, numeric, categorical, standardize=True)
    opts = engine_options(terms=prior_terms(0.5), lam=2.0, init="craft++", smoothing=0.1, min_variance=0.3, max_iter=25)
    fast = _engine.run(data, opts, np.random.default_rng(seed))
    # Replay the seeding; the literal loop then draws from the generator where the seeding left it,
    # as the engine's passes do, so clusters opened by a pass get the same v on both sides.
    rng = np.random.default_rng(seed)
    initial = _literal_initial(_engine.initial_clusters(data, opts, rng), data)
    literal = literal_craft(
        table, numeric, categorical, m=0.5, rho=opts.terms.rho, lam=2.0, smoothing=0.1, min_variance=0.3,
        max_iter=25, rng=rng, initial=initial,
    )
    _assert_same_iterations(fast, literal)
    assert len(initial) > 1  # the seeding opened clusters: this is not the random start


def test_stopping_rule_compares_labels_after_renumbering():
    """docs/numerics.md, "Stopping rule": four rows, each farther than lambda + D F0 even from its own singleton.

    Every pass re-opens the same four singletons. Read literally (clusters by
    identity) every point changes cluster at every pass and the Algorithm
    never stops; after renumbering the labels are the same, and the engine
    stops at the second pass with the same partition and objective.
    """
    table, numeric, categorical = _random_mixed(6920, 4, 3, 2)
    data = _encode(table, numeric, categorical, standardize=True)
    opts = engine_options(terms=prior_terms(0.2), lam=0.389, budget="approximate", smoothing=0.1, min_variance=0.3,
                           init="random", max_iter=25)
    fast = _engine.run(data, opts, np.random.default_rng(6920))
    literal = literal_craft(table, numeric, categorical, m=0.2, rho=opts.terms.rho, lam=0.389, budget="approximate",
                            smoothing=0.1, min_variance=0.3, max_iter=25, rng=np.random.default_rng(6920))
    assert fast.converged and len(fast.history) == 2 and fast.n_clusters == 4
    assert [record.n_opened for record in fast.history] == [4, 4]
    assert not literal.converged and len(literal.history) == 25
    assert all(it.n_opened == it.reassigned == it.reassigned_to_opened == 4 for it in literal.history)
    for it in literal.history:
        np.testing.assert_array_equal(it.labels, fast.labels)
        assert it.objective == pytest.approx(fast.objective, rel=1e-9)
    _assert_same_iterations(fast, literal)


def test_some_seeds_open_clusters_during_the_passes():
    """The craft++ comparison above covers passes that open clusters, not only those that do not."""
    opened = 0
    for seed in range(6):
        table, numeric, categorical = _random_mixed(seed, 60, 2, 2)
        data = _encode(table, numeric, categorical, standardize=True)
        opts = engine_options(terms=prior_terms(0.5), lam=2.0, init="craft++", smoothing=0.1, min_variance=0.3,
                               max_iter=25)
        opened += sum(record.n_opened for record in _engine.run(data, opts, np.random.default_rng(seed)).history)
    assert opened > 0


def test_pass_opens_clusters_in_row_order_and_later_points_can_join_them():
    table = pd.DataFrame({"x": [0.0, 0.1, 10.0, 10.1, 20.0, 0.05]})
    data = _encode(table, ["x"], [])
    opts = engine_options(terms=prior_terms(0.5), lam=5.0, init="random")
    clusters = _engine.new_clusters(data, np.array([0]), np.ones(1), opts)
    labels, after = _engine.assignment_pass(data, clusters, opts, np.random.default_rng(0))
    # Rows 2 and 4 are beyond lambda + D F0 from everything before them; row 3 joins row 2's cluster.
    assert after.n_clusters == 3
    np.testing.assert_array_equal(labels, [0, 0, 1, 1, 2, 0])


def test_predict_on_training_data_reproduces_labels_after_convergence():
    from craft import CRAFT

    table, numeric, categorical = _random_mixed(11, 300, 3, 3)
    model = CRAFT(k=3, random_state=0).fit(table)
    assert model.converged_
    np.testing.assert_array_equal(model.predict(table), model.labels_)


def test_no_nan_or_inf_reaches_results_with_singletons_and_constant_columns():
    table = pd.DataFrame({"x": [1.0, 1.0, 1.0, 50.0], "y": [0.0, 0.0, 0.0, 0.0], "c": ["a", "a", "b", "z"]})
    data = _encode(table, ["x", "y"], ["c"], standardize=True)
    opts = engine_options(terms=prior_terms(0.5), lam=0.01, init="random")
    result = _engine.run(data, opts, np.random.default_rng(0))
    assert np.isfinite(result.objective)
    assert np.isfinite(result.clusters.variances).all() and (result.clusters.variances > 0).all()
    assert np.isfinite(result.clusters.log_eta).all()


def test_selection_ties_go_to_the_lower_feature_index():
    table = pd.DataFrame({"a": [0.0, 1.0, 2.0, 3.0], "b": [0.0, 1.0, 2.0, 3.0], "c": [0.0, 1.0, 2.0, 3.0]})
    data = _encode(table, ["a", "b", "c"], [])
    opts = engine_options(terms=prior_terms(1 / 3), lam=1.0)
    clusters, _ = _engine.fit_clusters(data, np.zeros(4, dtype=np.int64), 1, opts)
    np.testing.assert_array_equal(clusters.weights, [[1, 0, 0]])


def test_approximate_budget_thresholds():
    table = pd.DataFrame(
        {"tight": [0.0, 0.1, 0.0, 0.1], "loose": [0.0, 5.0, -5.0, 3.0], "same": list("aaaa"), "mixed": list("abcd")}
    )
    data = _encode(table, ["tight", "loose"], ["same", "mixed"])
    opts = engine_options(terms=prior_terms(0.5), lam=1.0, budget="approximate", eps_v=0.5, eps_c=0.5)
    clusters, _ = _engine.fit_clusters(data, np.zeros(4, dtype=np.int64), 1, opts)
    # A single cluster's categorical gain is 0 (eta_k = eta_0), so no categorical feature passes.
    np.testing.assert_array_equal(clusters.weights, [[1, 0, 0, 0]])


# ---------------------------------------------------------------------------
# Degenerate cases of the supplement


def test_algorithm2_distance_is_the_engines_categorical_cost_without_selection():
    rng = np.random.default_rng(0)
    x = rng.integers(0, 2, (12, 5))
    mu = rng.uniform(0.05, 0.95, (3, 5))
    direct = binary_discrepancy(x, mu)
    # -sum_d [x log mu + (1 - x) log(1 - mu)]
    likelihood = -(x @ np.log(mu).T + (1 - x) @ np.log1p(-mu).T)
    np.testing.assert_allclose(direct, likelihood, rtol=1e-12)
    # And the engine's categorical cost with every feature selected and no F terms.
    table = pd.DataFrame(x.astype(str), columns=[f"x{j}" for j in range(5)])
    data = _encode(table, [], list(table.columns))
    log_eta = np.hstack([np.log(np.column_stack([1 - mu[:, j], mu[:, j]])) for j in range(5)])
    clusters = _engine.Clusters(np.zeros((3, 0)), np.zeros((3, 0)), log_eta, np.ones((3, 5)))
    np.testing.assert_allclose(_engine.cost_matrix(data, clusters, NO_SELECTION), direct, rtol=1e-12)


def test_binary_entropy():
    np.testing.assert_allclose(binary_entropy(np.array([0.0, 0.5, 1.0])), [0.0, math.log(2), 0.0])


def test_algorithm2_finds_two_binary_clusters_and_its_objective():
    rng = np.random.default_rng(0)
    prototype = np.repeat([[1] * 5 + [0] * 5, [0] * 5 + [1] * 5], 30, axis=0)
    flips = rng.random(prototype.shape) < 0.05
    x = np.where(flips, 1 - prototype, prototype)
    labels, objective = entropy_clustering(x, lam=60.0, random_state=0)
    truth = np.repeat([0, 1], 30)
    from sklearn.metrics import adjusted_rand_score

    assert adjusted_rand_score(truth, labels) == 1.0
    mu = np.vstack([x[labels == k].mean(axis=0) for k in range(2)])
    expected = 30 * binary_entropy(mu).sum() + 60.0 * 2
    assert objective == pytest.approx(expected)


def test_dp_means_special_case_agrees_with_the_dp_means_baseline():
    from craft.baselines import DPMeans
    from sklearn.metrics import adjusted_rand_score

    rng = np.random.default_rng(1)
    centres = np.array([[0, 0], [6, 0], [0, 6]])
    x = np.vstack([c + rng.normal(0, 0.4, (25, 2)) for c in centres])
    labels, objective = dp_means(x, lam=8.0, random_state=0)
    baseline = DPMeans(lam=8.0, init="random", random_state=0).fit(x)
    assert adjusted_rand_score(labels, baseline.labels_) == 1.0
    within = sum(((x[labels == k] - x[labels == k].mean(axis=0)) ** 2).sum() for k in np.unique(labels))
    assert objective == pytest.approx(within + 8.0 * 3, rel=1e-9)


def test_parallel_and_serial_kernels_agree_bit_for_bit(monkeypatch):
    from craft import _kernels

    table, numeric, categorical = _random_mixed(5, 3000, 3, 3)
    data = _encode(table, numeric, categorical, standardize=True)
    opts = engine_options(terms=prior_terms(0.5), lam=1.0)
    clusters, _ = _engine.fit_clusters(data, np.random.default_rng(0).integers(0, 6, 3000), 6, opts)
    monkeypatch.setattr(_kernels, "_PARALLEL_WORK", 10**12)
    serial = _engine.nearest_cluster(data, clusters, opts.terms)
    monkeypatch.setattr(_kernels, "_PARALLEL_WORK", 0)
    parallel = _engine.nearest_cluster(data, clusters, opts.terms)
    np.testing.assert_array_equal(serial[0], parallel[0])
    np.testing.assert_array_equal(serial[1], parallel[1])


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), n_clusters=st.integers(1, 5), m=st.sampled_from([0.2, 0.5, 0.8]),
       rho_selection=st.sampled_from(["paper", "shrink"]))
def test_each_pass_selects_what_the_inspected_selection_shows(seed, n_clusters, m, rho_selection):
    # The pass's update decides the fixed budget without the cuts feature_selection shows: the same decision.
    rng = np.random.default_rng(seed)
    table = pd.DataFrame({f"x{j}": rng.normal(size=60) * rng.uniform(0.1, 3.0) for j in range(6)})
    for q in range(4):
        table[f"c{q}"] = rng.choice(list("abcd")[: 2 + q % 3], size=60)
    data = _encode(table, [f"x{j}" for j in range(6)], [f"c{q}" for q in range(4)])
    opts = engine_options(terms=prior_terms(m), lam=1.0, rho_selection=rho_selection)
    labels = np.arange(60) % n_clusters
    stats = _engine.statistics(data, labels, n_clusters)
    _, variances = _engine.raw_variances(stats, data)
    log_eta_k = _engine.log_eta(data, stats, opts.smoothing)
    shown = _engine.feature_selection(data, stats, variances, log_eta_k, opts).selected
    np.testing.assert_array_equal(_engine.select_features(data, stats, variances, log_eta_k, opts), shown.astype(float))


def test_distinct_rows_look_past_a_head_of_repeated_rows():
    # The first 1,000 rows repeat three rows; the next 1,000 are all different.
    head = pd.DataFrame({"x": [0.0, 1.0, 2.0] * 333 + [0.0], "c": ["a", "b", "b"] * 333 + ["a"]})
    tail = pd.DataFrame({"x": np.arange(1_000, dtype=float) + 10.0, "c": ["a"] * 1_000})
    data = _encode(pd.concat([head, tail], ignore_index=True), ["x"], ["c"])
    backend = _engine.InMemory(data)
    assert backend.distinct_rows(5) == 5
    assert backend.distinct_rows(10_000) == 1_003
    assert _engine.InMemory(_encode(head, ["x"], ["c"])).distinct_rows(5) == 3
