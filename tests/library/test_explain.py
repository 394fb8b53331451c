"""``CRAFT.explain``: each feature's part of a row's cost and margin, summing exactly to ``assign``'s."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from craft import CRAFT, datasets


def _fit(X, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return CRAFT(random_state=0, **params).fit(X)


@pytest.fixture(scope="module")
def tables():
    return {name: datasets.load(name)[0] for name in ("soybean", "credit-g", "zoo", "wine")}


@settings(max_examples=25, deadline=None)
@given(
    name=st.sampled_from(["soybean", "credit-g", "zoo", "wine"]),
    params=st.sampled_from([{"k": 3}, {"k": 1}, {"k": 4, "noise": True}, {"k": 3, "m": 0.8, "budget": "approximate"},
                            {"k": 2, "m": 0.2, "missing": "impute"}, {"lam": 20.0}]),
)
def test_rows_sum_to_assigns_cost_and_margin(tables, name, params):
    X = tables[name]
    model = _fit(X, **params)
    assigned = model.assign(X)
    why = model.explain(X)
    np.testing.assert_allclose(why.cost.sum(axis=1), assigned["cost"], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(why.margin.sum(axis=1), assigned["margin"], rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(np.where(assigned["fits_no_cluster"] & model.noise, -1, why.cluster), assigned["cluster"])
    assert list(why.cost.columns) == [c for c in X.columns if c in set(model.engine_features_)]
    assert why.cost.index.equals(X.index)


def test_a_hand_computed_row():
    # One numeric and one categorical feature, both selected by each cluster (m = 0.5 of each kind rounds to 1).
    X = pd.DataFrame({"a": [0.0, 0.2, 5.0, 5.2], "c": ["x", "x", "y", "y"]})
    model = _fit(X, m=0.5, k=2, standardize=False)
    why = model.explain(X.iloc[[0]])
    k = int(why.cluster[0])
    f_delta = model.options_.terms.f_delta
    mean, variance = model.clusters_.means[k, 0], model.clusters_.variances[k, 0]
    level = model.encoder_.levels_[0].index("x")
    assert why.cost.loc[0, "a"] == pytest.approx((0.0 - mean) ** 2 / (2 * variance) + f_delta, rel=1e-12)
    assert why.cost.loc[0, "c"] == pytest.approx(-model.clusters_.log_eta[k, level] + f_delta, rel=1e-12)


def test_missing_and_unseen_cells_add_only_their_selection_term():
    X = pd.DataFrame({"a": [0.0, 0.2, 5.0, 5.2, 0.1], "c": ["x", "x", "y", "y", "x"]})
    model = _fit(X, m=0.5, k=2)
    with pytest.warns(UserWarning, match="not seen in fit"):
        why = model.explain(pd.DataFrame({"a": [np.nan], "c": ["never seen"]}))
    f_delta = model.options_.terms.f_delta
    selected = model.clusters_.weights[why.cluster[0]]
    np.testing.assert_allclose(why.cost.to_numpy()[0], selected * f_delta)


def test_a_one_cluster_model_has_no_runner_up():
    X, _ = datasets.load("zoo")
    why = _fit(X, k=1).explain(X)
    assert (why.runner_up == -1).all()
    assert (why.margin.to_numpy() == 0).all()
