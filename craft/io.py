"""Reading user tables (CSV/TSV/text, Parquet, Excel) into DataFrames.

:func:`read_table` accepts whatever a user uploads and either returns a
DataFrame with unique, stripped string column labels and a default
``RangeIndex``, or raises :class:`~craft.exceptions.CraftInputError` with a
message that names the file and says what is wrong. No other exception type
escapes it.
"""

from __future__ import annotations

import csv
import hashlib
import io
import os
import re
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from ._optional import MissingExtraError, require
from .exceptions import CraftInputError

__all__ = ["read_table", "table_fingerprint"]

_TEXT_EXTENSIONS = frozenset({".csv", ".tsv", ".tab", ".txt"})
_PARQUET_EXTENSIONS = frozenset({".parquet", ".pq"})
_XLSX_EXTENSIONS = frozenset({".xlsx", ".xlsm"})
_XLS_EXTENSIONS = frozenset({".xls"})

_PARQUET_MAGIC = b"PAR1"
_ZIP_MAGIC = b"PK\x03\x04"
_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"

# Candidate delimiters, in order of preference when several fit equally well.
_DELIMITERS = (",", "\t", ";", "|")
# Characters of decoded text looked at to sniff the format.
_SAMPLE_CHARS = 65536
# Records of the sample parsed per candidate delimiter.
_SAMPLE_RECORDS = 200
# A text sample with more than this share of control characters is binary.
_MAX_CONTROL_SHARE = 0.01
_CONTROL_RE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")

# Cells read as missing everywhere: pandas' defaults plus "?" (UCI's marker).
_NA_VALUES = sorted(
    {
        "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan",
        "1.#IND", "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a",
        "nan", "null", "?",
    }
)
# Placeholders read as missing only in a column whose other values are all
# numbers; elsewhere they stay text.
_NUMERIC_PLACEHOLDERS = frozenset({"-", "--", "---", ".", "\u2013", "\u2014"})
_INT_RE = re.compile(r"[+-]?\d+", re.ASCII)
_FIELDS_RE = re.compile(r"Expected (\d+) fields in line (\d+), saw (\d+)")
_UNNAMED_RE = re.compile(r"Unnamed: \d+(_level_\d+)?")


def table_fingerprint(data: bytes) -> str:
    """SHA-256 hex digest of a file's bytes, for cache keys.

    Parameters
    ----------
    data : bytes-like
        The file's content.

    Returns
    -------
    str
        64 lowercase hex digits.

    Raises
    ------
    CraftInputError
        If ``data`` is not bytes-like.

    Examples
    --------
    >>> table_fingerprint(b"a,b\\n1,2\\n")[:16]
    '492d5ea496056f1a'
    """
    try:
        view = memoryview(data)
    except TypeError:
        raise CraftInputError(
            f"table_fingerprint needs bytes, got {type(data).__name__}"
        ) from None
    return hashlib.sha256(view).hexdigest()


def read_table(source, name: str | None = None) -> pd.DataFrame:
    """Read a CSV/TSV/text, Parquet or Excel table.

    Text tables: the encoding (UTF-8 with or without BOM, UTF-16 with BOM,
    else cp1252 or Latin-1), the delimiter (``,`` tab ``;`` ``|``), quoted
    fields (with newlines) and decimal commas are detected. Cells equal to
    pandas' missing markers (``""``, ``NA``, ``n/a``, ``NaN``, ``null``, ...)
    or ``?`` are missing. A text column whose values are all numbers apart
    from dash placeholders (``-``, ``--``, ``.``) becomes numeric with those
    cells missing; any other stray text leaves the column as text. With a
    delimiter other than ``,``, numbers written with a decimal comma
    (``2,5``) are read as numbers. Values are otherwise read as they are:
    ``inf`` and huge numbers stay numbers, text such as ``=SUM(A1)`` or
    ``<b>`` stays text.

    Excel: the first sheet, first row as header, same missing markers.
    Parquet: the stored types.

    Column labels are strings with surrounding whitespace removed; an empty
    label becomes ``column_<i>`` (1-based position); duplicated labels get
    ``.1``, ``.2`` suffixes (pandas' convention), so no column is dropped.

    Parameters
    ----------
    source : str, os.PathLike, bytes or binary file-like
        A path, the file's bytes, or an object with ``getvalue()`` or
        ``read()`` (``io.BytesIO``, Streamlit's ``UploadedFile``). A ``str``
        is always a path, never the content.
    name : str, optional
        File name used for messages and to choose the format by its
        extension (``.csv``, ``.tsv``, ``.tab``, ``.txt``, ``.parquet``,
        ``.pq``, ``.xlsx``, ``.xlsm``, ``.xls``). Defaults to the path's or
        the file object's name. Without an extension the format is sniffed
        from the content.

    Returns
    -------
    pandas.DataFrame
        At least one row and one column; ``RangeIndex``; unique ``str``
        column labels.

    Raises
    ------
    CraftInputError
        For a missing, empty, binary, malformed or unsupported file, or a
        file with a header but no data rows. The message names the file.
    ImportError
        For Parquet without pyarrow or .xlsx without openpyxl (the
        ``readers`` extra); the message names the extra.

    Examples
    --------
    >>> df = read_table(b"name;height\\nAda;1,62\\nBob;?\\n", name="people.csv")
    >>> df
      name  height
    0  Ada    1.62
    1  Bob     NaN
    """
    label = "the data"
    try:
        data, file_name = _source_bytes(source, name)
        label = f"{file_name!r}" if file_name else "the data"
        return _read_bytes(data, file_name, label)
    except CraftInputError:
        raise
    except MissingExtraError:  # an installation problem, not a bad file: the message names the extra
        raise
    except MemoryError:
        raise CraftInputError(f"cannot read {label}: it is too large for memory") from None
    except Exception as exc:  # noqa: BLE001 - the contract: only CraftInputError (or a missing extra's ImportError) escapes
        raise CraftInputError(
            f"{label} is not a readable table: {type(exc).__name__}: {exc}"
        ) from exc


def _source_bytes(source, name: str | None) -> tuple[bytes, str | None]:
    """The content and the file name of any accepted source."""
    if name is not None and not isinstance(name, str):
        raise CraftInputError(f"name must be a string, got {type(name).__name__}")
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        file_name = name or path.name
        try:
            return path.read_bytes(), file_name
        except FileNotFoundError:
            raise CraftInputError(f"cannot read {str(path)!r}: no such file") from None
        except IsADirectoryError:
            raise CraftInputError(f"cannot read {str(path)!r}: it is a directory") from None
        except PermissionError:
            raise CraftInputError(f"cannot read {str(path)!r}: permission denied") from None
        except (OSError, ValueError) as exc:
            raise CraftInputError(f"cannot read {str(path)!r}: {exc}") from None
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source), name
    if hasattr(source, "getvalue") or hasattr(source, "read"):
        if name is None:
            raw_name = getattr(source, "name", None)
            if isinstance(raw_name, (str, os.PathLike)):
                name = Path(raw_name).name
        try:
            if hasattr(source, "getvalue"):
                content = source.getvalue()
            else:
                if hasattr(source, "seek"):
                    try:
                        source.seek(0)
                    except (OSError, ValueError):
                        pass  # not seekable: read from where it is
                content = source.read()
        except Exception as exc:  # noqa: BLE001 - any reader failure
            where = f"{name!r}" if name else "the uploaded file"
            raise CraftInputError(f"cannot read {where}: {exc}") from None
        if isinstance(content, str):
            content = content.encode("utf-8")
        if not isinstance(content, (bytes, bytearray, memoryview)):
            raise CraftInputError(
                f"the file object returned {type(content).__name__}, not bytes"
            )
        return bytes(content), name
    raise CraftInputError(
        f"cannot read a table from a {type(source).__name__}: give a path, bytes "
        f"or a binary file object"
    )


def _read_bytes(data: bytes, file_name: str | None, label: str) -> pd.DataFrame:
    if len(data) == 0:
        raise CraftInputError(f"cannot read {label}: the file is empty")
    extension = Path(file_name).suffix.lower() if file_name else ""
    known = _TEXT_EXTENSIONS | _PARQUET_EXTENSIONS | _XLSX_EXTENSIONS | _XLS_EXTENSIONS
    if extension and extension not in known:
        raise CraftInputError(
            f"cannot read {label}: unsupported file type {extension!r}; use CSV "
            f"(.csv, .tsv, .tab, .txt), Parquet (.parquet, .pq) or Excel (.xlsx)"
        )
    # The content decides when it has a binary format's signature, whatever
    # the extension says (a Parquet file saved as "data.csv" is still read).
    if data.startswith(_PARQUET_MAGIC):
        return _read_parquet(data, label)
    if data.startswith(_ZIP_MAGIC):
        return _read_xlsx(data, label)
    if data.startswith(_OLE_MAGIC):
        return _read_xls(data, label)
    if extension in _PARQUET_EXTENSIONS:
        raise CraftInputError(
            f"{label} is not a readable Parquet file: it does not start with the "
            f"Parquet signature 'PAR1'"
        )
    if extension in _XLSX_EXTENSIONS:
        raise CraftInputError(
            f"{label} is not a readable Excel file: an .xlsx file is a ZIP archive, "
            f"and this one is not"
        )
    if extension in _XLS_EXTENSIONS:
        raise CraftInputError(
            f"{label} is not a readable Excel 97-2003 (.xls) file: it lacks the "
            f"OLE2 signature"
        )
    return _read_text(data, label, prefer_tab=extension in (".tsv", ".tab"))


# --------------------------------------------------------------------------
# Text tables
# --------------------------------------------------------------------------


def _decode(data: bytes, label: str) -> str:
    if data.startswith(b"\xef\xbb\xbf"):
        encodings = ("utf-8-sig",)
    elif data.startswith((b"\xff\xfe", b"\xfe\xff")):
        encodings = ("utf-16",)
    else:
        encodings = ("utf-8", "cp1252", "latin-1")
    for encoding in encodings:
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    raise CraftInputError(
        f"{label} is not a readable table: it is not valid {encodings[0]} text"
    )


def _read_text(data: bytes, label: str, *, prefer_tab: bool) -> pd.DataFrame:
    text = _decode(data, label)
    sample = text[:_SAMPLE_CHARS]
    truncated = len(text) > _SAMPLE_CHARS
    n_control = len(_CONTROL_RE.findall(sample))
    if "\x00" in sample or n_control > _MAX_CONTROL_SHARE * len(sample):
        raise CraftInputError(
            f"{label} is not a readable table: it looks like binary data, not text "
            f"({n_control} control characters in the first {len(sample)})"
        )
    if not text.strip():
        raise CraftInputError(
            f"cannot read {label}: the file is empty (only whitespace)"
        )
    if truncated and "\n" in sample:
        sample = sample[: sample.rindex("\n") + 1]
    delimiter, records = _sniff_delimiter(sample, truncated=truncated, prefer_tab=prefer_tab)
    decimal_comma = delimiter != "," and _uses_decimal_comma(records[1:])

    options = dict(
        sep=delimiter,
        decimal="," if decimal_comma else ".",
        na_values=_NA_VALUES,
        keep_default_na=False,
        low_memory=False,
        engine="c",
        quotechar='"',
        skip_blank_lines=True,
    )
    header = records[0] if records else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # pandas warns when the first data row has more fields than the
        # header (it would drop them): make that an error and read again.
        warnings.simplefilter("error", pd.errors.ParserWarning)
        try:
            try:
                df = pd.read_csv(io.StringIO(text), header=0, index_col=False, **options)
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
                                 **options)
                raw = list(header) + [""] * (width - len(header))
        except pd.errors.EmptyDataError:
            raise CraftInputError(f"cannot read {label}: the file is empty") from None
        except (pd.errors.ParserError, pd.errors.ParserWarning) as exc:
            raise CraftInputError(_parser_message(exc, label)) from None
    if df.shape[0] == 0:
        raise CraftInputError(f"cannot read {label}: it has a header but no data rows")
    df.columns = _clean_names(raw)
    return _finish_text_columns(df, decimal_comma=delimiter != ",")


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


def _parse_records(sample: str, delimiter: str, *, truncated: bool) -> list[list[str]]:
    """Up to ``_SAMPLE_RECORDS`` non-empty records of the sample."""
    records: list[list[str]] = []
    reader = csv.reader(io.StringIO(sample, newline=""), delimiter=delimiter, quotechar='"',
                        strict=False)
    try:
        for record in reader:
            if record and (len(record) > 1 or record[0].strip()):  # pandas skips blanks
                records.append(record)
                if len(records) > _SAMPLE_RECORDS:
                    break
    except csv.Error:
        pass  # e.g. a field over the csv module's size limit: use what was read
    if truncated and len(records) > 1:
        records.pop()  # may be cut in the middle of a quoted field
    return records


def _sniff_delimiter(
    sample: str, *, truncated: bool, prefer_tab: bool
) -> tuple[str, list[list[str]]]:
    """The delimiter that splits the sample's records most consistently."""
    parsed = {d: _parse_records(sample, d, truncated=truncated) for d in _DELIMITERS}
    if prefer_tab and parsed["\t"] and len(parsed["\t"][0]) > 1:
        return "\t", parsed["\t"]
    scored = []
    for order, delimiter in enumerate(_DELIMITERS):
        records = parsed[delimiter]
        if not records or len(records[0]) < 2:
            continue
        width = len(records[0])
        consistency = sum(len(r) == width for r in records) / len(records)
        scored.append((consistency, delimiter, order))
    if not scored:  # one column
        delimiter = "\t" if prefer_tab else ","
        return delimiter, parsed[delimiter]
    best = max(score[0] for score in scored)
    tied = [(order, delimiter) for consistency, delimiter, order in scored
            if consistency == best]
    if len(tied) > 1:
        sniffed = _csv_sniffer(sample)
        if sniffed in {d for _, d in tied}:
            return sniffed, parsed[sniffed]
    delimiter = min(tied)[1]
    return delimiter, parsed[delimiter]


def _csv_sniffer(sample: str) -> str | None:
    """csv.Sniffer's guess on the first few kB, used only to break ties."""
    head = sample[:4096]
    if "\n" in head:
        head = head[: head.rindex("\n") + 1]
    try:
        return csv.Sniffer().sniff(head, delimiters="".join(_DELIMITERS)).delimiter
    except csv.Error:
        return None


_COMMA_DECIMAL_RE = re.compile(r"\s*[-+]?\d+,\d+(?:[eE][-+]?\d+)?\s*")
_DOT_DECIMAL_RE = re.compile(r"\s*[-+]?(?:\d+\.\d*|\.\d+)(?:[eE][-+]?\d+)?\s*")


def _uses_decimal_comma(records: Sequence[Sequence[str]]) -> bool:
    """Whether numbers in the sample use a decimal comma (``2,5``) more
    often than a decimal point."""
    n_comma = n_dot = 0
    for record in records:
        for field in record:
            if _COMMA_DECIMAL_RE.fullmatch(field):
                n_comma += 1
            elif _DOT_DECIMAL_RE.fullmatch(field):
                n_dot += 1
    return n_comma > 0 and n_comma >= n_dot


def _finish_text_columns(df: pd.DataFrame, *, decimal_comma: bool) -> pd.DataFrame:
    """Make numbers of the columns that pandas left as text or objects only
    because of dash placeholders, decimal commas or integers too large for
    64 bits."""
    for position in range(df.shape[1]):
        column = df.iloc[:, position]
        if column.dtype == object or isinstance(column.dtype, pd.StringDtype):
            converted = _as_numbers(column, decimal_comma=decimal_comma)
            if converted is not None:
                df.isetitem(position, converted)
    return df


def _as_numbers(column: pd.Series, *, decimal_comma: bool) -> pd.Series | None:
    """The column as numbers, or None if a value is neither a number nor a
    placeholder, or no value is a number.

    Bounded work: one parse per distinct value, stopping at the first value
    that is not a number.
    """
    present = column.dropna()
    if present.empty:
        return None
    mapping: dict[object, object] = {}
    all_int = True
    n_numbers = 0
    for value in pd.unique(present):
        number = _parse_number(value, decimal_comma=decimal_comma)
        if number is None:
            return None
        if number is not _PLACEHOLDER:
            n_numbers += 1
            all_int = all_int and isinstance(number, int)
        mapping[value] = number
    if n_numbers == 0:
        return None
    if all_int and len(mapping) == n_numbers and len(present) == len(column):
        ints = [mapping[v] for v in column]
        if all(-(2**63) <= v < 2**63 for v in ints):
            return pd.Series(ints, index=column.index, name=column.name, dtype="int64")
    floats = {k: (np.nan if v is _PLACEHOLDER else _to_float(v)) for k, v in mapping.items()}
    return pd.Series(
        [np.nan if pd.isna(v) else floats[v] for v in column],
        index=column.index, name=column.name, dtype="float64",
    )


_PLACEHOLDER = object()


def _to_float(number: int | float) -> float:
    try:
        return float(number)
    except OverflowError:  # an integer beyond the float range
        return float("inf") if number > 0 else float("-inf")


def _parse_number(value: object, *, decimal_comma: bool) -> object:
    """An int or float for a number, ``_PLACEHOLDER`` for a dash placeholder,
    None for anything else."""
    if isinstance(value, (bool, np.bool_)):
        return None
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value)
    if not isinstance(value, str):
        return None
    text = value.strip()
    if text in _NUMERIC_PLACEHOLDERS:
        return _PLACEHOLDER
    if not text or "_" in text or not text.isascii():
        return None
    if _INT_RE.fullmatch(text) and len(text) <= 4000:
        return int(text)
    if decimal_comma and text.count(",") == 1 and "." not in text:
        text = text.replace(",", ".")
    try:
        return float(text)
    except ValueError:
        return None


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


# --------------------------------------------------------------------------
# Binary formats
# --------------------------------------------------------------------------


def _read_parquet(data: bytes, label: str) -> pd.DataFrame:
    # Checked first: inside the try a missing engine would pass for a bad file.
    require("pyarrow", extra="readers", needed_for="reading Parquet files")
    try:
        df = pd.read_parquet(io.BytesIO(data))
    except Exception as exc:  # noqa: BLE001 - pyarrow raises many types
        raise CraftInputError(
            f"{label} is not a readable Parquet file: {type(exc).__name__}: {exc}"
        ) from None
    if not isinstance(df.index, pd.RangeIndex):
        df = df.reset_index()
    if df.shape[1] == 0:
        raise CraftInputError(f"cannot read {label}: the Parquet file has no columns")
    if df.shape[0] == 0:
        raise CraftInputError(
            f"cannot read {label}: it has column names but no data rows"
        )
    df = df.reset_index(drop=True)
    df.columns = _clean_names(list(df.columns))
    return df


def _read_xlsx(data: bytes, label: str) -> pd.DataFrame:
    # Checked first: inside _read_excel's try a missing engine would pass for a bad file.
    require("openpyxl", extra="readers", needed_for="reading Excel (.xlsx) files")
    return _read_excel(data, label, engine="openpyxl")


def _read_xls(data: bytes, label: str) -> pd.DataFrame:
    try:
        import xlrd  # noqa: F401
    except ImportError:
        raise CraftInputError(
            f"cannot read {label}: Excel 97-2003 (.xls) files need the optional "
            f"package xlrd; save the sheet as .xlsx or CSV instead"
        ) from None
    return _read_excel(data, label, engine="xlrd")


def _read_excel(data: bytes, label: str, *, engine: str) -> pd.DataFrame:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            raw = pd.read_excel(io.BytesIO(data), sheet_name=0, header=None,
                                engine=engine, keep_default_na=False, na_values=[])
    except Exception as exc:  # noqa: BLE001 - openpyxl/zipfile raise many types
        raise CraftInputError(
            f"{label} is not a readable Excel file: {type(exc).__name__}: {exc}"
        ) from None
    # Blank rows, and columns blank down to the header, are formatting only.
    raw = raw.dropna(how="all").dropna(axis=1, how="all")
    if raw.shape[0] == 0 or raw.shape[1] == 0:
        raise CraftInputError(f"cannot read {label}: the first sheet is empty")
    header = list(raw.iloc[0])
    df = raw.iloc[1:].reset_index(drop=True)
    if df.shape[0] == 0:
        raise CraftInputError(f"cannot read {label}: it has a header but no data rows")
    df.columns = _clean_names(header)
    na_values = set(_NA_VALUES)
    for position in range(df.shape[1]):
        column = df.iloc[:, position]
        if column.dtype == object or isinstance(column.dtype, pd.StringDtype):
            column = column.astype(object).map(
                lambda v: np.nan if isinstance(v, str) and v in na_values else v
            )
            column = column.infer_objects()
        if column.dtype == object or isinstance(column.dtype, pd.StringDtype):
            inferred = pd.api.types.infer_dtype(column, skipna=True)
            numbers = None if inferred == "boolean" else _as_numbers(
                column, decimal_comma=False)
            if numbers is not None:
                column = numbers
            elif inferred != "boolean":
                # Text, or numbers mixed with text: all text, as in a CSV file.
                column = column.map(lambda v: v if pd.isna(v) else str(v)).astype("str")
        df.isetitem(position, column)
    return df
