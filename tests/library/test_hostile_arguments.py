"""Hostile arguments to the library's functions (issue 31, items 5, 11-13).

Each runaway or confusing argument is refused before any work, with a
message that names the argument and says why, in the caller's terms.
"""

from __future__ import annotations

import io
import json
import time
import warnings
import zipfile

import numpy as np
import pandas as pd
import pytest

import craft
from craft import CRAFT, CraftInputError, cards, datasets, path, stability


@pytest.fixture(scope="module")
def wine():
    X, _ = datasets.load("wine")
    return X, CRAFT(k=3, n_init=1, random_state=0).fit(X)


def _without_labels(model) -> CRAFT:
    """``model`` as a Dask fit's file loads: everything but the labels of its rows."""
    buffer = io.BytesIO()
    model.save(buffer)
    with zipfile.ZipFile(io.BytesIO(buffer.getvalue())) as archive:
        header = json.loads(archive.read("model.json"))
        with np.load(io.BytesIO(archive.read("arrays.npz"))) as arrays:
            contents = {name: arrays[name] for name in arrays.files if name != "labels"}
    header["fitted"]["has_labels"] = False
    header["estimator"] = "DaskCRAFT"
    header.pop("arrays_sha256")
    raw = io.BytesIO()
    np.savez(raw, **contents)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("model.json", json.dumps(header))
        archive.writestr("arrays.npz", raw.getvalue())
    return craft.load(out.getvalue())


def test_a_model_without_row_labels_says_what_each_function_lacks(wine):
    X, model = wine
    loaded = _without_labels(model)
    assert loaded.labels_ is None
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))  # what the file holds still works
    lacks = r"holds no labels of the rows it was fitted on \(labels_ is None: a DaskCRAFT fit"
    with pytest.raises(CraftInputError, match=lacks + r".*cost_silhouette"):
        stability.cost_silhouette(loaded, X)
    with pytest.raises(CraftInputError, match=lacks + r".*bootstrap_stability"):
        stability.bootstrap_stability(loaded, X, n_resamples=2)
    with pytest.raises(CraftInputError, match=lacks + r".*a cluster card"):
        cards.cluster_card(loaded, X, 0)


def test_cost_silhouette_on_another_table_names_the_row_counts(wine):
    X, model = wine
    with pytest.raises(CraftInputError, match=r"X has 100 rows but the model was fitted on 178"):
        stability.cost_silhouette(model, X.iloc[:100])


@pytest.mark.parametrize("n_rows", [-1, 2.5, True, "3"])
def test_cluster_card_refuses_a_row_count_that_is_not_a_count(wine, n_rows):
    X, model = wine
    with pytest.raises(CraftInputError, match=r"n_rows=.* must be an integer >= 0"):
        cards.cluster_card(model, X, 0, n_rows=n_rows)
    costs = model.cost_terms(X).total
    with pytest.raises(CraftInputError, match=r"n=-1 must be an integer >= 0"):
        cards.paragons(model, X, 0, costs, n=-1)
    assert cards.cluster_card(model, X, 0, n_rows=0).paragons.empty


def test_k_evidence_over_a_thousand_ks_is_refused_at_once(wine):
    X, model = wine
    started = time.perf_counter()
    with pytest.raises(CraftInputError, match=r"ks holds 1,000 values of k; k_evidence takes at most 200 \(as a path's "
                                              r"values\): each k is a whole fit and n_resamples refits"):
        stability.k_evidence(model.get_params(), X, range(1, 1001))
    with pytest.raises(CraftInputError, match=r"ks holds 1,000,000,000 values"):
        stability.k_evidence(model.get_params(), X, range(1, 10**9 + 1))
    with pytest.raises(CraftInputError, match=r"n_resamples=0 must be an integer from 1 to 500"):
        stability.k_evidence(model.get_params(), X, [2, 3], n_resamples=0)
    with pytest.raises(CraftInputError, match=r"each an integer at least 1"):
        stability.k_evidence(model.get_params(), X, [2.5])  # type: ignore[list-item]
    assert time.perf_counter() - started < 5


def test_tiny_tables_are_refused_in_the_tables_terms():
    table = pd.DataFrame({"x": [0.0, 10.0, 0.5], "c": ["a", "b", "a"]})
    model = CRAFT(k=2, n_init=1, random_state=0).fit(table)
    with pytest.raises(CraftInputError, match=r"Your table has 3 rows and the model was fitted with k=2: .*at least 8 rows"):
        stability.bootstrap_stability(model, table, n_resamples=20, random_state=0)
    with pytest.raises(CraftInputError, match=r"Your table has 3 rows, too few to weigh k = 2, 3: .*k_evidence needs a "
                                              r"larger table"):
        stability.k_evidence(model.get_params(), table, [1, 2, 3], n_resamples=5, random_state=0)
    with pytest.raises(CraftInputError, match=r"Your table has 3 rows: a subsample of fraction=0.5 holds 2"):
        stability.bootstrap_stability(CRAFT(k=3, n_init=1, random_state=0).fit(table), table, method="subsample",
                                      fraction=0.5)


def test_a_path_over_a_text_knob_is_refused_clearly(wine):
    X, model = wine
    with pytest.raises(CraftInputError, match=r"missing='impute' is not a finite number. For a knob that takes text"):
        path.fit_path(CRAFT(k=3, n_init=1), X, "missing", ["impute", "marginalise"])
    with pytest.raises(CraftInputError, match=r"standardize=True is not a finite number"):
        path.fit_path(CRAFT(k=3, n_init=1), X, "standardize", [True, False])
    with pytest.raises(CraftInputError, match=r"got 1,000,000"):
        path.fit_path(CRAFT(k=3, n_init=1), X, "k", range(10**6))


def test_unused_categories_are_not_reported_as_unseen_values():
    X = pd.DataFrame({"x": np.r_[np.zeros(45), np.ones(45) * 5.0], "c": ["a", "b", "c"] * 30})
    model = CRAFT(k=2, n_init=1, random_state=0).fit(X)
    scored = X.astype({"c": pd.CategoricalDtype(["a", "b", "c", "q", "zz"])})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(model.predict(scored), model.predict(X))
    # A category some row holds is still reported.
    scored.loc[0, "c"] = "q"
    with pytest.warns(UserWarning, match=r"Column 'c': 1 of 90 row\(s\) hold values not seen in fit \('q'\)"):
        model.predict(scored)
