"""Reading a Parquet file: its stored types kept, nested columns as JSON text, inexact integers as text."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd

from .._optional import require
from ..exceptions import CraftInputError
from ..limits import check_table_shape
from ._columns import _cell_text, _clean_names, _finish_as_text, _FLOAT_EXACT
from ._info import _join, _Options, _short_error, ReadInfo


def _read_parquet(data: bytes, label: str, options: _Options) -> pd.DataFrame:
    pa = require("pyarrow", extra="readers", needed_for="reading Parquet files")
    pq = require("pyarrow.parquet", package="pyarrow", extra="readers", needed_for="reading Parquet files")

    try:
        # Pages written with checksums are verified: a flipped byte is then
        # refused here instead of decoding into wrong values.
        parquet = pq.ParquetFile(io.BytesIO(data), page_checksum_verification=True)
        metadata = parquet.metadata
    except Exception as exc:  # noqa: BLE001 - pyarrow raises many types
        raise CraftInputError(
            f"{label} is not a readable Parquet file: it is damaged or truncated ({_short_error(exc)})"
        ) from None
    check_table_shape(metadata.num_rows, metadata.num_columns, label)
    try:
        table = parquet.read()
    except Exception as exc:  # noqa: BLE001 - pyarrow raises many types
        raise CraftInputError(
            f"{label} is not a readable Parquet file: its data are damaged ({_short_error(exc)})"
        ) from None
    inexact: set[str] = set()
    if not options.as_text:
        table, inexact = _inexact_integers_as_text(pa, table)
    names = list(table.column_names)
    duplicated = sorted({n for n in names if names.count(n) > 1})
    nested = {names[i] for i, f in enumerate(table.schema) if pa.types.is_nested(f.type)}
    nested_types = {names[i]: str(f.type).split("<", 1)[0] for i, f in enumerate(table.schema)
                    if pa.types.is_nested(f.type)}
    try:
        if duplicated:
            # Positional names: pandas cannot convert a table whose names repeat.
            df = table.rename_columns([f"c{i}" for i in range(len(names))]).to_pandas(
                integer_object_nulls=options.as_text)
        else:
            # As text, integers beside missing cells stay Python integers: as float64 those
            # beyond 2**53 would round, and every one would gain a ".0".
            df = table.to_pandas(integer_object_nulls=options.as_text)
            if not isinstance(df.index, pd.RangeIndex):
                df = df.reset_index()  # a stored index is data: keep it as a column
            names = [str(c) for c in df.columns]
    except Exception as exc:  # noqa: BLE001 - e.g. an unsupported type
        raise CraftInputError(
            f"{label} is not a readable Parquet file: its columns cannot be converted ({_short_error(exc)})"
        ) from None
    df = df.reset_index(drop=True)
    if df.shape[1] == 0:
        raise CraftInputError(f"cannot read {label}: the Parquet file has no columns")
    if df.shape[0] == 0:
        raise CraftInputError(
            f"cannot read {label}: it has column names but no data rows"
        )
    clean = _clean_names(names)
    df.columns = clean
    notes: dict[str, str] = {}
    nested_clean = []
    for position, name in enumerate(names):
        if name in nested:
            column = df.iloc[:, position]
            df.isetitem(position, column.map(_nested_text, na_action="ignore").astype(object))
            notes[clean[position]] = (f"nested Parquet {nested_types[name]} column, read as its JSON text "
                                      f"(flatten it into columns to cluster on it)")
            nested_clean.append(clean[position])
        if name in inexact:
            column = df.iloc[:, position]
            df.isetitem(position, column.astype(object).where(column.notna(), np.nan))
            notes[clean[position]] = ("integers beyond 2**53 beside missing cells, kept as text as written: pandas "
                                      "stores such a column as float64, which would round neighbours into one value")
        if name in duplicated:
            notes[clean[position]] = _join(notes.get(clean[position]),
                                           f"the file names {names.count(name)} columns {name!r}: renamed "
                                           f"{clean[position]!r}")
    if options.as_text:
        return _finish_as_text(_typed_cells_as_text(df), ReadInfo(label, "parquet", nested=tuple(nested_clean)))
    info = ReadInfo(label, "parquet", nested=tuple(nested_clean))
    # Stored types are kept: markers apply to nothing, but the info records
    # the notes and the nested columns.
    df.attrs["craft_read"] = ReadInfo(label, "parquet", column_notes=notes, nested=info.nested,
                                      duplicated_names=tuple(duplicated))
    return df


def _inexact_integers_as_text(pa, table):
    """The table with its integer columns that float64 would round cast to their decimal text, and their names.

    pandas stores an integer column with missing cells as float64, exact only
    up to 2**53; such a column holding a larger integer is read as text as
    written, as a text file's column of them is (:func:`_digit_codes`).
    """
    import pyarrow.compute as pc

    inexact = set()
    for position, stored in enumerate(table.schema):
        column = table.column(position)
        if not (pa.types.is_integer(stored.type) and column.null_count):
            continue
        bounds = pc.min_max(column)
        if max(abs(bounds["min"].as_py() or 0), abs(bounds["max"].as_py() or 0)) > _FLOAT_EXACT:
            table = table.set_column(position, stored.name, pc.cast(column, pa.string()))
            inexact.add(stored.name)
    return table, inexact


def _nested_text(value: object) -> str:
    """A list/struct/map cell as JSON text (keys kept in order)."""
    def plain(v):
        if isinstance(v, np.ndarray):
            return [plain(x) for x in v.tolist()]
        if isinstance(v, (list, tuple)):
            return [plain(x) for x in v]
        if isinstance(v, dict):
            return {str(k): plain(x) for k, x in v.items()}
        if isinstance(v, np.generic):
            return v.item()
        return v
    return json.dumps(plain(value), ensure_ascii=False, default=str)


def _typed_cells_as_text(df: pd.DataFrame) -> pd.DataFrame:
    """The text of every cell of a typed table (a Parquet file's), for ``as_text``.

    A float32 or float16 value is written as the shortest text that reads
    back as that value at its own precision (``68.630135``, not the float64
    digits ``68.63013458251953`` of the same number); a missing cell of any
    dtype, the nullable ones included (``pd.NA``), is an empty cell.
    """
    columns = {}
    for position in range(df.shape[1]):
        column = df.iloc[:, position]
        if pd.api.types.is_float_dtype(column.dtype) and np.dtype(column.dtype).itemsize < 8:
            present = column.notna().to_numpy()
            text = np.full(len(column), "", dtype=object)
            text[present] = [str(v) for v in column.to_numpy()[present]]
            columns[position] = text
        else:
            columns[position] = column.astype(object).map(_cell_text).to_numpy()
    out = pd.DataFrame(columns, index=df.index)
    out.columns = df.columns
    return out
