"""infer_schema's rules on small hand-made tables, Schema.override, and a
property: any table gets an exact partition of its columns, or a
CraftInputError."""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from craft.exceptions import CraftInputError
from craft.io import read_table
from craft.schema import Schema, infer_schema


def roles_of(schema: Schema) -> dict[str, str]:
    return {c: schema.role(c) for c in schema.columns}


def infer_one(values, **kwargs) -> tuple[str, str]:
    """Role and reason of a one-column table."""
    schema = infer_schema(pd.DataFrame({"c": values}), **kwargs)
    return schema.role("c"), schema.reasons["c"]


# --------------------------------------------------------------------------
# Rules
# --------------------------------------------------------------------------


def test_float_is_numeric_even_with_few_integral_values():
    assert infer_one([1.5, 2.25, np.nan, 4.0]) == ("numeric", "float → numeric")
    assert infer_one([1.0, 2.0, 1.0, 2.0]) == ("numeric", "float → numeric")


def test_float_with_infinity_is_numeric_and_says_so():
    role, reason = infer_one([1.0, np.inf, 2.0])
    assert role == "numeric"
    assert "infinite" in reason


def test_integer_with_few_values_is_categorical():
    role, reason = infer_one([1, 2, 3, 1, 2, 3])
    assert role == "categorical"
    assert reason == "integer with 3 distinct values (≤ 20) → categorical"


def test_integer_with_many_values_is_numeric():
    values = np.random.default_rng(0).permutation(np.repeat(np.arange(30), 2))
    role, reason = infer_one(values)
    assert role == "numeric"
    assert reason == "integer with 30 distinct values (> 20) → numeric"


def test_max_categorical_levels_moves_the_threshold():
    values = [1, 2, 3, 4, 5, 6] * 2
    assert infer_one(values)[0] == "categorical"
    role, reason = infer_one(values, max_categorical_levels=5)
    assert role == "numeric"
    assert "6 distinct values (> 5)" in reason


@pytest.mark.parametrize("bad", [0, -1, 2.5, "20", True, None])
def test_invalid_max_categorical_levels(bad):
    with pytest.raises(CraftInputError, match="max_categorical_levels must be a positive integer"):
        infer_schema(pd.DataFrame({"a": [1, 2]}), max_categorical_levels=bad)


def test_integer_row_index_is_ignored():
    role, reason = infer_one(np.arange(50))
    assert role == "ignored"
    assert "unique for every row" in reason and "row index" in reason
    # Decreasing and with gaps: still an identifier.
    assert infer_one(np.arange(1000, 0, -7))[0] == "ignored"


def test_unique_integers_in_random_order_are_a_measurement():
    values = np.random.default_rng(1).permutation(50)
    assert infer_one(values)[0] == "numeric"


def test_small_tables_have_no_identifiers():
    # With 20 rows or fewer, unique-per-row says nothing.
    assert infer_one(np.arange(10))[0] == "categorical"
    assert infer_one([f"name{i}" for i in range(10)])[0] == "categorical"


def test_nullable_integer_codes_with_missing_are_categorical():
    values = pd.array([0, 1, None, 2, 1, None], dtype="Int64")
    role, reason = infer_one(values)
    assert role == "categorical"
    assert "3 distinct values" in reason


def test_unsigned_integers():
    assert infer_one(np.array([1, 2, 1, 2], dtype=np.uint8))[0] == "categorical"


@pytest.mark.parametrize(
    "values",
    [
        [True, False, True],
        pd.array([True, None, False], dtype="boolean"),
        np.array([True, False, None], dtype=object),
    ],
)
def test_booleans_are_categorical(values):
    assert infer_one(values) == ("categorical", "boolean → categorical")


def test_category_dtype_is_categorical():
    role, reason = infer_one(pd.Categorical(["a", "b", "c", "a"]))
    assert role == "categorical"
    assert reason == "category dtype with 3 levels → categorical"


@pytest.mark.parametrize("dtype", [object, "str"])
def test_text_with_few_levels_is_categorical(dtype):
    values = pd.Series(["red", "green", "red", None, "blue"], dtype=dtype)
    role, reason = infer_one(values)
    assert role == "categorical"
    assert reason == "text with 3 distinct values → categorical"


def test_text_with_many_levels_is_categorical_and_says_so():
    values = [f"level{i % 30}" for i in range(300)]
    role, reason = infer_one(values)
    assert role == "categorical"
    assert "30 distinct values" in reason and "many levels" in reason


def test_text_unique_per_row_is_an_identifier():
    role, reason = infer_one([f"user-{i:04d}" for i in range(40)])
    assert role == "ignored"
    assert "unique for every row" in reason and "identifier" in reason


def test_free_text_is_ignored():
    # 80 distinct comments in 100 rows: not unique, but text-like.
    values = [f"comment number {i % 80}" for i in range(100)]
    role, reason = infer_one(values)
    assert role == "ignored"
    assert "free text" in reason and "80 distinct values" in reason


def test_numeric_looking_text_stays_categorical_and_says_so():
    values = [str(v / 10) for v in range(60)] + ["oops"]
    role, reason = infer_one(values)
    assert role == "categorical"
    assert "61 distinct values" in reason
    assert "numbers" in reason and "'oops'" in reason


def test_numeric_looking_text_with_decimal_commas():
    values = [f"{v},5" for v in range(40)] + ["n.d."]
    role, reason = infer_one(values)
    assert role == "categorical"
    assert "'n.d.'" in reason


@pytest.mark.parametrize(
    "values",
    [
        [np.nan, np.nan, np.nan],
        [None, None, None],
        pd.Series([None, None], dtype="str"),
        pd.array([None, None], dtype="Int64"),
    ],
)
def test_all_missing_is_ignored(values):
    assert infer_one(values) == ("ignored", "all values missing → ignored")


def test_constant_is_ignored_with_its_value():
    assert infer_one(["x", "x", "x"]) == ("ignored", "constant (single value 'x') → ignored")
    role, reason = infer_one([7, 7, 7])
    assert role == "ignored" and "single value 7" in reason


def test_constant_with_missing_values_is_constant():
    role, reason = infer_one([2.5, np.nan, 2.5, np.nan])
    assert role == "ignored"
    assert reason == "constant (single value 2.5 plus 2 missing) → ignored"


def test_long_constant_value_is_shortened_in_the_reason():
    _, reason = infer_one(["y" * 500] * 3)
    assert len(reason) < 80 and "…" in reason


@pytest.mark.parametrize(
    "values",
    [
        pd.to_datetime(["2024-01-01", "2024-02-01", None]),
        pd.to_datetime(["2024-01-01", "2024-02-01"]).tz_localize("Europe/Paris"),
        pd.period_range("2024-01", periods=3, freq="M"),
    ],
)
def test_datetimes_are_ignored(values):
    role, reason = infer_one(values)
    assert role == "ignored"
    assert reason.startswith("datetime: looks like a date (") and "name it categorical" in reason


def test_timedeltas_and_python_dates_are_ignored():
    role, reason = infer_one(pd.to_timedelta([1, 2, 3], unit="s"))
    assert role == "ignored" and "timedelta" in reason
    import datetime

    dates = np.array([datetime.date(2024, 1, d) for d in (1, 2, 3)], dtype=object)
    role, reason = infer_one(dates)
    assert role == "ignored" and "datetime" in reason


def test_object_columns_holding_numbers_follow_the_number_rules():
    assert infer_one(np.array([1, 2, 1, 2], dtype=object))[0] == "categorical"
    assert infer_one(np.array([1.5, 2.5, 3.5], dtype=object)) == ("numeric", "float → numeric")


def test_mixed_object_values_are_categorical():
    role, reason = infer_one(np.array([1, "a", 2.5, "a"], dtype=object))
    assert role == "categorical"
    assert reason.startswith("mixed values with 3 distinct values")


def test_unhashable_values_are_ignored():
    role, reason = infer_one(pd.Series([[1, 2], [3], [1, 2]]))
    assert role == "ignored"
    assert "list" in reason and "not supported" in reason


def test_complex_numbers_are_ignored():
    assert infer_one(np.array([1 + 2j, 3 + 0j]))[0] == "ignored"


def test_mixed_table_roles_and_order():
    df = pd.DataFrame(
        {
            "id": np.arange(30),
            "height": np.linspace(1.5, 2.0, 30),
            "grade": [1, 2, 3] * 10,
            "city": ["Paris", "Lyon", "Nice"] * 10,
            "country": "FR",
            "empty": np.nan,
            "smoker": [True, False] * 15,
        }
    )
    schema = infer_schema(df)
    assert roles_of(schema) == {
        "id": "ignored",
        "height": "numeric",
        "grade": "categorical",
        "city": "categorical",
        "country": "ignored",
        "empty": "ignored",
        "smoker": "categorical",
    }
    assert schema.numeric == ("height",)
    assert schema.categorical == ("grade", "city", "smoker")
    assert schema.ignored == ("id", "country", "empty")
    assert schema.used == ("height", "grade", "city", "smoker")
    assert schema.columns == tuple(df.columns)
    frame = schema.to_frame()
    assert list(frame.columns) == ["column", "role", "reason"]
    assert frame["column"].tolist() == list(df.columns)
    assert frame["role"].tolist() == [roles_of(schema)[c] for c in df.columns]
    assert frame["reason"].tolist() == [schema.reasons[c] for c in df.columns]


# --------------------------------------------------------------------------
# Refused tables
# --------------------------------------------------------------------------


def test_table_without_columns():
    with pytest.raises(CraftInputError, match="the table has no columns"):
        infer_schema(pd.DataFrame())


def test_table_without_rows():
    with pytest.raises(CraftInputError, match="the table has no rows"):
        infer_schema(pd.DataFrame({"a": [], "b": []}))


def test_non_string_labels_are_refused_with_the_label():
    with pytest.raises(CraftInputError, match=r"column label 0 is a int.*df\.columns\.map\(str\)"):
        infer_schema(pd.DataFrame([[1, 2], [3, 4]]))


def test_duplicated_labels_are_refused():
    df = pd.DataFrame([[1, 2, 3]], columns=["a", "a", "b"])
    with pytest.raises(CraftInputError, match="duplicated column name.*'a'"):
        infer_schema(df)


def test_not_a_dataframe():
    with pytest.raises(CraftInputError, match="expected a pandas DataFrame, got dict"):
        infer_schema({"a": [1, 2]})


# --------------------------------------------------------------------------
# Schema and override
# --------------------------------------------------------------------------


@pytest.fixture
def schema() -> Schema:
    df = pd.DataFrame(
        {
            "legs": [0, 2, 4, 4, 2],
            "weight": [1.5, 2.0, 3.5, 1.0, 2.2],
            "name": ["a", "b", "c", "d", "e"],
            "const": 1,
        }
    )
    return infer_schema(df)


def test_override_moves_columns_and_marks_them(schema):
    assert roles_of(schema) == {
        "legs": "categorical",
        "weight": "numeric",
        "name": "categorical",
        "const": "ignored",
    }
    new = schema.override(numeric=["legs"], ignored=("name",), categorical="const")
    assert new.numeric == ("legs", "weight")
    assert new.categorical == ("const",)
    assert new.ignored == ("name",)
    assert new.reasons["legs"] == new.reasons["name"] == new.reasons["const"] == "set by user"
    assert new.reasons["weight"] == "float → numeric"
    assert new.used == ("legs", "weight", "const")
    # The original is unchanged.
    assert schema.categorical == ("legs", "name")
    assert schema.reasons["legs"].startswith("integer with 3 distinct values")


def test_override_to_the_same_role_still_records_the_user(schema):
    new = schema.override(numeric=["weight"])
    assert new.numeric == schema.numeric
    assert new.reasons["weight"] == "set by user"


def test_override_unknown_column(schema):
    with pytest.raises(CraftInputError, match=r"unknown column 'colour'.*'legs'"):
        schema.override(categorical=["colour"])
    with pytest.raises(CraftInputError, match=r"unknown columns 'x', 'y'"):
        schema.override(ignored=["x", "y"])


def test_override_column_in_two_roles(schema):
    with pytest.raises(CraftInputError, match="column 'legs' is named in both numeric and categorical"):
        schema.override(numeric=["legs"], categorical=["legs"])


def test_override_non_string_names(schema):
    with pytest.raises(CraftInputError, match="numeric: column names must be strings, got 3"):
        schema.override(numeric=[3])
    with pytest.raises(CraftInputError, match="must be a column name or an iterable"):
        schema.override(ignored=5)


def test_schema_constructor_checks_the_partition():
    with pytest.raises(CraftInputError, match="column 'a' has two roles: numeric and ignored"):
        Schema(numeric=("a",), categorical=(), ignored=("a",), reasons={"a": "r"})
    with pytest.raises(CraftInputError, match=r"no reason given for column\(s\) 'b'"):
        Schema(numeric=("a",), categorical=("b",), ignored=(), reasons={"a": "r"})
    with pytest.raises(CraftInputError, match=r"reason given for column\(s\) 'z' that have no role"):
        Schema(numeric=("a",), categorical=(), ignored=(), reasons={"a": "r", "z": "r"})


def test_schema_is_immutable_hashable_and_picklable(schema):
    with pytest.raises(AttributeError):
        schema.numeric = ()
    with pytest.raises(TypeError):
        schema.reasons["legs"] = "changed"
    copy = pickle.loads(pickle.dumps(schema))
    assert copy == schema and hash(copy) == hash(schema)
    assert copy.columns == schema.columns
    assert schema.override(numeric=["legs"]) != schema


def test_role_of_unknown_column(schema):
    with pytest.raises(CraftInputError, match="unknown column 'nope'"):
        schema.role("nope")


# --------------------------------------------------------------------------
# Property: an exact partition, or CraftInputError
# --------------------------------------------------------------------------

_FLOATS = st.floats(allow_nan=True, allow_infinity=True, width=64)


@st.composite
def column_values(draw, n_rows: int):
    kind = draw(
        st.sampled_from(
            ["int", "wide_int", "float", "bool", "text", "nullable_int", "datetime",
             "missing", "category", "mixed", "index"]
        )
    )
    if kind == "int":
        return draw(st.lists(st.integers(-3, 3), min_size=n_rows, max_size=n_rows))
    if kind == "wide_int":
        values = draw(st.lists(st.integers(-(2**62), 2**62), min_size=n_rows, max_size=n_rows))
        return np.array(values, dtype=np.int64)
    if kind == "float":
        return np.array(draw(st.lists(_FLOATS, min_size=n_rows, max_size=n_rows)), dtype=float)
    if kind == "bool":
        return np.array(draw(st.lists(st.booleans(), min_size=n_rows, max_size=n_rows)), dtype=bool)
    if kind == "text":
        values = draw(st.lists(st.none() | st.text(max_size=4), min_size=n_rows, max_size=n_rows))
        return pd.Series(values, dtype="str")
    if kind == "nullable_int":
        values = draw(st.lists(st.none() | st.integers(0, 5), min_size=n_rows, max_size=n_rows))
        return pd.array(values, dtype="Int64")
    if kind == "datetime":
        values = draw(st.lists(st.none() | st.integers(0, 10**9), min_size=n_rows, max_size=n_rows))
        return pd.to_datetime([None if v is None else v for v in values], unit="s")
    if kind == "missing":
        return [np.nan] * n_rows
    if kind == "category":
        values = draw(st.lists(st.sampled_from("abc"), min_size=n_rows, max_size=n_rows))
        return pd.Categorical(values)
    if kind == "mixed":
        atoms = st.none() | st.integers(-2, 2) | st.text(max_size=2) | _FLOATS | st.booleans()
        values = draw(st.lists(atoms, min_size=n_rows, max_size=n_rows))
        return np.array(values + [None], dtype=object)[:n_rows]
    return np.arange(n_rows)


@st.composite
def tables(draw):
    n_rows = draw(st.integers(0, 30))
    names = draw(st.lists(st.text(min_size=1, max_size=5), max_size=6, unique=True))
    data = {name: draw(column_values(n_rows)) for name in names}
    return pd.DataFrame(data, index=range(n_rows)) if names else pd.DataFrame(index=range(n_rows))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables(), st.integers(1, 25))
def test_property_partition_or_input_error(df, max_levels):
    try:
        schema = infer_schema(df, max_categorical_levels=max_levels)
    except CraftInputError:
        assert df.shape[0] == 0 or df.shape[1] == 0
        return
    columns = list(df.columns)
    roles = schema.numeric + schema.categorical + schema.ignored
    assert sorted(roles) == sorted(columns)  # every column exactly once
    assert list(schema.reasons) == columns  # a reason for each, in table order
    assert all(isinstance(r, str) and "→" in r for r in schema.reasons.values())
    for role in ("numeric", "categorical", "ignored"):
        names = getattr(schema, role)
        assert list(names) == [c for c in columns if c in names]  # table order
    assert schema.used == tuple(c for c in columns if c not in schema.ignored)
    for column in schema.ignored:
        values = df[column]
        assert (
            values.isna().all()
            or values.nunique() <= 1
            or "datetime" in schema.reasons[column]
            or "identifier" in schema.reasons[column]
            or "not supported" in schema.reasons[column]
        ), schema.reasons[column]


def test_integers_beyond_float_precision_are_codes_not_numbers():
    """As float64, 2**60 + 1 and 2**60 + 2 are one value: such integers are
    never numeric; unique for every row they are an identifier."""
    big = 2**60
    schema = infer_schema(pd.DataFrame({
        "account": [big + i for i in range(30)],
        "branch": [big + i % 3 for i in range(30)],
        "spread": [big + i % 25 for i in range(30)],
        "n": range(30),
    }))
    assert schema.ignored == ("account", "spread", "n") and schema.categorical == ("branch",)
    assert schema.reasons["account"].startswith("integers beyond 2**53 (e.g. ")
    assert "unique for every row (an identifier) → ignored" in schema.reasons["account"]
    assert "25 distinct values (> 20): identifier-like codes" in schema.reasons["spread"]
    # Digit codes as text, as read_table keeps them: unique → an identifier, even in a small table.
    codes = infer_schema(pd.DataFrame({"zip": ["01234", "05678", "00042"], "v": [1.0, 2.0, 3.0]}))
    assert codes.ignored == ("zip",)
    assert codes.reasons["zip"] == "digit codes with leading zeros (e.g. '01234'), unique for every row (an identifier) → ignored"


def _dated_table(n_rows: int = 5000, seed: int = 0) -> pd.DataFrame:
    """A table of n_rows with zip codes (leading zeros in some), dates spread over
    1,846 days, and a measurement."""
    rng = np.random.default_rng(seed)
    zips = rng.choice(rng.integers(600, 99_999, 4874), n_rows)
    days = pd.Timestamp("2019-01-01") + pd.to_timedelta(rng.integers(0, 1846, n_rows), unit="D")
    return pd.DataFrame({"zip": [f"{z:05d}" for z in zips], "day": days, "spend": rng.gamma(2.0, 30.0, n_rows)})


def test_zip_codes_with_leading_zeros_in_a_csv_are_ignored_as_identifiers():
    table = _dated_table()
    df = read_table(table.to_csv(index=False).encode(), name="shops.csv")
    assert df["zip"].tolist() == table["zip"].tolist()  # values as written
    schema = infer_schema(df)
    n_zips = table["zip"].nunique()
    assert schema.role("zip") == "ignored" and schema.role("spend") == "numeric"
    assert schema.reasons["zip"].startswith(
        f"digit codes with leading zeros (e.g. {df['zip'][df['zip'].str.startswith('0')].iloc[0]!r}), "
        f"{n_zips:,} distinct values (> 20): identifier-like codes")
    assert "name it categorical" in schema.reasons["zip"]


@pytest.mark.parametrize(("written", "what"), [
    ("%Y-%m-%d", "ISO 8601 text dates"),
    ("%Y-%m-%dT%H:%M", "ISO 8601 text dates"),
    ("%m/%d/%Y", "text dates in '%m/%d/%Y'"),
    ("%d.%m.%Y", "text dates in '%d.%m.%Y'"),
    ("%b %d, %Y", "text dates in '%b %d, %Y'"),
])
def test_text_dates_in_a_csv_are_ignored_with_their_days(written, what):
    table = _dated_table()
    table["day"] = table["day"].dt.strftime(written)
    # A first row whose day is past the 12th, so that the day and month order is known.
    table.loc[0, "day"] = pd.Timestamp("2020-05-23").strftime(written)
    df = read_table(table.to_csv(index=False).encode(), name="visits.csv")
    assert df["day"].tolist() == table["day"].tolist()
    parsed = pd.to_datetime(table["day"], format=written)
    reason = infer_schema(df).reasons["day"]
    assert infer_schema(df).role("day") == "ignored"
    assert reason == (
        f"{what}: looks like a date ({parsed.dt.normalize().nunique():,} distinct days, "
        f"{parsed.min():%Y-%m-%d} to {parsed.max():%Y-%m-%d}) → ignored (a date is neither a measurement "
        f"nor a category; name it categorical to use each written date as a level)")


def test_dates_whose_day_and_month_order_is_open_say_so():
    days = [f"{d:02d}/{m:02d}/2024" for d in range(1, 13) for m in range(1, 13)]
    role, reason = infer_one(days)
    assert role == "ignored"
    assert reason.startswith("text dates in '%m/%d/%Y' or '%d/%m/%Y' (day and month order ambiguous): "
                             "looks like a date (144 distinct days")


@pytest.mark.parametrize("values", [
    [f"2024-01-{d:02d}" for d in range(1, 29)] + ["soon"],  # one value is no date
    [str(year) for year in range(1990, 2030)],  # years alone are numbers
    [f"v{i}.{i % 5}.2" for i in range(40)],
])
def test_text_that_is_not_all_dates_is_not_taken_for_dates(values):
    assert "looks like a date" not in infer_one(values)[1]


def test_datetime_columns_give_their_days():
    table = _dated_table(300)
    reason = infer_schema(table).reasons["day"]
    assert reason.startswith(f"datetime: looks like a date ({table['day'].nunique():,} distinct days, "
                             f"{table['day'].min():%Y-%m-%d} to ")


def test_nearly_unique_integers_of_one_width_are_identifiers():
    rng = np.random.default_rng(3)
    customers = rng.choice(np.arange(100_000, 999_999), 400, replace=False)
    customers[:10] = customers[10:20]  # 390 distinct in 400: 97.5 %
    role, reason = infer_one(customers)
    assert role == "ignored"
    assert reason.startswith("integer, nearly unique (390 distinct values in 400 non-missing cells, ≥ 95%) "
                             "and every value 6 digits long: looks like an identifier → ignored")
    # Amounts of varying width stay numbers, however unique.
    assert infer_one(rng.choice(np.arange(50, 50_000), 400, replace=False))[0] == "numeric"
