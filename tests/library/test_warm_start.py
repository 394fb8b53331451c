"""Warm starts (``CRAFT(warm_start=True)``, ``craft.warm_refit``) and restarts on threads (``n_jobs``).

A warm fit is one run from the previous fit's partition at the new
parameters; scikit-learn's convention (``GaussianMixture``) is that the
parameter is read at ``fit``, the first fit is cold, and anything but the
previous table refits cold. Threads must not change any result.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone

from craft import CRAFT, CraftInputError, datasets, synthetic, warm_refit
from craft.relabel import changed_share, match_clusters, relabel


@pytest.fixture(scope="module")
def zoo():
    X, _ = datasets.load("zoo")
    return X


@pytest.fixture(scope="module")
def spambase():
    X, _ = datasets.load("spambase")
    return X.iloc[:1500]


def quiet_fit(model, X):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return model.fit(X)


def assert_same_partition(a: CRAFT, b: CRAFT):
    np.testing.assert_array_equal(a.labels_, b.labels_)
    np.testing.assert_array_equal(a.feature_mask_, b.feature_mask_)
    assert a.objective_ == b.objective_
    assert a.lam_ == b.lam_


# ----------------------------------------------------------------------
# The convention


def test_first_fit_is_cold_and_the_second_warm(zoo):
    model = quiet_fit(CRAFT(m=0.5, k=4, warm_start=True, random_state=0), zoo)
    assert model.warm_started_ is False
    cold = quiet_fit(CRAFT(m=0.5, k=4, random_state=0), zoo)
    assert_same_partition(model, cold)  # the first fit of a warm-start model is the cold fit
    model.set_params(m=0.6)
    quiet_fit(model, zoo)
    assert model.warm_started_ is True
    assert model.n_clusters_ == 4
    # One run, not restarts: every record of the kept run is restart 0 and the fit ran few passes.
    assert {record.restart for record in model.history_} == {0}


def test_warm_start_off_refits_cold(zoo):
    model = quiet_fit(CRAFT(m=0.5, k=4, random_state=0), zoo)
    model.set_params(m=0.6)
    quiet_fit(model, zoo)
    assert model.warm_started_ is False
    assert_same_partition(model, quiet_fit(CRAFT(m=0.6, k=4, random_state=0), zoo))


@pytest.mark.parametrize(
    "params",
    [{"k": 4}, {"lam": 30.0}, {}, {"k": 3, "k_method": "farthest_first"}, {"k": 3, "noise": True}],
    ids=["k-search", "lam", "default-lambda", "farthest-first", "noise"],
)
def test_a_warm_fit_at_unchanged_parameters_is_the_fit_itself(zoo, params):
    # The previous fit converged: its partition is a fixed point of the passes at its own parameters.
    model = quiet_fit(CRAFT(m=0.5, random_state=2, **params), zoo)
    again = warm_refit(model, zoo)
    assert again.warm_started_
    assert_same_partition(again, model)
    assert again.n_noise_ == model.n_noise_


def test_warm_refit_leaves_the_model_and_is_deterministic(spambase):
    model = quiet_fit(CRAFT(m=0.5, k=2, random_state=0), spambase)
    labels, objective, params = model.labels_.copy(), model.objective_, model.get_params()
    first = warm_refit(model, spambase, m=0.55)
    second = warm_refit(model, spambase, m=0.55)
    assert first is not model and type(first) is CRAFT
    assert first.warm_started_ and first.m == 0.55 and first.warm_start is True
    assert_same_partition(first, second)
    np.testing.assert_array_equal(model.labels_, labels)
    assert model.objective_ == objective and model.get_params() == params


def test_warm_refit_needs_a_fitted_model(zoo):
    with pytest.raises(CraftInputError, match="needs a fitted model"):
        warm_refit(CRAFT(), zoo)


def test_warm_start_is_a_parameter_clone_keeps(zoo):
    model = CRAFT(warm_start=True, n_jobs=2)
    assert clone(model).get_params()["warm_start"] is True
    assert clone(model).get_params()["n_jobs"] == 2
    with pytest.raises(CraftInputError, match="warm_start='yes' is invalid"):
        CRAFT(warm_start="yes").fit(zoo)
    with pytest.raises(CraftInputError, match="n_jobs=0 is invalid"):
        CRAFT(n_jobs=0).fit(zoo)


def _other_values(X: pd.DataFrame) -> pd.DataFrame:
    other = X.copy()
    other[X.columns[0]] = X[X.columns[0]] * 2.0 + 1.0
    return other


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (lambda X: X.iloc[:-3], "row count"),
        (lambda X: X.drop(columns=[X.columns[1]]), "columns"),
        # Same columns and rows, other values: the encoding differs, so the previous statistics mean nothing here.
        (_other_values, "values"),
    ],
    ids=["fewer-rows", "other-columns", "same-shape-other-values"],
)
def test_another_table_refits_cold_with_a_warning(change, named):
    X = synthetic.fig2_numeric(random_state=0)[0]
    model = quiet_fit(CRAFT(m=0.5, k=3, warm_start=True, random_state=0), X)
    other = change(X)
    with pytest.warns(UserWarning, match=f"differs from the previous fit's in .*{named}"):
        model.fit(other)
    assert model.warm_started_ is False
    assert_same_partition(model, quiet_fit(CRAFT(m=0.5, k=3, random_state=0), other))


def test_a_warm_search_that_misses_a_smaller_k_pools_the_cheapest_clusters(zoo):
    # From a partition of 5 clusters no λ closes clusters (a pass only empties them): the start pools its
    # cheapest pair and the search runs from there, so the other clusters keep their rows.
    model = quiet_fit(CRAFT(m=0.5, k=5, random_state=1), zoo)
    refit = warm_refit(model, zoo, k=4)
    assert refit.warm_started_ and refit.n_clusters_ == 4
    cold = quiet_fit(CRAFT(m=0.5, k=4, random_state=1), zoo)
    kept = changed_share(relabel(refit.labels_, match_clusters(refit.labels_, model.labels_)), model.labels_)
    drawn = changed_share(relabel(cold.labels_, match_clusters(cold.labels_, model.labels_)), model.labels_)
    assert kept < drawn, (kept, drawn)
    # Three of the four clusters are three of the model's five, nearly row for row.
    jaccard = [max(np.mean((refit.labels_ == a) & (model.labels_ == b)) / np.mean((refit.labels_ == a) | (model.labels_ == b))
                   for b in range(5)) for a in range(4)]
    assert sum(value >= 0.8 for value in jaccard) >= 3, jaccard
    assert warm_refit(model, zoo, k=1).warm_started_


def test_a_warm_search_that_misses_k_falls_back_to_the_cold_fit(zoo):
    # Pins keep the start's clusters the person's: no pooling, so k = 3 is not found warm.
    pins = {(None, zoo.columns[0]): True}
    model = quiet_fit(CRAFT(m=0.5, k=5, random_state=1, pins=pins), zoo)
    refit = warm_refit(model, zoo, k=3)
    assert refit.warm_started_ is False
    assert refit.n_clusters_ == 3
    assert_same_partition(refit, quiet_fit(CRAFT(m=0.5, k=3, random_state=1, pins=pins), zoo))


def test_a_warm_fit_follows_the_previous_clusters(spambase):
    # One notch of m: the warm fit starts from the previous partition, so few rows move,
    # while the cold fit's restarts may land anywhere.
    model = quiet_fit(CRAFT(m=0.5, k=2, random_state=0), spambase)
    refit = warm_refit(model, spambase, m=0.55)
    moved = np.mean(refit.labels_ != model.labels_)
    assert moved < 0.2, moved


# ----------------------------------------------------------------------
# Threads


def test_threads_do_not_change_the_fit(spambase):
    fits = [quiet_fit(CRAFT(m=0.5, k=2, random_state=3, n_jobs=n_jobs), spambase) for n_jobs in (1, 2, 4)]
    for other in fits[1:]:
        assert_same_partition(fits[0], other)
        assert [r.objective for r in other.history_] == [r.objective for r in fits[0].history_]


@settings(max_examples=12, deadline=None)
@given(
    seed=st.integers(0, 2**16),
    m=st.sampled_from([0.3, 0.5, 0.7]),
    sizing=st.sampled_from([{"k": 3}, {"lam": 20.0}, {}, {"k": 3, "noise": True}, {"k": 2, "rho_selection": "shrink"}]),
)
def test_threads_do_not_change_any_fit(zoo, seed, m, sizing):
    one = quiet_fit(CRAFT(m=m, n_init=4, random_state=seed, n_jobs=1, **sizing), zoo)
    two = quiet_fit(CRAFT(m=m, n_init=4, random_state=seed, n_jobs=2, **sizing), zoo)
    assert_same_partition(one, two)
    assert one.n_noise_ == two.n_noise_


def test_a_callback_error_in_a_thread_stops_the_fit(zoo):
    seen = []

    def stop_at_the_third(record):
        seen.append(record)
        if len(seen) == 3:
            raise KeyboardInterrupt("stopped")

    with pytest.raises(KeyboardInterrupt, match="stopped"):
        CRAFT(lam=30.0, n_init=8, n_jobs=2, random_state=0).fit(zoo, callback=stop_at_the_third)
    assert len(seen) < 8 * 3  # the restarts not yet started did not run


def test_a_refused_restart_is_refused_with_threads():
    # test_estimator's tiny-lambda table: every restart opens clusters past the limit, so the fit is refused.
    rng = np.random.default_rng(0)
    table = pd.DataFrame({"x": rng.normal(size=300), "y": rng.normal(size=300), "c": rng.choice(list("abc"), 300)})
    with pytest.raises(CraftInputError, match="opens more than 150 clusters on 300 rows"):
        CRAFT(lam=1e-6, n_init=4, n_jobs=2, random_state=0).fit(table)


def test_threads_by_default_only_where_a_pass_has_the_work_for_them(monkeypatch, spambase):
    """n_jobs=None: threads where a pass's work reaches THREADED_CELLS (a numeric cell counted as a quarter):
    Splice's 3,190 rows x 60 categorical columns, not Spambase's 4,601 x 57 numeric ones."""
    from craft import _threads

    monkeypatch.setattr(_threads, "_thread_count", lambda n_jobs: 2)
    splice = datasets.load("splice")[0]
    encoded = {name: CRAFT(m=0.5, k=2).fit(table)._encoded(table) for name, table in
               (("spambase", spambase), ("splice", splice))}
    assert _threads._threads_for(encoded["spambase"], None) == 1
    assert _threads._threads_for(encoded["splice"], None) == 2
    assert _threads._threads_for(encoded["spambase"], 2) == 2  # an explicit n_jobs is honoured
