"""Reading a text table (CSV/TSV/text) once its encoding and delimiter are known.

Bounds the work before parsing (the lines' shape: blank lines, the widest
line, whether codes may be present), parses with pandas' C parser, drops
blank rows and hands the cells to :mod:`craft.io._columns` to be typed.
"""

from __future__ import annotations

import collections
import io
import re
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..exceptions import CraftInputError
from ..limits import check_table_shape
from ._columns import _clean_names, _finish_as_text, _finish_columns, _FLOAT_EXACT
from ._info import _Options, ReadInfo
from ._sniff import (_CONTROL_RE, _CONVERT_HINT, _ENCODINGS_READ, _MAX_CONTROL_SHARE, _SAMPLE_CHARS, _decode, _delimiter,
                     _strip_leading_blank_lines, _uses_decimal_comma)


_FIELDS_RE = re.compile(r"Expected (\d+) fields in line (\d+), saw (\d+)")
_UNNAMED_RE = re.compile(r"Unnamed: \d+(_level_\d+)?")


def _read_text(data: bytes, label: str, options: _Options, *, prefer_tab: bool) -> pd.DataFrame:
    text, encoding = _decode(data, label)
    nul = text.find("\x00")
    if nul >= 0:
        # One rule wherever it is: a NUL is never part of a table's text.
        line = text.count("\n", 0, nul) + 1
        raise CraftInputError(
            f"{label} is not a readable table: it looks like binary data, not text (a NUL character on "
            f"line {line}). The encodings read are {_ENCODINGS_READ}; if it is text in another encoding, "
            f"{_CONVERT_HINT}"
        )
    sample = text[:_SAMPLE_CHARS]
    n_control = len(_CONTROL_RE.findall(sample))
    if n_control > _MAX_CONTROL_SHARE * len(sample):
        raise CraftInputError(
            f"{label} is not a readable table: it looks like binary data, not text "
            f"({n_control} control characters in the first {len(sample)}). The encodings read are "
            f"{_ENCODINGS_READ}; if it is text in another encoding, {_CONVERT_HINT}"
        )
    if not text.strip():
        raise CraftInputError(
            f"cannot read {label}: the file is empty (only whitespace)"
        )
    text, delimiter, records, hint = _delimiter(_strip_leading_blank_lines(text), prefer_tab=prefer_tab)
    # Bound the work before parsing: the header's fields (an upper bound when
    # a name holds a quoted delimiter) times the lines (one when a quoted
    # cell spans lines).
    end = text.find("\n")
    header_line = text if end < 0 else text[:end]
    shape = _line_shape(text, delimiter)
    blank_lines = shape.blank_lines
    n_lines = text.count("\n") + (not text.endswith("\n")) - blank_lines
    check_table_shape(max(1, n_lines - 1), max(header_line.count(delimiter) + 1, shape.widest), label,
                      estimated=True)
    decimal_comma = delimiter != "," and _uses_decimal_comma(records[1:])

    base: dict[str, object] = {
        "sep": delimiter,
        "decimal": "," if decimal_comma else ".",
        "keep_default_na": False,
        "low_memory": False,
        "engine": "c",
        "quotechar": '"',
        # Blank lines are skipped by the parser (they were counted above): as
        # rows they would cost memory by the line, whatever the file's size.
        # Lines of only delimiters become all-missing rows, dropped and
        # counted below.
        "skip_blank_lines": True,
    }
    header = records[0] if records else None
    # The cells as written (empty ones missing): what exports write, and
    # what the markers are counted from.
    written_options = {**base, "dtype": object, "na_values": [""]}
    if options.as_text:
        cells, raw = _parse_csv(text, label, header, records, written_options)
        typed = None
    else:
        # Numbers parsed by pandas in native code with the markers missing: a
        # column it makes numeric is numeric, the others are decided from the
        # cells as written. Those are read (as Python strings, the slow part)
        # only for the columns where they can differ: those with a missing cell.
        typed, raw = _parse_csv(text, label, header, records,
                                {**base, "na_values": sorted(options.tokens | {""})})
        codes = _code_candidates(typed, shape)
        need = sorted(set(np.flatnonzero(typed.isna().any().to_numpy(dtype=bool)).tolist()) | codes)
        cells = typed.copy(deep=False)
        if need:
            written, _ = _parse_csv(text, label, header, records, {**written_options, "usecols": need})
            for i, position in enumerate(need):
                cells.isetitem(position, written.iloc[:, i])
    blank = _blank_rows(cells, hint=typed)
    blank_rows = int(blank.sum()) + blank_lines
    if blank.all():
        raise CraftInputError(f"cannot read {label}: it has a header but no data rows")
    if blank.any():
        cells = cells.loc[~blank].reset_index(drop=True)
        if typed is not None:
            typed = typed.loc[~blank].reset_index(drop=True)
            # The blank rows made integer columns float: integers again when
            # nothing else is missing, as if the rows had never been there.
            for position in sorted(set(need) - codes):  # codes keep their cells as written
                column = typed.iloc[:, position]
                if pd.api.types.is_float_dtype(column.dtype) and not column.isna().any():
                    exact = pd.to_numeric(cells.iloc[:, position], errors="coerce")
                    if pd.api.types.is_integer_dtype(exact.dtype):
                        typed.isetitem(position, exact)
                        cells.isetitem(position, exact)  # settled: the cells hold the numbers
    check_table_shape(cells.shape[0], cells.shape[1], label)
    names = _clean_names(raw)
    cells.columns = names
    # The labels as written (stripped, as _clean_names reads them) that name more than one column.
    counted = collections.Counter(str(name).replace("\ufeff", "").strip() for name in raw
                                  if name is not None and not (isinstance(name, float) and np.isnan(name)))
    repeated = tuple(sorted(name for name, n in counted.items() if name and n > 1))
    info = ReadInfo(label, "text", encoding=encoding, delimiter=delimiter, blank_rows=blank_rows,
                    blank_records=tuple(np.flatnonzero(blank).tolist()), duplicated_names=repeated,
                    delimiter_line=hint)
    if typed is None:
        return _finish_as_text(cells, info)
    typed.columns = names
    return _finish_columns(cells, info, options, decimal_comma=delimiter != ",", typed=typed, recheck=codes)


# Characters of text looked at at once by _line_shape (bounds its own
# memory: about 30 bytes a character).
_LINE_SHAPE_CHUNK = 2**18


@dataclass(frozen=True)
class _LineShape:
    """What :func:`_line_shape` found in a text table."""

    blank_lines: int
    widest: int  # the most fields on a line
    leading_zero: bool  # a field starts with 0 and another digit ("007")
    long_digits: bool  # 16 digits in a row somewhere (an integer beyond 2**53 may be there)


def _line_shape(text: str, delimiter: str) -> _LineShape:
    """Blank lines (only spaces, tabs or a carriage return) and the most
    fields on a line, outside quoted fields; whether a field has a leading
    zero or 16 digits in a row (codes, see :func:`_code_candidates`).

    The parser skips blank lines; they are counted here, with NumPy over
    bounded chunks of the text, so that a file of millions of newlines costs
    neither a row each nor a Python loop; the widest line bounds the columns
    before the parser meets it. A character is inside a quoted field when an
    odd number of quote characters precede it (a doubled quote inside a
    field adds two).
    """
    blank = widest = 0
    odd_quotes = 0
    line_has_content = True  # the header line, never blank (leading blank lines are stripped)
    line_delimiters = 0
    leading_zero = long_digits = zero_pending = False
    previous = 10  # the character before the chunk: a newline before the first
    code = ord(delimiter)  # ASCII, as every delimiter read (the C parser takes no other)
    for start in range(0, len(text), _LINE_SHAPE_CHUNK):
        piece = text[start:start + _LINE_SHAPE_CHUNK]
        # UTF-8 keeps every ASCII character one byte; the bytes of other characters are all >= 128.
        chars = np.frombuffer(piece.encode("utf-8", "surrogatepass"), dtype=np.uint8)
        quotes = np.flatnonzero(chars == 34)

        def outside(positions: np.ndarray, quotes=quotes, odd=odd_quotes) -> np.ndarray:
            """Whether an even number of quotes (this chunk's and before) precede each position."""
            if quotes.size == 0:
                return np.full(positions.size, odd == 0)
            return ((np.searchsorted(quotes, positions) + odd) & 1) == 0

        ends = np.flatnonzero(chars == 10)
        spaces = np.flatnonzero((chars == 32) | (chars == 9) | (chars == 13))
        delimiters = np.flatnonzero(chars == code)
        delimiters = delimiters[outside(delimiters)]
        if ends.size:
            # A line is blank when all its characters are spaces: count them per line.
            # (Counts per line from where each line ends among the sorted
            # positions: a search per line, not per space or delimiter.)
            lengths = np.diff(ends, prepend=-1) - 1
            spaces_before = np.searchsorted(spaces, ends)
            empty = lengths == np.diff(spaces_before, prepend=0)
            empty[0] &= not line_has_content
            blank += int(np.count_nonzero(empty & outside(ends)))
            delimiters_before = np.searchsorted(delimiters, ends)
            per_line = np.diff(delimiters_before, prepend=0)
            per_line[0] += line_delimiters
            widest = max(widest, int(per_line.max()))
            line_delimiters = int(delimiters.size - delimiters_before[-1])
            line_has_content = chars.size - ends[-1] - 1 > spaces.size - spaces_before[-1]
        else:
            line_delimiters += delimiters.size
            line_has_content = line_has_content or chars.size > spaces.size
        digit = (chars >= 48) & (chars <= 57)
        # 16 digits in a row fill at least one aligned block of 8: find such
        # blocks in native code, then look at the text around the few found.
        padded = np.zeros(-(-digit.size // 8) * 8, dtype=np.uint8)
        padded[:digit.size] = digit
        blocks = np.flatnonzero(padded.view(np.uint64) == 0x0101010101010101)
        if not long_digits and blocks.size:
            raw = chars.tobytes()
            offsets = (8 * blocks[:64]).tolist() if piece.isascii() else [
                len(raw[:8 * b].decode("utf-8", "ignore")) for b in blocks[:64]]
            long_digits = any(_LONG_DIGITS_RE.search(text, max(0, start + o - 16), start + o + 24)
                              for o in offsets) or blocks.size > 64
        # ... and across the boundary with the chunk before.
        long_digits = long_digits or (start > 0 and _LONG_DIGITS_RE.search(text, start - 15, start + 15) is not None)
        # A field opening with 0 and another digit ("007"): a zero after a delimiter, a newline or a quote.
        opener = (chars == code) | (chars == 10) | (chars == 34)
        zero_opens = (chars == 48) & np.concatenate(([previous in (code, 10, 34)], opener[:-1]))
        leading_zero = (leading_zero or bool(np.any(zero_opens[:-1] & digit[1:]))
                        or (zero_pending and bool(digit[0])))
        zero_pending = bool(zero_opens[-1])
        odd_quotes = (odd_quotes + quotes.size) & 1
        previous = int(chars[-1])
    return _LineShape(blank, max(widest, line_delimiters) + 1, leading_zero, long_digits)


def _parse_csv(text: str, label: str, header, records, read_options: dict) -> tuple[pd.DataFrame, list]:
    """``pd.read_csv`` of the whole text, and the header's raw labels."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # pandas warns when the first data row has more fields than the
        # header (it would drop them): make that an error and read again.
        warnings.simplefilter("error", pd.errors.ParserWarning)
        try:
            try:
                df = pd.read_csv(io.StringIO(text), header=0, index_col=False, **read_options)
                raw = header if header is not None and len(header) == df.shape[1] else [
                    "" if _UNNAMED_RE.fullmatch(str(c)) else str(c) for c in df.columns
                ]
            except pd.errors.ParserWarning as exc:
                # Keep the extra fields as columns named column_<i>.
                width = max((len(record) for record in records), default=0)
                if header is None or width <= len(header):
                    raise CraftInputError(_parser_message(exc, label)) from None
                df = pd.read_csv(io.StringIO(text), header=0, index_col=False,
                                 names=[f"column_{i}" for i in range(1, width + 1)],
                                 **read_options)
                raw = list(header) + [""] * (width - len(header))
        except pd.errors.EmptyDataError:
            raise CraftInputError(f"cannot read {label}: the file is empty") from None
        except (pd.errors.ParserError, pd.errors.ParserWarning) as exc:
            raise CraftInputError(_parser_message(exc, label)) from None
    return df, list(raw)


def _parser_message(exc: Exception, label: str) -> str:
    if isinstance(exc, pd.errors.ParserWarning):
        return (
            f"cannot read {label}: some rows have more fields than the header; "
            f"check the delimiter and the quoting"
        )
    match = _FIELDS_RE.search(str(exc))
    if match:
        expected, line, saw = match.groups()
        return (
            f"cannot read {label}: line {line} has {saw} fields but the header has "
            f"{expected}; check the delimiter and the quoting"
        )
    message = str(exc).strip().replace("Error tokenizing data. C error: ", "")
    return f"{label} is not a readable table: {message}"


def _is_blank(column: pd.Series) -> np.ndarray:
    """Cells that hold nothing: missing, or text of only whitespace."""
    blank = column.isna().to_numpy(dtype=bool)
    if isinstance(column.dtype, pd.StringDtype):
        return blank | column.str.strip().eq("").fillna(False).to_numpy(dtype=bool)
    if column.dtype == object:
        text = ~blank
        if text.any():
            values = column.to_numpy(dtype=object)
            blank = blank.copy()
            blank[text] = [isinstance(v, str) and not v.strip() for v in values[text]]
    return blank


def _blank_rows(df: pd.DataFrame, hint: pd.DataFrame | None = None) -> np.ndarray:
    """Rows in which no cell has a value. ``hint``, the same table typed by
    pandas (numbers in native arrays), is looked at first: it settles most
    rows without touching a Python string."""
    candidates = np.ones(df.shape[0], dtype=bool)
    for frame in (df,) if hint is None else (hint, df):
        for position in range(frame.shape[1]):
            rows = np.flatnonzero(candidates)
            if rows.size == 0:
                return candidates
            candidates[rows] = _is_blank(frame.iloc[rows, position])
    return candidates


_LONG_DIGITS_RE = re.compile(r"\d{16}", re.ASCII)


def _code_candidates(typed: pd.DataFrame, shape: _LineShape) -> set[int]:
    """Columns that pandas typed as numbers but that may hold codes
    (:func:`_digit_codes`): integers beyond 2**53 (or 64 bits), and, when a
    field of the text starts with a leading zero, every column of whole
    numbers."""
    if not shape.leading_zero and not shape.long_digits:
        return set()  # no leading zero and no integer beyond 2**53 (16 digits or more) in the whole text
    leading = shape.leading_zero
    kinds = typed.dtypes.map(lambda d: "object" if pd.api.types.is_object_dtype(d) else "number"
                             if pd.api.types.is_numeric_dtype(d) and not pd.api.types.is_bool_dtype(d)
                             else "other").to_numpy()
    # Integers beyond 64 bits, held as Python ints.
    found = {int(p) for p in np.flatnonzero(kinds == "object")
             if pd.api.types.infer_dtype(typed.iloc[:, p], skipna=True) == "integer"}
    numbers = np.flatnonzero(kinds == "number")
    if numbers.size:
        # One block for all number columns: a wide table has many. As floats,
        # 2**53 + 1 is 2**53: candidates from 2**53 on, decided on the text.
        values = typed.iloc[:, numbers].to_numpy(dtype=np.float64, na_value=np.nan)
        finite = np.isfinite(values)
        values = np.where(finite, values, 0.0)
        whole = finite.any(axis=0) & np.all(values == np.floor(values), axis=0)
        codes = whole & (leading | (np.abs(values).max(axis=0) >= _FLOAT_EXACT))
        found.update(int(p) for p in numbers[codes])
    return found
