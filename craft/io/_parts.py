"""Typing one part of a table read in parts (the Dask backend), as :func:`~craft.io.read_table` types a whole one."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from ..exceptions import CraftInputError
from ._columns import _as_numbers, _digit_codes, _parse_number
from ._info import _NUMERIC_PLACEHOLDERS, DEFAULT_MISSING_TOKENS


#: The column of file names that a reader of several files adds for
#: :func:`typed_part` (``dd.read_csv(..., include_path_column=PATH_COLUMN)``):
#: its messages then name the file, and the column is dropped.
PATH_COLUMN = "__craft_source_file__"


def typed_part(part: pd.DataFrame, dtypes: Mapping[str, Any] | None = None, *,
               missing_tokens: Iterable[str] = DEFAULT_MISSING_TOKENS) -> pd.DataFrame:
    """One part of a text table, typed as :func:`read_table` types a whole one.

    For tables read in parts (the Dask backend reads text with every cell a
    string and only empty cells missing). A column is numeric when all its
    cells are numbers or missing markers; the markers are then missing.
    Elsewhere the markers stay text ("None" can be an answer), as in
    :func:`read_table`; so do codes (integers written with leading zeros or
    beyond 2**53). A column of file names (:data:`PATH_COLUMN`) is dropped
    and names the file in messages.

    Parameters
    ----------
    part : DataFrame
        Cells as read, strings or missing (empty).
    dtypes : mapping of str to dtype, optional
        The first part's typing (``typed_part(first).dtypes``). Without it
        this part decides; with it the same columns are numeric, and a cell
        of such a column that is not a number is refused, since the parts
        must agree.
    missing_tokens : iterable of str
        As in :func:`read_table`.

    Returns
    -------
    DataFrame

    Raises
    ------
    CraftInputError
        A numeric column of ``dtypes`` holds text or codes in this part, or
        whole numbers there have a missing cell or decimals here.
    """
    placeholders = frozenset(t.strip() for t in missing_tokens) | _NUMERIC_PLACEHOLDERS
    where = "a later one"
    if PATH_COLUMN in part.columns:
        paths = part[PATH_COLUMN].dropna()
        where = f"a later one ({str(paths.iloc[0])!r})" if len(paths) else where
        part = part.drop(columns=PATH_COLUMN)
    out = part.copy()
    for name in part.columns:
        wanted = None
        if dtypes is not None:
            if not pd.api.types.is_numeric_dtype(dtypes[name]):
                continue
            wanted = np.dtype(dtypes[name])
        codes = _digit_codes(part[name], placeholders)
        if codes is not None and wanted is not None:
            raise CraftInputError(
                f"column {name!r} holds numbers in the first part of the data but codes in {where}, "
                f"{codes[2]}; write the first file's codes as they are written here, or name the column "
                f"categorical (--categorical)."
            )
        if codes is not None:  # as read_table keeps them: text as written
            out[name] = codes[0]
            continue
        converted = _as_numbers(part[name], decimal_comma=False, placeholders=placeholders)
        if converted is None:
            present = part[name].dropna().astype(str).str.strip()
            if wanted is not None and present.isin(placeholders).all():
                out[name] = pd.Series(np.nan, index=part.index, dtype=np.float64)
            elif wanted is not None:
                example = next(v for v in present if _parse_number(v, decimal_comma=False,
                                                                   placeholders=placeholders) is None)
                raise CraftInputError(
                    f"column {name!r} holds numbers in the first part of the data but {example!r} in {where}; "
                    f"clean the column or name it categorical (--categorical)."
                )
            else:
                continue
        else:
            out[name] = converted[0]
        if wanted is not None:
            if wanted.kind in "iu" and out[name].isna().any():
                raise CraftInputError(
                    f"column {name!r} holds whole numbers in the first part of the data but a missing cell in a "
                    f"later one; mark the column as categorical (--categorical) or fill the gap."
                )
            if wanted.kind in "iu" and not _whole(out[name]):
                example = float(out[name][out[name] != np.floor(out[name])].iloc[0])
                raise CraftInputError(
                    f"column {name!r} holds whole numbers in the first part of the data but {example!r} in "
                    f"{where}, whose decimals would be lost; write the first file's numbers with a decimal "
                    f"point (1.0), or fit the table in memory (without --local-workers or --scheduler)."
                )
            out[name] = out[name].astype(wanted)
    return out


def _whole(numbers: pd.Series) -> bool:
    """Whether every value of a numeric column is a whole number (integers always are)."""
    if not pd.api.types.is_float_dtype(numbers.dtype):
        return True
    values = numbers.to_numpy(dtype=np.float64)
    return bool(np.all(values == np.floor(values)))
