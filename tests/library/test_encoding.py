"""The encoder's compiled arithmetic is NumPy's, bit for bit, and its checks name the column."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from craft import CraftInputError
from craft.encoding import Encoder


def _table(rng, n_rows, n_numeric, *, with_int=False):
    columns = {f"x{j}": rng.standard_cauchy(n_rows) * 10.0 ** rng.integers(-3, 4) for j in range(n_numeric)}
    table = pd.DataFrame(columns)
    table.iloc[rng.choice(n_rows, n_rows // 7, replace=False), 0] = np.nan
    if with_int:  # a second dtype makes pandas hand over a row-major block
        table["i"] = rng.integers(0, 50, n_rows)
    table["c"] = pd.Series(rng.choice(["a", "b", "c", None], n_rows), dtype=object)
    table["d"] = pd.Categorical(rng.choice(["u", "v"], n_rows), categories=["w", "v", "u"])
    return table


@pytest.mark.parametrize("n_numeric", [1, 2, 5])
@pytest.mark.parametrize("with_int", [False, True])
def test_encoding_equals_the_numpy_formulas_bit_for_bit(n_numeric, with_int):
    rng = np.random.default_rng(n_numeric)
    table = _table(rng, 3001, n_numeric, with_int=with_int)
    numeric = [c for c in table.columns if c not in ("c", "d")]
    encoder = Encoder(numeric, ["c", "d"])
    data = encoder.fit_transform(table)
    raw = table[numeric].to_numpy(dtype=np.float64, na_value=np.nan)
    missing = np.isnan(raw)
    impute = np.where(missing, 0.0, raw).sum(axis=0) / (~missing).sum(axis=0)
    filled = np.where(missing, impute[None, :], raw)
    expected = np.ascontiguousarray((filled - filled.mean(axis=0)) / filled.std(axis=0))
    np.testing.assert_array_equal(data.numeric, expected)
    np.testing.assert_array_equal(data.global_var, expected.var(axis=0))
    np.testing.assert_array_equal(data.numeric_sq, expected * expected)
    assert data.numeric.flags["C_CONTIGUOUS"]
    # Levels sorted, missing a level of its own, unused categories not levels; eta_0 from the counts.
    assert encoder.levels_ == [["a", "b", "c"], ["u", "v"]] and encoder.has_missing_level_ == [True, False]
    c_codes = pd.Series(table["c"]).map({"a": 0, "b": 1, "c": 2}).fillna(3).to_numpy()
    np.testing.assert_array_equal(data.codes[:, 0], c_codes)
    np.testing.assert_array_equal(data.codes[:, 1], (table["d"] == "v").to_numpy().astype(int))
    counts = np.bincount((data.codes + data.offsets[None, :]).ravel(), minlength=data.n_levels_total)
    np.testing.assert_array_equal(data.eta0, counts / len(table))
    # A new table goes through the same arithmetic with the fitted values.
    again = encoder.transform(table)
    np.testing.assert_array_equal(again.numeric, data.numeric)
    np.testing.assert_array_equal(again.codes, data.codes)


def test_transform_marks_unseen_levels_and_imputes_missing_numbers():
    rng = np.random.default_rng(0)
    table = _table(rng, 200, 2)
    encoder = Encoder(["x0", "x1"], ["c", "d"])
    encoder.fit_transform(table)
    new = pd.DataFrame({"x0": [np.nan, 1.0], "x1": [0.0, 2.0], "c": ["zzz", None], "d": pd.Categorical(["w", "u"])})
    data = encoder.transform(new)
    assert data.codes[:, 0].tolist() == [-1, 3]  # unseen, then the missing level
    assert data.codes[:, 1].tolist() == [-1, 0]  # "w" is a category never seen in fit
    assert data.numeric[0, 0] == (encoder.impute_[0] - encoder.center_[0]) / encoder.scale_[0]


@pytest.mark.parametrize("missing", ["marginalise", "impute"])
def test_the_template_is_the_encoding_of_an_empty_table(missing):
    """template() encodes empty blocks directly: the same tables as transforming a table of no rows."""
    rng = np.random.default_rng(1)
    table = _table(rng, 120, 3)
    table.loc[::7, "x1"] = np.nan
    table.loc[::5, "c"] = None
    encoder = Encoder(["x0", "x1", "x2"], ["c", "d"], missing=missing)
    encoder.fit_transform(table)
    empty = pd.DataFrame({name: pd.Series([], dtype=table[name].dtype) for name in table.columns})
    expected = encoder.transform(empty)
    template = encoder.template()
    assert template is encoder.template()  # computed once per fit
    for field in ("numeric", "codes", "n_levels", "offsets", "eta0", "log_eta0", "global_mean", "global_var"):
        made, wanted = getattr(template, field), getattr(expected, field)
        assert made.shape == wanted.shape and made.dtype == wanted.dtype, field
        np.testing.assert_array_equal(made, wanted, err_msg=field)
    assert template.observed is None and expected.observed is None


@pytest.mark.parametrize(
    ("value", "message"),
    [(np.inf, r"Column 'x1' has 2 infinite value\(s\)"), (1e200, r"Column 'x1' has values beyond ±1e\+150")],
)
def test_bad_numbers_name_their_column(value, message):
    table = pd.DataFrame({"x0": np.arange(6.0), "x1": [0.0, value, 1.0, value, 2.0, 3.0]})
    with pytest.raises(CraftInputError, match=message):
        Encoder(["x0", "x1"], []).fit_transform(table)
    text = table.astype({"x1": object})
    with pytest.raises(CraftInputError, match=message):
        Encoder(["x0", "x1"], []).fit_transform(text)


def test_a_refitted_encoder_codes_with_its_new_levels():
    encoder = Encoder([], ["c"])
    encoder.fit_transform(pd.DataFrame({"c": ["a", "b", "a"]}))
    assert encoder.transform(pd.DataFrame({"c": ["b", "z"]})).codes[:, 0].tolist() == [1, -1]
    encoder.fit_transform(pd.DataFrame({"c": ["y", "z"]}))
    assert encoder.transform(pd.DataFrame({"c": ["b", "z"]})).codes[:, 0].tolist() == [-1, 1]


def test_a_missing_answer_and_missing_cells_are_two_levels():
    """The text "(missing)" is an answer; missing cells under impute are another level, named apart."""
    encoder = Encoder([], ["c"], missing="impute")
    encoded = encoder.fit_transform(pd.DataFrame({"c": pd.Series(["(missing)", "z", None, "(missing cell)"],
                                                                  dtype=object)}))
    names = encoder.level_names()[0]
    assert names == ["(missing cell)", "(missing)", "z", "(missing cell 2)"]
    assert len(set(names)) == len(names) == encoded.n_levels[0]
    plain = Encoder([], ["c"], missing="impute")
    plain.fit_transform(pd.DataFrame({"c": pd.Series(["a", None], dtype=object)}))
    assert plain.level_names() == [["a", "(missing)"]]
