"""Typing the cells a reader found: numbers, missing markers, codes kept as written, column labels.

What a number would change stays text: integers written with leading zeros
and integers beyond 2**53 (float64 rounds neighbours into one value). Every
marker read as missing or kept as text is counted in the table's
:class:`~craft.io.ReadInfo`. Shared by the text, Excel and Parquet readers.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ._info import _add_note, _count_text, _join, _NUMERIC_PLACEHOLDERS, _Options, ReadInfo


_INT_RE = re.compile(r"[+-]?\d+", re.ASCII)
_THOUSANDS_RE = re.compile(r"[+-]?\d{1,3}(?:,\d{3})+(?:\.\d*)?", re.ASCII)
# Thousands grouped by dots and a decimal comma ("1.234,56"), as written where
# the comma is the decimal mark. Without the comma ("1.234") it is read as a
# decimal point: a thousand and 1.234 cannot be told apart.
_DOT_THOUSANDS_RE = re.compile(r"[+-]?\d{1,3}(?:\.\d{3})+,\d*", re.ASCII)
_DOT_GROUPS_RE = re.compile(r"[+-]?\d{1,3}(?:\.\d{3})+", re.ASCII)


def _finish_as_text(df: pd.DataFrame, info: ReadInfo) -> pd.DataFrame:
    # One array for the whole frame: the parser gives a block per column, and pandas' frame operations go
    # block by block (3 s for a 10,000-column table, against 0.1 s here).
    cells = df.to_numpy(dtype=object)
    cells[pd.isna(cells)] = ""
    df = pd.DataFrame(cells, index=df.index, columns=df.columns)
    df.attrs["craft_read"] = info
    return df


def _finish_columns(df: pd.DataFrame, info: ReadInfo, options: _Options, *, decimal_comma: bool,
                    notes: dict | None = None, typed: pd.DataFrame | None = None,
                    recheck: Iterable[int] = ()) -> pd.DataFrame:
    """Numbers for the columns that pandas left as text only because of
    missing markers, dash placeholders, decimal commas, thousands separators
    or integers too large for 64 bits; markers counted in the ReadInfo.

    ``typed`` is the same table as parsed by pandas with the markers
    missing: where it found numbers or booleans its column is taken, and the
    markers it turned missing are counted from ``df``'s cells; the columns
    at ``recheck`` (numbers that may be codes, see :func:`_code_candidates`)
    hold their cells as written and are looked at even without a missing
    cell.

    Integers that a number would change (written with leading zeros, or
    beyond 2**53, where float64 rounds neighbours into one value) stay text
    as written, and the column's note says why."""
    read_as_missing: dict[str, dict[str, int]] = {}
    kept_as_text: dict[str, dict[str, int]] = {}
    column_notes: dict[str, str] = dict(notes or {})
    placeholders = options.tokens | _NUMERIC_PLACEHOLDERS if options.tokens else frozenset()
    positions: list[int] = list(range(df.shape[1]))
    if typed is not None:
        # Numbers with no missing cell are settled (the cells hold them as
        # parsed): only the other columns are looked at, one by one.
        numeric = np.array([pd.api.types.is_numeric_dtype(d) or pd.api.types.is_bool_dtype(d)
                            for d in typed.dtypes], dtype=bool)
        settled = numeric & ~typed.isna().any().to_numpy(dtype=bool)
        settled[list(recheck)] = False
        positions = np.flatnonzero(~settled).tolist()
    for position in positions:
        name = df.columns[position]
        column = df.iloc[:, position]
        parsed = typed.iloc[:, position] if typed is not None else None
        if _keep_codes(df, position, placeholders, read_as_missing, column_notes):
            continue
        # A column of only markers is text that says so ("None", "NA"), not an empty number column.
        if parsed is not None and (pd.api.types.is_numeric_dtype(parsed.dtype)
                                   or pd.api.types.is_bool_dtype(parsed.dtype)) and (
                parsed.notna().any() or column.isna().all()):
            turned = parsed.isna().to_numpy(dtype=bool) & column.notna().to_numpy(dtype=bool)
            if turned.any():
                counts = column[turned].astype(str).str.strip().value_counts()
                read_as_missing[name] = {str(k): int(v) for k, v in counts.items()}
            df.isetitem(position, parsed)
            continue
        if not (column.dtype == object or isinstance(column.dtype, pd.StringDtype)):
            continue
        converted = _as_numbers(column, decimal_comma=decimal_comma, placeholders=placeholders)
        if converted is not None:
            numbers, markers, thousands = converted
            df.isetitem(position, numbers)
            if markers:
                read_as_missing[name] = markers
            _add_note(column_notes, name, thousands and f"numbers written with thousands separators "
                                                     f"(e.g. {thousands!r}) read as numbers")
            continue
        if typed is not None and column.dtype == object:
            # Text as pandas types it (its string dtype), as a plain read_csv would.
            column = column.astype(typed.iloc[:, position].dtype) if isinstance(
                typed.iloc[:, position].dtype, pd.StringDtype) else column
            df.isetitem(position, column)
        if not options.tokens:
            continue
        found = _marker_counts(column, options.tokens)
        if not found:
            continue
        if options.tokens_in_text:
            is_marker = column.astype(object).map(lambda v: isinstance(v, str) and v.strip() in options.tokens)
            df.isetitem(position, column.mask(is_marker.astype(bool)))
            read_as_missing[name] = found
        else:
            kept_as_text[name] = found
    for name, markers in read_as_missing.items():
        column_notes[name] = _join(column_notes.get(name), f"read as missing: {_count_text(markers)}")
    for name, markers in kept_as_text.items():
        column_notes[name] = _join(column_notes.get(name), f"kept as text, not missing: {_count_text(markers)}")
    df.attrs["craft_read"] = dataclasses.replace(
        info, missing_tokens=tuple(sorted(options.tokens)), tokens_in_text=options.tokens_in_text,
        read_as_missing=read_as_missing, kept_as_text=kept_as_text, column_notes=column_notes,
    )
    return df


# Integers above this in magnitude are not all float64 values: neighbours round into one.
_FLOAT_EXACT = 2**53
_LEADING_ZERO_RE = re.compile(r"[+-]?0\d+", re.ASCII)
_LEADING_ZERO_LINE_RE = re.compile(r"\n[ \t]*[+-]?0\d", re.ASCII)


def _keep_codes(df: pd.DataFrame, position: int, placeholders: frozenset,
                read_as_missing: dict, column_notes: dict) -> bool:
    """Keep the column at ``position`` as written if it holds codes
    (:func:`_digit_codes`), recording its markers and note; whether it did."""
    codes = _digit_codes(df.iloc[:, position], placeholders)
    if codes is None:
        return False
    text, markers, why = codes
    name = df.columns[position]
    df.isetitem(position, text)
    if markers:
        read_as_missing[name] = markers
    column_notes[name] = _join(column_notes.get(name), f"kept as text, as written: {why}")
    return True


def _digit_codes(column: pd.Series, placeholders: frozenset) -> tuple[pd.Series, dict[str, int], str] | None:
    """A column of integers that numbers would change, kept as written.

    When every cell is an integer written in digits (or a missing marker)
    and some are written with leading zeros ("00123", a code: 123 would
    lose the zeros) or lie beyond 2**53 (float64 rounds neighbours such as
    99999999999999999999 and ...98 into one value): the cells as written
    with the markers missing, the markers' counts, and why (for the
    column's note). None otherwise.
    """
    if not (column.dtype == object or isinstance(column.dtype, pd.StringDtype)):
        return None
    # A column of words or decimals is settled by its first cells.
    head = pd.unique(column.iloc[:1024].dropna())[:256]
    if not all(isinstance(v, str) and (v.strip() in placeholders or _INT_RE.fullmatch(v.strip())) for v in head):
        return None
    present = column.dropna()
    if present.empty:
        return None
    # Settled without a Python loop for most columns: no cell of 16
    # characters or more, and none with a leading zero.
    written = present.to_numpy(dtype=object)
    try:
        joined = "\n" + "\n".join(written)
    except TypeError:  # not all text: not codes
        return None
    if max(map(len, written)) < 16 and _LEADING_ZERO_LINE_RE.search(joined) is None:
        return None
    stripped = present.astype(str).str.strip()
    is_marker = stripped.isin(placeholders) | stripped.eq("")
    digits = stripped[~is_marker]
    if digits.empty or not digits.str.fullmatch(_INT_RE.pattern).all():
        return None
    leading = digits[digits.str.fullmatch(_LEADING_ZERO_RE.pattern)]
    long_ = digits[digits.str.lstrip("+-").str.len() > 15]
    beyond = [v for v in pd.unique(long_) if abs(int(v)) > _FLOAT_EXACT]
    if leading.empty and not beyond:
        return None
    why = (f"written with leading zeros (e.g. {leading.iloc[0]!r}), which numbers would drop" if not leading.empty
           else f"integers beyond 2**53 (e.g. {beyond[0]!r}), which numbers would round into each other")
    markers = {str(k): int(v) for k, v in stripped[is_marker & stripped.ne("")].value_counts().items()}
    text = column.astype(object).where(column.notna())
    if markers:
        text[is_marker[is_marker].index] = np.nan
    return text, markers, why


def _marker_counts(column: pd.Series, tokens: frozenset) -> dict[str, int]:
    """Cells of a text column equal (after stripping spaces) to a marker, by marker."""
    uniques = pd.unique(column.dropna())
    hits = [v for v in uniques if isinstance(v, str) and v.strip() in tokens]
    if not hits:
        return {}
    counts = column[column.isin(hits)].map(str.strip).value_counts()
    return {str(k): int(v) for k, v in counts.items()}


def _as_numbers(column: pd.Series, *, decimal_comma: bool,
                placeholders: frozenset) -> tuple[pd.Series, dict[str, int], str | None] | None:
    """The column as numbers, the markers read as missing with their counts,
    and an example of a number with thousands separators (or None); None if
    a value is neither a number nor a placeholder, or no value is a number.

    A text column is parsed by pandas in native code; only the cells it
    cannot parse (markers, thousands separators, decimal commas, integers
    beyond 64 bits) are looked at one distinct value at a time. A column of
    words is settled by its first values.
    """
    present = column.dropna()
    if present.empty:
        return None
    if pd.api.types.infer_dtype(present, skipna=True) != "string":
        return _as_numbers_by_value(column, present, decimal_comma=decimal_comma, placeholders=placeholders)
    head = pd.unique(present.iloc[:256])
    if any(_parse_number(v, decimal_comma=decimal_comma, placeholders=placeholders) is None for v in head):
        return None
    parsed = pd.to_numeric(present, errors="coerce")
    if parsed.dtype == object:  # e.g. integers beyond 64 bits: value by value
        return _as_numbers_by_value(column, present, decimal_comma=decimal_comma, placeholders=placeholders)
    failed = parsed.isna().to_numpy()
    mapping: dict[object, Any] = {}
    for value in pd.unique(present[failed]):
        number = _parse_number(value, decimal_comma=decimal_comma, placeholders=placeholders)
        if number is None:
            return None
        mapping[value] = number
    numbers_found = {v: n for v, n in mapping.items() if n is not _PLACEHOLDER}
    if failed.all() and not numbers_found:
        return None
    thousands = next((str(v).strip() for v in numbers_found if _grouped(str(v).strip(), decimal_comma)), None)
    if thousands and decimal_comma:
        # Beside "1.234,56", "1.000" is a thousand, not one.
        grouped = present.astype(str).str.strip().str.fullmatch(_DOT_GROUPS_RE.pattern).to_numpy(dtype=bool)
        if grouped.any():
            parsed = parsed.astype(np.float64)
            parsed[grouped] = [float(str(v).strip().replace(".", "")) for v in present[grouped]]
    markers_found = [v for v, n in mapping.items() if n is _PLACEHOLDER]
    markers: dict[str, int] = {}
    if markers_found:
        counts = present[present.isin(markers_found)].map(lambda v: str(v).strip()).value_counts()
        markers = {str(k): int(v) for k, v in counts.items() if str(k)}
    if not markers_found and len(present) == len(column):
        ok = pd.to_numeric(present[~failed]) if (~failed).any() else pd.Series([], dtype="int64")
        if pd.api.types.is_integer_dtype(ok.dtype) and all(
                isinstance(n, int) and -(2**63) <= n < 2**63 for n in numbers_found.values()):
            ints = np.empty(len(present), dtype=np.int64)
            ints[~failed] = ok.to_numpy(dtype=np.int64)
            if failed.any():
                ints[failed] = present[failed].map(numbers_found).to_numpy(dtype=np.int64)
            return pd.Series(ints, index=column.index, name=column.name), markers, thousands
    floats = parsed.to_numpy(dtype=np.float64, na_value=np.nan, copy=True)
    if failed.any():
        floats[failed] = [np.nan if mapping[v] is _PLACEHOLDER else _to_float(mapping[v]) for v in present[failed]]
    numbers = pd.Series(np.nan, index=column.index, name=column.name, dtype="float64")
    numbers[present.index] = floats
    return numbers, markers, thousands


def _as_numbers_by_value(column: pd.Series, present: pd.Series, *, decimal_comma: bool,
                         placeholders: frozenset) -> tuple[pd.Series, dict[str, int], str | None] | None:
    """:func:`_as_numbers` for cells of mixed Python types (an Excel column):
    one parse per distinct value, stopping at the first that is not a number."""
    mapping: dict[object, Any] = {}
    all_int = True
    n_numbers = 0
    thousands = None
    for value in pd.unique(present):
        number = _parse_number(value, decimal_comma=decimal_comma, placeholders=placeholders)
        if number is None:
            return None
        if number is not _PLACEHOLDER:
            n_numbers += 1
            all_int = all_int and isinstance(number, int)
            if thousands is None and isinstance(value, str) and _grouped(value.strip(), decimal_comma):
                thousands = value.strip()
        mapping[value] = number
    if n_numbers == 0:
        return None
    markers_found = [v for v, n in mapping.items() if n is _PLACEHOLDER]
    markers: dict[str, int] = {}
    if markers_found:
        counts = present[present.isin(markers_found)].map(lambda v: str(v).strip()).value_counts()
        markers = {str(k): int(v) for k, v in counts.items() if str(k)}
    if all_int and len(mapping) == n_numbers and len(present) == len(column):
        ints = [mapping[v] for v in column]
        if all(-(2**63) <= v < 2**63 for v in ints):
            return pd.Series(ints, index=column.index, name=column.name, dtype="int64"), markers, thousands
    floats = {k: (np.nan if v is _PLACEHOLDER else _to_float(v)) for k, v in mapping.items()}
    numbers = pd.Series(
        [np.nan if pd.isna(v) else floats[v] for v in column],
        index=column.index, name=column.name, dtype="float64",
    )
    return numbers, markers, thousands


_PLACEHOLDER = object()


def _grouped(text: str, decimal_comma: bool) -> bool:
    """Whether a number is written with thousands separators ("12,345"; "1.234,56" with decimal commas)."""
    return bool((_DOT_THOUSANDS_RE if decimal_comma else _THOUSANDS_RE).fullmatch(text))


def _to_float(number: float) -> float:
    try:
        return float(number)
    except OverflowError:  # an integer beyond the float range
        return float("inf") if number > 0 else float("-inf")


def _parse_number(value: object, *, decimal_comma: bool, placeholders: frozenset) -> object:
    """An int or float for a number, ``_PLACEHOLDER`` for a missing marker or
    a blank cell, None for anything else."""
    if isinstance(value, (bool, np.bool_)):
        return None
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value)
    if not isinstance(value, str):
        return None
    text = value.strip()
    if not text or text in placeholders:
        return _PLACEHOLDER
    if "_" in text or not text.isascii():
        return None
    if _INT_RE.fullmatch(text) and len(text) <= 4000:
        return int(text)
    if decimal_comma:
        if text.count(",") == 1 and "." not in text:
            text = text.replace(",", ".")
        elif _DOT_THOUSANDS_RE.fullmatch(text):  # "1.234,56": dots group thousands where commas are decimal
            text = text.replace(".", "").replace(",", ".")
            if _INT_RE.fullmatch(text):
                return int(text)
    elif _THOUSANDS_RE.fullmatch(text):
        text = text.replace(",", "")
        if _INT_RE.fullmatch(text):
            return int(text)
    try:
        number = float(text)
    except ValueError:
        return None
    # "NAN", "nAn", "+nan": missing as surely as pandas' "NaN", and counted with the markers.
    return _PLACEHOLDER if number != number else number


def _clean_names(raw: Sequence[object]) -> list[str]:
    """Strip labels, name empty ones ``column_<i>``, suffix duplicates."""
    names = []
    for position, value in enumerate(raw, start=1):
        text = "" if value is None or (isinstance(value, float) and np.isnan(value)) \
            else str(value)
        text = text.replace("\ufeff", "").strip()
        names.append(text or f"column_{position}")
    counts: dict[str, int] = {}
    unique = []
    for name in names:
        count = counts.get(name, 0)
        while count > 0:  # pandas' dedup: a, a.1, a.2, skipping names taken
            counts[name] = count + 1
            name = f"{name}.{count}"
            count = counts.get(name, 0)
        counts[name] = count + 1
        unique.append(name)
    return unique


def _cell_text(value: object) -> str:
    """The text of a typed cell, for ``as_text``: a missing one (``None``,
    NaN, ``NaT``, ``pd.NA``) is an empty cell."""
    if value is None or value is pd.NA or value is pd.NaT or (isinstance(value, float) and np.isnan(value)):
        return ""
    if isinstance(value, np.generic):
        value = value.item()
    return str(value)
