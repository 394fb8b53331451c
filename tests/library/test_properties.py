"""Properties over random mixed tables: ``infer_schema`` then a CRAFT fit
succeed (a label in 0..K-1 for every row, a finite objective, masks of the
right shape) unless the input has one of the faults :func:`_faults` lists,
and then raise ``CraftInputError`` for that fault; nothing else escapes,
whatever the columns hold (missing cells, infinities, huge numbers,
constants, text with formula prefixes or tags, booleans, mixed objects)."""

from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from craft import CRAFT, CraftInputError, Schema, infer_schema

SETTINGS = settings(
    max_examples=60, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

_FLOATS = st.one_of(
    st.floats(-1e6, 1e6, allow_nan=False),
    st.just(math.nan),
    st.sampled_from([0.0, -0.0, 1e300, -1e300, 5e-324, math.inf, -math.inf]),
)
_WORDS = st.sampled_from(
    ["red", "green", "blue", "=SUM(A1)", "+1", "-x", "@me", "<b>x</b>", "<script>alert(1)</script>",
     "é", "", " ", "NA", "?", "1.5", "007"]
)


@st.composite
def _column(draw, n_rows: int):
    kind = draw(st.sampled_from(
        ["float", "float_clean", "int", "small_int", "text", "bool", "category", "object_mixed",
         "constant", "all_missing", "with_missing_text"]
    ))
    if kind == "float":
        values = draw(st.lists(_FLOATS, min_size=n_rows, max_size=n_rows))
        return pd.Series(values, dtype="float64")
    if kind == "float_clean":
        values = draw(st.lists(st.floats(-100, 100, allow_nan=False), min_size=n_rows, max_size=n_rows))
        return pd.Series(values, dtype="float64")
    if kind == "int":
        values = draw(st.lists(st.integers(-2**62, 2**62), min_size=n_rows, max_size=n_rows))
        return pd.Series(values, dtype="int64")
    if kind == "small_int":
        values = draw(st.lists(st.integers(0, 4), min_size=n_rows, max_size=n_rows))
        return pd.Series(values, dtype="int64")
    if kind == "text":
        values = draw(st.lists(_WORDS, min_size=n_rows, max_size=n_rows))
        return pd.Series(values, dtype=object)
    if kind == "bool":
        values = draw(st.lists(st.booleans(), min_size=n_rows, max_size=n_rows))
        return pd.Series(values, dtype=bool)
    if kind == "category":
        values = draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=n_rows, max_size=n_rows))
        return pd.Series(values, dtype="category")
    if kind == "object_mixed":
        values = draw(st.lists(
            st.one_of(st.integers(-5, 5), st.floats(-5, 5, allow_nan=False), _WORDS, st.none(), st.booleans()),
            min_size=n_rows, max_size=n_rows))
        return pd.Series(values, dtype=object)
    if kind == "constant":
        value = draw(st.one_of(st.just(3.0), st.just("same"), st.just(True)))
        return pd.Series([value] * n_rows)
    if kind == "all_missing":
        return pd.Series([math.nan] * n_rows, dtype="float64")
    values = draw(st.lists(st.one_of(st.none(), _WORDS), min_size=n_rows, max_size=n_rows))
    return pd.Series(values, dtype=object)


@st.composite
def mixed_tables(draw, min_rows: int = 1, max_rows: int = 40, max_columns: int = 6):
    n_rows = draw(st.integers(min_rows, max_rows))
    n_columns = draw(st.integers(1, max_columns))
    names = draw(st.lists(
        st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=12),
        min_size=n_columns, max_size=n_columns, unique=True))
    return pd.DataFrame({name: draw(_column(n_rows)) for name in names})


PARAMS = st.fixed_dictionaries(
    {
        "m": st.floats(0.05, 0.95),
        "size": st.sampled_from(["k", "lam", "default"]),
        "k": st.integers(1, 5),
        "lam": st.floats(1e-3, 1e3),
        "budget": st.sampled_from(["fixed", "approximate"]),
        "standardize": st.booleans(),
        "init": st.sampled_from(["craft++", "random"]),
        "seed": st.integers(0, 2**31 - 1),
    }
)


def _estimator(schema: Schema, params: dict) -> CRAFT:
    kwargs = dict(
        m=params["m"], budget=params["budget"], standardize=params["standardize"],
        init=params["init"], random_state=params["seed"], n_init=2, max_iter=50,
        categorical=schema,
    )
    if params["size"] == "k":
        kwargs["k"] = params["k"]
    elif params["size"] == "lam":
        kwargs["lam"] = params["lam"]
    return CRAFT(**kwargs)


def _check_fitted(model: CRAFT, table: pd.DataFrame) -> None:
    n_rows = len(table)
    labels = np.asarray(model.labels_)
    assert labels.shape == (n_rows,)
    assert labels.dtype.kind == "i"
    k = model.n_clusters_
    assert k >= 1
    assert labels.min() >= 0 and labels.max() == k - 1
    assert set(np.unique(labels)) == set(range(k))  # no empty cluster
    assert math.isfinite(model.objective_)
    assert math.isfinite(model.lam_) and model.lam_ > 0
    assert model.feature_mask_.shape == (k, table.shape[1])
    assert np.asarray(model.cluster_sizes_).sum() == n_rows
    ignored = [list(table.columns).index(c) for c in model.schema_.ignored]
    assert not model.feature_mask_[:, ignored].any()


def _faults(table: pd.DataFrame, schema: Schema, params: dict) -> list[str]:
    """What may refuse this fit, as the messages that name it; an empty list means the fit must succeed."""
    faults = []
    if len(table) < 2:
        faults.append("at least 2 rows")
    if not schema.used:
        faults.append("No usable column")
    if params["size"] == "k" and params["k"] > len(table):
        faults.append(f"k={params['k']} exceeds the number of rows")
    if params["size"] == "k" and schema.used and params["k"] > _distinct_rows(table, schema):
        faults.append(f"k={params['k']} exceeds the ")  # "... the N distinct rows": see _refused_for_distinct_rows
    for column in schema.numeric:
        values = pd.to_numeric(table[column], errors="coerce").astype("float64")
        if np.isinf(values).any():
            faults.append(f"Column {column!r} has {int(np.isinf(values).sum())} infinite value")
        elif (values.abs() > 1e150).any():
            faults.append(f"Column {column!r} has values beyond")
    return faults


def _distinct_rows(table: pd.DataFrame, schema: Schema) -> int:
    """Distinct rows of the fitted columns as given (numbers as floats, a missing cell equal only to another)."""
    used = pd.DataFrame({
        c: pd.to_numeric(table[c], errors="coerce").astype("float64") if c in schema.numeric else table[c].astype(str).where(table[c].notna())
        for c in schema.used
    })
    return len(used.drop_duplicates())


def _refused_for_distinct_rows(error: CraftInputError, table: pd.DataFrame, schema: Schema, params: dict) -> bool:
    """A refusal for too few distinct rows that holds: the engine counts rows after encoding, where numbers
    that differ below float resolution may coincide, so its count is at most the count of the rows as given."""
    found = re.search(r"k=(\d+) exceeds the (\d+) distinct rows", str(error))
    if found is None:
        return False
    k, n_distinct = int(found.group(1)), int(found.group(2))
    assert k == params["k"] and n_distinct < k, str(error)
    assert n_distinct <= _distinct_rows(table, schema), (str(error), _distinct_rows(table, schema))
    return True


def _fit_or_refuse(table: pd.DataFrame, schema: Schema, params: dict, estimator: CRAFT):
    """The fitted model, or None after checking that the refusal names one of the input's faults."""
    faults = _faults(table, schema, params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            model = estimator.fit(table)
        except CraftInputError as error:
            if _refused_for_distinct_rows(error, table, schema, params):
                event("refused: k beyond the distinct rows")
                return None
            assert faults, f"a fit without any fault was refused: {error}"
            assert any(fault in str(error) for fault in faults), (str(error), faults)
            event("refused for a fault of the input")
            return None
    assert not faults, f"the fit succeeded although the input has {faults}"
    event("fitted")
    _check_fitted(model, table)
    return model


@SETTINGS
@given(table=mixed_tables(), params=PARAMS)
def test_infer_schema_then_fit_labels_every_row_or_names_the_fault(table, params):
    schema = infer_schema(table)  # never refuses a table (it ignores what it cannot use, with a reason)
    assert set(schema.columns) == set(table.columns)
    _fit_or_refuse(table, schema, params, _estimator(schema, params))


@SETTINGS
@given(table=mixed_tables(min_rows=2), params=PARAMS)
def test_fit_with_auto_schema_agrees_with_the_error_contract(table, params):
    """``categorical="auto"`` takes the same path as an explicit inferred schema."""
    estimator = _estimator(Schema((), (), (), {}), params).set_params(categorical="auto")
    model = _fit_or_refuse(table, infer_schema(table), params, estimator)
    if model is not None:
        assert model.schema_ == infer_schema(table)


# ---------------------------------------------------------------------------
# The cases the strategies reach, pinned so that they run every time


def test_infinite_numeric_column_is_an_input_error():
    table = pd.DataFrame({"x": [1.0, math.inf, 2.0, 3.0], "c": ["a", "b", "a", "b"]})
    assert "infinite" in infer_schema(table).reasons["x"]
    with pytest.raises(CraftInputError, match="x"):
        CRAFT(k=2, random_state=0, n_init=1).fit(table)


def test_only_ignored_columns_is_an_input_error():
    table = pd.DataFrame({"const": ["a"] * 5, "empty": [math.nan] * 5})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(CraftInputError, match="No usable column"):
            CRAFT(k=2, random_state=0).fit(table)


def test_one_row_is_an_input_error():
    with pytest.raises(CraftInputError, match="at least 2 rows"):
        CRAFT(random_state=0).fit(pd.DataFrame({"x": [1.0], "c": ["a"]}))


def test_k_above_rows_is_an_input_error():
    with pytest.raises(CraftInputError, match=r"k=5 exceeds the number of rows, n_samples=3"):
        CRAFT(k=5, random_state=0).fit(pd.DataFrame({"x": [1.0, 2.0, 3.0]}))


def test_huge_but_finite_numbers_fit():
    table = pd.DataFrame({"x": [1e300, -1e300, 1e300, -1e300, 0.0, 5e-324],
                          "c": ["a", "a", "b", "b", "a", "b"]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            model = CRAFT(k=2, random_state=0, n_init=2).fit(table)
        except CraftInputError as error:
            assert "x" in str(error)
            return
    _check_fitted(model, table)


@pytest.mark.parametrize("budget", ["fixed", "approximate"])
@pytest.mark.parametrize("init", ["craft++", "random"])
def test_unstandardized_overflowing_squares_fit_or_raise_input_error(budget, init):
    # Found by the properties above (shrunk): two rows, 0 and 1e300. Such
    # values are refused by name (their squares overflow float64).
    table = pd.DataFrame({"0": [0.0, 1e300]})
    for seed in (0, 3079079):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                model = CRAFT(k=1, m=0.5, budget=budget, standardize=False, init=init, random_state=seed,
                              n_init=2, max_iter=50).fit(table)
            except CraftInputError as error:
                assert "0" in str(error)
                continue
        _check_fitted(model, table)
