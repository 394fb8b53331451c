"""Missing cells marginalised (``missing="marginalise"``): nothing to a row's cost, nothing to its cluster.

The impute mode keeps its own tests (the literal transcription in
``test_engine.py`` runs on it); these pin the marginalised model: a
hand-computed tiny case, the invariances that define "contributes nothing",
the kernel against the matrix formula, and finiteness under heavy missingness.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from craft import CRAFT, CraftInputError
from craft import _engine
from craft.encoding import Encoder
from craft.priors import prior_terms
from library_helpers import engine_options


def options(**changes) -> _engine.Options:
    return engine_options(terms=prior_terms(0.5), lam=1.0, smoothing=1.0, min_variance=0.03, **changes)


def tiny_table() -> pd.DataFrame:
    return pd.DataFrame({"x": [0.0, 2.0, np.nan, 10.0], "c": ["a", None, "a", "b"]})


def test_tiny_case_by_hand():
    encoder = Encoder(["x"], ["c"], standardize=False, missing="marginalise")
    data = encoder.fit_transform(tiny_table())
    # Observed x: 0, 2, 10 -> mean 4, variance (16 + 4 + 36) / 3; the missing cell is neither.
    assert encoder.impute_[0] == 4.0
    assert data.global_var[0] == pytest.approx(56 / 3)
    np.testing.assert_array_equal(data.observed[:, 0], [True, True, False, True])
    # eta_0 over the 3 observed levels: a 2/3, b 1/3; no "(missing)" level.
    assert encoder.level_names() == [["a", "b"]]
    np.testing.assert_allclose(data.eta0, [2 / 3, 1 / 3])
    np.testing.assert_array_equal(data.codes[:, 0], [0, -1, 0, 1])
    assert encoder.n_marginalised_ == {"x": 1, "c": 1} and encoder.n_imputed_ == {}

    opts = options()
    clusters, stats = _engine.fit_clusters(data, np.array([0, 0, 0, 1]), 2, opts)
    # Cluster 0 holds rows 0-2: x observed in rows 0 and 1, c in rows 0 and 2.
    np.testing.assert_array_equal(stats.numeric_counts[:, 0], [2, 1])
    np.testing.assert_allclose(clusters.means[:, 0], [1.0, 10.0])
    # Cluster 0's variance of (0, 2) is 1; the singleton's 0 is floored at 0.03 * 56 / 3.
    np.testing.assert_allclose(clusters.variances[:, 0], [1.0, 0.03 * 56 / 3])
    # eta of cluster 0 on c: (counts (2, 0) + eta_0) / (2 observed + 1).
    np.testing.assert_allclose(np.exp(clusters.log_eta[0]), [(2 + 2 / 3) / 3, (0 + 1 / 3) / 3])

    # Costs with every feature selected: a missing cell adds nothing.
    clusters.weights[:] = 1.0
    costs = _engine.cost_matrix(data, clusters, opts.terms)
    f_delta = 2 * opts.terms.f_delta
    log_eta = clusters.log_eta
    expected_row1 = [(2.0 - 1.0) ** 2 / 2.0 + f_delta, (2.0 - 10.0) ** 2 / (2 * 0.56) + f_delta]
    expected_row2 = [-log_eta[0, 0] + f_delta, -log_eta[1, 0] + f_delta]
    np.testing.assert_allclose(costs[1], expected_row1)
    np.testing.assert_allclose(costs[2], expected_row2)
    best, nearest = _engine.nearest_cluster(data, clusters, opts.terms)
    np.testing.assert_allclose(best, costs.min(axis=1), rtol=1e-12)
    np.testing.assert_array_equal(nearest, costs.argmin(axis=1))

    # The objective's numeric term counts n_kd observed cells: 2 * var / (2 sigma^2) for cluster 0.
    terms = _engine.objective_terms(data, clusters, stats, opts)
    assert terms.numeric == pytest.approx(2 * 1.0 / (2 * 1.0) + 1 * 0.0 / (2 * 0.56))


def test_a_missing_cell_does_not_change_its_clusters_statistics():
    rng = np.random.default_rng(1)
    table = pd.DataFrame({"x": rng.normal(size=40), "y": rng.normal(size=40), "c": rng.choice(list("abc"), 40)})
    labels = rng.integers(3, size=40)
    encoder = Encoder(["x", "y"], ["c"], standardize=False, missing="marginalise")
    holed = table.copy()
    holed.loc[[3, 7], "x"] = np.nan
    holed.loc[[5], "c"] = None
    data = encoder.fit_transform(holed)
    stats = _engine.statistics(data, labels, 3)
    means, variances = _engine.raw_variances(stats, data)
    for k in range(3):
        member = labels == k
        x = table.x[member & ~table.index.isin([3, 7])]
        assert means[k, 0] == pytest.approx(x.mean())
        assert variances[k, 0] == pytest.approx(x.var(ddof=0))
        assert means[k, 1] == pytest.approx(table.y[member].mean())  # y is complete: every member counts
        levels = table.c[member & (table.index != 5)].value_counts()
        np.testing.assert_array_equal(stats.level_counts[k], [levels.get(level, 0) for level in "abc"])
    assert stats.counts.sum() == 40  # every row still belongs to a cluster


def test_a_fully_missing_row_costs_only_the_feature_control_term():
    table = pd.DataFrame({"x": [0.0, 1.0, 5.0, np.nan], "c": ["a", "b", "a", None]})
    data = Encoder(["x"], ["c"], standardize=True, missing="marginalise").fit_transform(table)
    opts = options()
    clusters, _ = _engine.fit_clusters(data, np.array([0, 0, 1, 1]), 2, opts)
    clusters.weights[:] = [[1.0, 1.0], [1.0, 0.0]]
    best, nearest = _engine.nearest_cluster(data, clusters, opts.terms)
    control = clusters.weights.sum(axis=1) * opts.terms.f_delta
    assert best[3] == control.min() and nearest[3] == int(np.argmin(control))


def mixed(n: int, seed: int, rate: float) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    group = rng.integers(3, size=n)
    table = pd.DataFrame(
        {
            "x": rng.normal(3.0 * group, 1.0),
            "y": rng.normal(0.0, 1.0, n),
            "colour": np.array(["red", "green", "blue"])[group],
            "shape": rng.choice(["round", "square", "flat"], n),
        }
    )
    for column in table:
        table.loc[rng.random(n) < rate, column] = np.nan if column in "xy" else None
    return table


def test_adding_a_fully_missing_column_changes_nothing():
    table = mixed(200, 0, 0.2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = CRAFT(k=3, missing="marginalise", random_state=0).fit(table)
        wider = CRAFT(k=3, missing="marginalise", random_state=0).fit(table.assign(empty=np.nan, blank=None))
    np.testing.assert_array_equal(plain.labels_, wider.labels_)
    assert plain.objective_ == wider.objective_
    assert "empty" in wider.schema_.ignored and "blank" in wider.schema_.ignored


def test_a_named_column_without_any_observed_cell_is_refused():
    table = mixed(50, 1, 0.1).assign(empty=np.nan)
    with pytest.raises(CraftInputError, match=r"\['empty'\] have no observed value"):
        CRAFT(categorical=["colour", "shape"], missing="marginalise").fit(table)


def test_unknown_mode_is_refused():
    with pytest.raises(CraftInputError, match="missing='drop' is invalid: it must be one of 'marginalise', 'impute'"):
        CRAFT(missing="drop").fit(mixed(20, 0, 0.0))


def test_without_missing_cells_both_modes_give_the_same_fit():
    table = mixed(150, 2, 0.0)
    impute = CRAFT(k=3, random_state=3, missing="impute").fit(table)
    marginalise = CRAFT(k=3, random_state=3, missing="marginalise").fit(table)
    np.testing.assert_array_equal(impute.labels_, marginalise.labels_)
    assert impute.objective_ == marginalise.objective_


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    rate=st.sampled_from([0.0, 0.3, 0.6, 0.9]),
    budget=st.sampled_from(["fixed", "approximate"]),
    lam=st.one_of(st.none(), st.floats(0.05, 20.0)),
)
def test_finite_results_and_kernel_equals_formula_under_any_missingness(seed, rate, budget, lam):
    table = mixed(60, seed, rate)
    # Keep at least one observed cell per column, as the estimator requires of named columns.
    for column in table:
        if table[column].isna().all():
            table.loc[0, column] = 0.0 if column in "xy" else "red"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = CRAFT(lam=lam, budget=budget, n_init=2, missing="marginalise", categorical=["colour", "shape"],
                      random_state=seed).fit(table)
    clusters = model.clusters_
    for values in (clusters.means, clusters.variances, clusters.log_eta):
        assert np.isfinite(values).all()
    assert np.isfinite(model.objective_) and np.isfinite(model.lam_)
    data = model.encoder_.transform(table)
    costs = _engine.cost_matrix(data, clusters, model.options_.terms)
    assert np.isfinite(costs).all()
    best, _ = _engine.nearest_cluster(data, clusters, model.options_.terms)
    np.testing.assert_allclose(best, costs.min(axis=1), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(costs[np.arange(len(table)), model.predict(table)], best, rtol=1e-9, atol=1e-9)
