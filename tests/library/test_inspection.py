"""The inspection surface: what the engine computed, exposed on the fitted estimator.

Every quantity is checked against the engine's own decision (``clusters_``,
``feature_mask_``, ``objective_``, ``predict``) and against a direct,
slow computation from the paper's formulas on the fitted parameters.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from library_helpers import EXAMPLES, fit_example as _fit, load_example
from craft import CRAFT, CraftInputError, _engine, profiles


def _engine_order_mask(model) -> np.ndarray:
    position = {str(c): j for j, c in enumerate(model.feature_names_in_)}
    return model.feature_mask_[:, [position[name] for name in model.engine_features_]]


@pytest.mark.parametrize("budget", ["fixed", "approximate"])
@pytest.mark.parametrize("name", EXAMPLES)
def test_selection_is_the_engines_decision_on_every_example(name, budget):
    model, _ = _fit(name, budget=budget)
    selection = model.selection_
    np.testing.assert_array_equal(selection.selected, model.clusters_.weights > 0.5)
    np.testing.assert_array_equal(selection.selected, _engine_order_mask(model))
    p = len(model.schema_.numeric)
    if budget == "fixed":
        keep_num, keep_cat = selection.n_keep
        np.testing.assert_array_equal(selection.selected[:, :p], selection.rank[:, :p] <= keep_num)
        np.testing.assert_array_equal(selection.selected[:, p:], selection.rank[:, p:] <= keep_cat)
        # the cut separates kept from dropped scores: variances at or below, gains at or above
        assert (selection.score[:, :p][selection.selected[:, :p]] <= selection.cut[:, :p][selection.selected[:, :p]]).all()
        assert (selection.score[:, :p][~selection.selected[:, :p]] >= selection.cut[:, :p][~selection.selected[:, :p]]).all()
        assert (selection.score[:, p:][selection.selected[:, p:]] >= selection.cut[:, p:][selection.selected[:, p:]]).all()
        assert (selection.score[:, p:][~selection.selected[:, p:]] <= selection.cut[:, p:][~selection.selected[:, p:]]).all()
        np.testing.assert_array_equal(selection.criterion, selection.score)
    else:
        assert selection.n_keep is None
        np.testing.assert_array_equal(selection.selected[:, :p], selection.criterion[:, :p] < model.eps_v)
        np.testing.assert_array_equal(selection.selected[:, p:], selection.criterion[:, p:] > model.eps_c)
    # ranks are permutations 1..n of each kind
    for block in (selection.rank[:, :p], selection.rank[:, p:]):
        np.testing.assert_array_equal(np.sort(block, axis=1), np.tile(np.arange(1, block.shape[1] + 1), (block.shape[0], 1)))


def test_scores_are_the_papers_variance_and_absolute_gain():
    model, X = _fit("mixed_planted")
    data = model.encoder_.transform(X)
    labels = model.labels_
    p = data.n_numeric
    for k in range(model.n_clusters_):
        inside = labels == k
        np.testing.assert_allclose(model.selection_.score[k, :p], data.numeric[inside].var(axis=0), rtol=1e-9, atol=1e-12)
        for q in range(data.n_categorical):
            start, width = data.offsets[q], data.n_levels[q]
            codes = data.codes[inside, q]
            g_d = -data.log_eta0[start + codes].sum()
            g_kd = -model.clusters_.log_eta[k, start + codes].sum()
            assert model.selection_.score[k, p + q] == pytest.approx(g_d - g_kd, rel=1e-9, abs=1e-9)
            assert width > 0


def test_selection_frame_names_every_cell():
    model, _ = _fit("mixed_planted")
    frame = model.selection_frame()
    assert len(frame) == model.n_clusters_ * len(model.engine_features_)
    assert set(frame["kind"]) == {"numeric", "categorical"}
    for row in frame.itertuples():
        column = list(map(str, model.feature_names_in_)).index(row.feature)
        assert row.selected == model.feature_mask_[row.cluster, column]


@pytest.mark.parametrize("name", ["fig1_binary", "fig2_numeric", "mixed_planted", "zoo"])
def test_cost_terms_add_up_to_the_distance_the_pass_uses(name):
    model, X = _fit(name)
    terms = model.cost_terms(X)
    data = model.encoder_.transform(X)
    best, nearest = _engine.nearest_cluster(data, model.clusters_, model.options_.terms)
    np.testing.assert_allclose(terms.total.min(axis=1), best, rtol=1e-10, atol=1e-9)
    np.testing.assert_array_equal(terms.total.argmin(axis=1), model.predict(X))
    np.testing.assert_array_equal(nearest, model.predict(X))
    # the terms from the paper's formula, row by row, for a few rows
    clusters, p = model.clusters_, data.n_numeric
    for row in (0, 7, len(X) - 1):
        x = data.numeric[row]
        numeric = (clusters.weights[:, :p] * (x - clusters.means) ** 2 / (2 * clusters.variances)).sum(axis=1)
        np.testing.assert_allclose(terms.numeric[row], numeric, rtol=1e-9, atol=1e-9)
        own = np.zeros(clusters.n_clusters)
        pooled = np.zeros(clusters.n_clusters)
        for q in range(data.n_categorical):
            position = data.offsets[q] + data.codes[row, q]
            chosen = clusters.weights[:, p + q]
            own += chosen * -clusters.log_eta[:, position]
            pooled += (1 - chosen) * -data.log_eta0[position]
        np.testing.assert_allclose(terms.categorical_selected[row], own, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(terms.categorical_global[row], pooled, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(terms.feature_control[row], clusters.weights.sum(axis=1) * model.options_.terms.f_delta)


@pytest.mark.parametrize("name", ["fig1_binary", "fig3_numeric", "mixed_planted"])
def test_objective_terms_sum_to_the_objective_at_every_iteration(name):
    model, X = _fit(name)
    terms = model.objective_terms_
    assert terms.total == model.objective_
    assert terms.regularization == pytest.approx(model.n_clusters_ * (model.lam_ + len(model.engine_features_) * model.options_.terms.f0))
    assert terms.feature_control == pytest.approx(model.options_.terms.f_delta * model.selection_.selected.sum())
    for record in model.history_:
        state = model.inspect_iteration(X, record.iteration)
        assert state.objective.total == record.objective
        np.testing.assert_array_equal(state.selection.selected, record.feature_mask)
        np.testing.assert_array_equal(state.labels, record.labels)
    # the last iteration's clusters are the fitted ones: the same distances
    last = model.inspect_iteration(X, len(model.history_))
    if model.converged_:
        np.testing.assert_array_equal(model.cost_terms(X, state=last).total, model.cost_terms(X).total)


def test_iteration_and_rows_are_checked():
    model, X = _fit("fig1_binary")
    with pytest.raises(CraftInputError, match=r"iteration=0 must lie in 1\.\."):
        model.inspect_iteration(X, 0)
    with pytest.raises(CraftInputError, match=r"X has 10 rows; the fit had 150"):
        model.inspect_iteration(X.iloc[:10], 1)
    with pytest.raises(CraftInputError, match="lacks the fitted column"):
        model.cost_terms(X.drop(columns=X.columns[0]))


def test_shrunk_selection_is_inspected_like_the_paper_rule():
    table = load_example("mixed_planted", n_samples=150).X
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = CRAFT(m=0.5, k=4, rho=0.02, rho_selection="shrink", n_init=2, random_state=0).fit(table)
    np.testing.assert_array_equal(model.selection_.selected, model.clusters_.weights > 0.5)
    assert isinstance(model.selection_frame(), pd.DataFrame)


def test_a_cluster_that_selects_no_feature_is_warned_about_and_explained():
    X, _, _, used = load_example("credit-g")
    with pytest.warns(UserWarning, match=r"select no feature \(budget='approximate'\)"):
        model = CRAFT(categorical=used, m=0.5, k=2, budget="approximate", eps_c=0.9, n_init=1,
                      random_state=0).fit(X)
    empty = np.flatnonzero(~model.selection_.selected.any(axis=1))
    note = profiles.featureless_note(model)
    assert empty.size and all(f"luster {k} ({model.cluster_sizes_[k]:,} rows)" in note for k in empty)
    # What the note says, from the engine's distance: the cluster's d_nk is the rows' global categorical cost.
    terms = model.cost_terms(X)
    for k in empty:
        assert np.allclose(terms.total[:, k], terms.categorical_global[:, k])
        assert not terms.numeric[:, k].any() and not terms.categorical_selected[:, k].any()
    assert profiles.featureless_note(CRAFT(categorical=used, m=0.5, k=2, n_init=1, random_state=0).fit(X)) is None
