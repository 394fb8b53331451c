"""Tables given to the estimator: one coerced and checked (``as_table``), a list of categorical columns as a
schema, and a table checked against a fitted model's columns (``check_fitted_columns``)."""

from __future__ import annotations

import numbers

import numpy as np
import pandas as pd
from scipy import sparse

from .encoding import Encoder, numeric_column
from .exceptions import CraftInputError
from .schema import Schema


def as_table(X, *, min_rows: int = 1) -> pd.DataFrame:
    if sparse.issparse(X):
        raise CraftInputError("Sparse input is not supported: pass a dense array or a DataFrame.")
    if isinstance(X, pd.DataFrame):
        table = X
        if any(not isinstance(c, str) for c in table.columns):
            table = table.set_axis([str(c) for c in table.columns], axis=1)
    else:
        try:
            array = np.asarray(X)
        except Exception as error:  # noqa: BLE001 - any conversion failure is bad input
            raise CraftInputError(f"X cannot be read as a table: {error}.") from None
        if array.ndim != 2:
            raise CraftInputError(
                f"X must be 2-dimensional (rows x columns); got an array of shape {array.shape}. "
                "Reshape your data, e.g. X.reshape(-1, 1) for a single feature."
            )
        if np.iscomplexobj(array):
            raise CraftInputError("Complex data not supported: CRAFT clusters real numbers and categories.")
        table = pd.DataFrame(array, columns=[f"x{j}" for j in range(array.shape[1])])
    if table.columns.duplicated().any():
        duplicated = sorted(set(table.columns[table.columns.duplicated()]))
        raise CraftInputError(f"Column names must be unique; duplicated: {duplicated[:5]}.")
    if table.shape[1] == 0:
        raise CraftInputError(
            f"The table has 0 feature(s) (shape={table.shape}) while a minimum of 1 is required."
        )
    if table.shape[0] < min_rows:
        raise CraftInputError(f"CRAFT needs at least {min_rows} rows; the table has n_samples={table.shape[0]}.")
    return table


def _schema_from_list(table: pd.DataFrame, categorical) -> Schema:
    columns = [str(c) for c in table.columns]
    try:
        names = list(categorical)
    except TypeError:
        raise CraftInputError(
            f"categorical={categorical!r} must be 'auto', a list of column names or positions, or a Schema."
        ) from None
    chosen = []
    for item in names:
        if isinstance(item, (numbers.Integral, np.integer)) and not isinstance(item, bool):
            if not -len(columns) <= int(item) < len(columns):
                raise CraftInputError(f"categorical column position {item} is out of range for {len(columns)} columns.")
            chosen.append(columns[item])
        elif str(item) in columns:
            chosen.append(str(item))
        else:
            raise CraftInputError(f"categorical names column {item!r}, which the table does not have.")
    numeric = tuple(c for c in columns if c not in chosen)
    categorical_set = set(chosen)
    reasons = {c: ("categorical: named by the caller" if c in categorical_set else "numeric: not named categorical") for c in columns}
    return Schema(
        numeric=numeric,
        categorical=tuple(c for c in columns if c in categorical_set),
        ignored=(),
        reasons=reasons,
    )


def check_fitted_columns(table: pd.DataFrame, encoder: Encoder, fitted_columns) -> None:
    """Refuse a table for a fitted model, naming every missing, extra and differently typed column at once.

    Missing: a column the model uses (numeric or categorical) that the
    table lacks. Differently typed: a numeric column whose values are not
    numbers (text that is not a number, dates, durations). Extra: a column
    the fit never saw; extra columns alone are no error (they are left out,
    as the fit's ignored columns are), but are named with the others, since
    a renamed column is both missing and extra. A categorical column takes
    any values: levels unseen in fit follow the fit's rule
    (:meth:`craft.encoding.Encoder.transform`, ``docs/numerics.md``).
    """
    present = set(table.columns)
    missing = [name for name in [*encoder.numeric, *encoder.categorical] if name not in present]
    mistyped = []
    for name in encoder.numeric:
        dtype = table[name].dtype if name in present else None
        if dtype is None or (pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)):
            continue
        try:  # the encoder's own reading of a numeric column, so that the two cannot disagree
            numeric_column(table[name], name)
        except CraftInputError as error:
            mistyped.append(str(error))
    if not missing and not mistyped:
        return
    known = {str(c) for c in fitted_columns}
    extra = [name for name in table.columns if name not in known]
    parts = [f"X lacks the fitted column(s) {missing}."] if missing else []
    parts += mistyped
    if extra:
        parts.append(f"X has column(s) the fit did not see (they would be left out): {extra}.")
    raise CraftInputError(" ".join(parts) + " Pass a table with the fitted columns and types.")
