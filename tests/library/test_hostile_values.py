"""Values and parameters that are easy to misread or misreport, generated here."""

import warnings

import numpy as np
import pandas as pd
import pytest

from craft import CRAFT, infer_schema, metrics
from craft.exceptions import CraftInputError


@pytest.fixture
def fitted():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"x": np.r_[np.zeros(20), np.full(20, 5.0)] + rng.normal(size=40), "c": ["a", "b"] * 20})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return X, CRAFT(k=2, n_init=1, random_state=0).fit(X)


@pytest.mark.parametrize("values", [pd.date_range("2020-01-01", periods=40),
                                    pd.to_timedelta(np.arange(40), unit="D")])
def test_predict_refuses_dates_in_a_numeric_column(fitted, values):
    X, model = fitted
    with pytest.raises(CraftInputError, match=r"Column 'x' is numeric in the schema but holds (datetime|timedelta)"):
        model.predict(X.assign(x=values))


def test_predict_with_a_list_cell_is_an_input_error(fitted):
    X, model = fitted
    cells = X["c"].astype(object).copy()
    cells.iloc[3] = ["a", "b"]
    with pytest.raises(CraftInputError, match=r"Column 'c' holds cells of type list"):
        model.predict(X.assign(c=cells))


@pytest.mark.parametrize("cell", [[1, 2], np.array([1, 2]), {"a": 1}])
def test_fit_on_a_nested_categorical_column_is_an_input_error(cell):
    X = pd.DataFrame({"x": np.arange(10.0), "tags": [cell, "p"] * 5})
    with pytest.raises(CraftInputError, match=r"Column 'tags' holds cells of type (list|ndarray|dict)"):
        CRAFT(k=2, categorical=["tags"]).fit(X)


def test_mixed_one_true_and_text_one_are_reported():
    X = pd.DataFrame({"v": [1, True, "1", "x"] * 10, "n": np.arange(40.0)})
    reason = infer_schema(X).reasons["v"]
    assert "1 (int) and True (bool) are equal in Python and form one level" in reason


@pytest.mark.parametrize(("m", "message"), [
    (5e-324, r"m=5e-324 is too close to 0 for the Beta prior"),
    (1e-300, r"m=1e-300 with rho=.* gives Beta shapes"),
])
def test_tiny_m_is_blamed_on_m_not_rho(m, message):
    X = pd.DataFrame({"x": np.arange(10.0)})
    with pytest.raises(CraftInputError, match=message):
        CRAFT(m=m, k=2).fit(X)


def test_missing_labels_name_the_column():
    y = pd.Series(["a", None] * 5, name="species")
    with pytest.raises(CraftInputError, match=r"y_true \(the label column 'species'\) has 5 missing values out of 10"):
        metrics.evaluate(y, np.zeros(10, dtype=int))


def test_fit_refuses_too_many_columns_before_the_work():
    from craft.limits import MAX_COLUMNS

    X = pd.DataFrame(np.zeros((4, MAX_COLUMNS + 1)), columns=[f"c{i}" for i in range(MAX_COLUMNS + 1)])
    with pytest.raises(CraftInputError, match="X has 100,001 columns; CRAFT takes at most 100,000 columns"):
        CRAFT(k=2, categorical=[]).fit(X)


# ---------------------------------------------------------------------------
# Parameters at the edge of double precision, named by the parameter at fault


def _two_groups():
    rng = np.random.default_rng(1)
    group = np.arange(60) % 2
    return pd.DataFrame({"x": rng.normal(4.0 * group, 1.0), "c": np.where(group, "a", "b"),
                         "d": rng.choice(list("pqr"), 60)})


def test_tiny_smoothing_is_refused_with_its_bound():
    """smoothing=5e-324 underflowed eta to 0: the objective was NaN and K = 4 on two groups."""
    X = _two_groups()
    for tiny in (5e-324, 1e-300, 1e-7):
        with pytest.raises(CraftInputError, match=rf"Parameter smoothing={tiny!r} is invalid: it must be a number "
                                                  r">= 1e-06 \(a smaller pseudo-count"):
            CRAFT(k=2, n_init=1, smoothing=tiny).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = CRAFT(k=2, n_init=1, random_state=0, smoothing=1e-6).fit(X)
    assert np.isfinite(model.objective_) and model.n_clusters_ == 2


@pytest.mark.parametrize("m", [0.5, 0.2, 0.9])
def test_tiny_rho_is_blamed_on_rho_not_m(m):
    X = _two_groups()
    for tiny in (5e-324, 1e-300):
        with pytest.raises(CraftInputError, match=rf"rho={tiny!r} is too small for m={m}: rho/\(m\(1-m\)\)") as error:
            CRAFT(k=2, n_init=1, m=m, rho=tiny).fit(X)
        assert "m*m underflows" not in str(error.value) and "use rho >=" in str(error.value)


# ---------------------------------------------------------------------------
# predict with levels of another type, or not seen in fit


def _coded(n=90):
    rng = np.random.default_rng(3)
    group = np.arange(n) % 3
    return pd.DataFrame({"x": rng.normal(3.0 * group, 0.5), "code": np.array([10, 20, 30])[group],
                         "y": rng.normal(-2.0 * group, 0.5)})


def test_predict_with_levels_sent_as_text_matches_them_and_says_so():
    """`code` fitted as 10/20/30 and predicted as "10"/"20"/"30" was every level unseen: 44 % agreement, no word."""
    X = _coded()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = CRAFT(k=3, n_init=1, random_state=0, categorical=["code"]).fit(X)
    as_text = X.assign(code=X["code"].astype(str))
    with pytest.warns(UserWarning, match=r"Column 'code': 90 row\(s\) hold text values \('10', '20', '30'\) read as "
                                         r"the fitted levels 10, 20, 30 \(the same written form, another type\)"):
        labels = model.predict(as_text)
    np.testing.assert_array_equal(labels, model.labels_)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the fitted types: nothing to say
        np.testing.assert_array_equal(model.predict(X), model.labels_)


def test_predict_counts_and_names_unseen_levels():
    X = _coded()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = CRAFT(k=3, n_init=1, random_state=0, categorical=["code"]).fit(X)
    new = X.assign(code=X["code"].where(np.arange(90) % 9 != 0, 40).astype(object))
    new.loc[1, "code"] = None  # missing: handled as in fit, not an unseen level
    with pytest.warns(UserWarning, match=r"Column 'code': 10 of 90 row\(s\) hold values not seen in fit \(40\); "
                                         r"they add the same cost to every cluster"):
        model.predict(new)


def test_only_the_exact_written_form_is_matched():
    """'10.0' or ' 10' are not the level 10: they are counted as unseen, never guessed."""
    X = _coded()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = CRAFT(k=3, n_init=1, random_state=0, categorical=["code"]).fit(X)
    new = X.assign(code=np.where(np.arange(90) % 2, "10.0", " 10"))
    with pytest.warns(UserWarning, match=r"Column 'code': 90 of 90 row\(s\) hold values not seen in fit "
                                         r"\(' 10', '10.0'\)"):
        model.predict(new)
