"""Reading user tables (CSV/TSV/text, Parquet, Excel) into DataFrames.

:func:`read_table` accepts whatever a user uploads and either returns a
DataFrame with unique, stripped string column labels and a default
``RangeIndex``, or raises :class:`~craft.exceptions.CraftInputError` with a
message that names the file and says what is wrong. No other exception type
escapes it.

What the reader decided is kept with the table, in ``df.attrs["craft_read"]``
(a :class:`ReadInfo`, see :func:`read_info`): the missing-value markers it
used and how many cells of each column they turned missing, the markers it
left as text, blank rows dropped, the sheet read, and per-column notes that
:func:`craft.infer_schema` adds to the columns' reasons.
"""

from __future__ import annotations

import collections
import csv
import dataclasses
import hashlib
import io
import json
import os
import re
import warnings
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ._optional import MissingExtraError, missing, require
from .exceptions import CraftInputError
from .limits import check_table_shape, table_limits

__all__ = ["DEFAULT_MISSING_TOKENS", "PATH_COLUMN", "ReadInfo", "read_info", "read_table", "table_fingerprint",
           "typed_part"]

#: The column of file names that a reader of several files adds for
#: :func:`typed_part` (``dd.read_csv(..., include_path_column=PATH_COLUMN)``):
#: its messages then name the file, and the column is dropped.
PATH_COLUMN = "__craft_source_file__"

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
_ENCODINGS_READ = (
    "UTF-8 (with or without BOM), UTF-16 (with or without BOM), UTF-32 with BOM, Windows-1252 and Latin-1"
)
_CONVERT_HINT = "save it as UTF-8 CSV (e.g. iconv -f <encoding> -t UTF-8 file.csv > file-utf8.csv)"

#: Cells that mean "no value" in a column whose other values are numbers:
#: pandas' default markers plus ``?`` (UCI's). In text columns they are kept
#: as text unless ``read_table(..., tokens_in_text=True)``: "None" or "NA" can
#: be an answer ("no children", "North America").
DEFAULT_MISSING_TOKENS = tuple(
    sorted(
        {
            "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan",
            "1.#IND", "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a",
            "nan", "null", "?",
        }
    )
)
# Placeholders read as missing only in a column whose other values are all
# numbers (with the markers above); elsewhere they stay text.
_NUMERIC_PLACEHOLDERS = frozenset({"-", "--", "---", ".", "\u2013", "\u2014"})
_INT_RE = re.compile(r"[+-]?\d+", re.ASCII)
_THOUSANDS_RE = re.compile(r"[+-]?\d{1,3}(?:,\d{3})+(?:\.\d*)?", re.ASCII)
# Excel's delimiter hint, a first line "sep=;" (one ASCII character but a quote).
_SEP_HINT_RE = re.compile(r"[ \t]*sep=([\t !#-~])[ \t]*\r?\n")
# Thousands grouped by dots and a decimal comma ("1.234,56"), as written where
# the comma is the decimal mark. Without the comma ("1.234") it is read as a
# decimal point: a thousand and 1.234 cannot be told apart.
_DOT_THOUSANDS_RE = re.compile(r"[+-]?\d{1,3}(?:\.\d{3})+,\d*", re.ASCII)
_DOT_GROUPS_RE = re.compile(r"[+-]?\d{1,3}(?:\.\d{3})+", re.ASCII)
_FIELDS_RE = re.compile(r"Expected (\d+) fields in line (\d+), saw (\d+)")
_UNNAMED_RE = re.compile(r"Unnamed: \d+(_level_\d+)?")


@dataclass(frozen=True)
class ReadInfo:
    """What :func:`read_table` decided while reading one table.

    Attributes
    ----------
    source : str
        How messages name the file.
    format : {"text", "parquet", "excel"}
    missing_tokens : tuple of str
        Markers read as missing in number columns (and, with
        ``tokens_in_text``, in text columns). Empty cells are always missing.
    tokens_in_text : bool
        Whether the markers were also missing in text columns.
    read_as_missing : dict of str to dict of str to int
        Per column, each marker and how many of its cells became missing.
    kept_as_text : dict of str to dict of str to int
        Per text column, markers found and kept as text, with their counts.
    column_notes : dict of str to str
        Per column, what the reader did that the schema's reason should say.
    nested : tuple of str
        Parquet list/struct/map columns, read as their JSON text.
    blank_rows : int
        All-empty rows dropped (blank lines of a text file, blank rows of a
        sheet).
    blank_records : tuple of int
        Of a text file: the positions (from 0, among its data records as
        ``pandas.read_csv`` numbers them: empty lines are not records) of
        the records dropped for holding no value (``,,``), so that a row
        of the table can be named by its record in the file.
    duplicated_names : tuple of str
        Column labels the file gives more than one column (each read under
        a ``.1``, ``.2`` suffix after the first).
    sheet : str or None
        The Excel sheet read.
    sheets : tuple of str
        All sheets of the workbook.
    encoding, delimiter : str or None
        Of a text file.
    delimiter_line : str or None
        Excel's first line naming the delimiter (``sep=;``), read as such.
    skipped_sheets : dict of str to str
        Sheets before the one read that were passed over, and why (hidden,
        a chart, empty), when no sheet was named.
    uncached_formulas : dict of str to int
        Per column of the sheet read, formula cells the file holds without
        a saved value (read as missing).
    """

    source: str
    format: str
    missing_tokens: tuple = ()
    tokens_in_text: bool = False
    read_as_missing: dict = field(default_factory=dict)
    kept_as_text: dict = field(default_factory=dict)
    column_notes: dict = field(default_factory=dict)
    nested: tuple = ()
    blank_rows: int = 0
    blank_records: tuple = ()
    duplicated_names: tuple = ()
    sheet: str | None = None
    sheets: tuple = ()
    encoding: str | None = None
    delimiter: str | None = None
    delimiter_line: str | None = None
    skipped_sheets: dict = field(default_factory=dict)
    uncached_formulas: dict = field(default_factory=dict)

    def __deepcopy__(self, memo) -> ReadInfo:
        # pandas deep-copies a frame's attrs into every frame derived from it (each column taken,
        # each slice): on a 10,000-column table those copies were most of the time spent reading
        # its columns. The record is frozen and never changed after reading: derived frames share it.
        return self

    def notes(self) -> list[str]:
        """Table-level sentences for the user: blank rows dropped, the sheet read.

        Examples
        --------
        >>> ReadInfo("'t.xlsx'", "excel", blank_rows=2, sheet="B", sheets=("A", "B")).notes()
        ["2 blank row(s) of 't.xlsx' dropped (no cell had a value).", "Read sheet 'B' of 2 ('A', 'B')."]
        """
        notes = []
        if self.delimiter_line:
            notes.append(f"The first line of {self.source}, {self.delimiter_line!r}, names the delimiter "
                         f"(Excel's hint): read as such, not as data.")
        if self.blank_rows:
            notes.append(f"{self.blank_rows:,} blank row(s) of {self.source} dropped (no cell had a value).")
        if self.sheet is not None and len(self.sheets) > 1:
            names = ", ".join(repr(s) for s in self.sheets[:10]) + (" …" if len(self.sheets) > 10 else "")
            skipped = "; ".join(f"{name!r} {why}" for name, why in self.skipped_sheets.items())
            notes.append(f"Read sheet {self.sheet!r} of {len(self.sheets)} ({names})"
                         + (f", passing over {skipped}" if skipped else "") + ".")
        if self.uncached_formulas:
            columns = _quote_names(list(self.uncached_formulas))
            notes.append(f"Sheet {self.sheet!r} of {self.source} has {sum(self.uncached_formulas.values()):,} "
                         f"formula cell(s) without a saved value, in column(s) {columns}: they are read as "
                         f"missing. Open the workbook in Excel and save it to store the values.")
        return notes


def read_info(df: pd.DataFrame) -> ReadInfo | None:
    """The :class:`ReadInfo` that :func:`read_table` attached to ``df`` (None for other frames).

    Examples
    --------
    >>> df = read_table(b"n,answer\\n1,None\\n2,yes\\nNA,None\\n", name="s.csv")
    >>> info = read_info(df)
    >>> info.read_as_missing, info.kept_as_text
    ({'n': {'NA': 1}}, {'answer': {'None': 2}})
    """
    info = df.attrs.get("craft_read") if isinstance(df, pd.DataFrame) else None
    return info if isinstance(info, ReadInfo) else None


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


@dataclass(frozen=True)
class _Options:
    tokens: frozenset
    tokens_in_text: bool
    sheet: str | int | None
    as_text: bool


def read_table(
    source,
    name: str | None = None,
    *,
    missing_tokens: Iterable[str] = DEFAULT_MISSING_TOKENS,
    tokens_in_text: bool = False,
    sheet: str | int | None = None,
    as_text: bool = False,
) -> pd.DataFrame:
    """Read a CSV/TSV/text, Parquet or Excel table.

    Text tables: the encoding (UTF-8 with or without BOM, UTF-16 with or
    without BOM, UTF-32 with BOM, else Windows-1252 or Latin-1), the
    delimiter (``,`` tab ``;`` ``|``), quoted fields (with newlines) and
    decimal commas are detected; a first line ``sep=;`` (Excel's hint)
    names the delimiter and is not read as data. A file with a NUL
    character anywhere is refused as binary.

    Missing values: an empty cell is missing. The ``missing_tokens``
    (pandas' markers ``NA``, ``n/a``, ``NULL``, ``None``, ``NaN``, ... and
    ``?``), dash placeholders (``-``, ``--``, ``.``) and any other spelling
    of NaN (``NAN``) are missing in a column whose other values are all
    numbers, which then becomes numeric.
    In a text column they stay text ("None" can mean *no children*) unless
    ``tokens_in_text=True``. :func:`read_info` tells, per column, which
    markers were read as missing and which were kept, with their counts.

    Numbers: with a delimiter other than ``,``, numbers written with a
    decimal comma (``2,5``, and ``1.234,56`` with thousands grouped by dots;
    beside such a number, ``1.000`` is a thousand) are numbers; with ``,``,
    numbers with thousands separators (``"12,345"``) are numbers; the
    column's note says so. ``inf`` and huge numbers stay numbers; text such
    as ``=SUM(A1)`` or ``<b>`` stays text. Integers that a number would
    change stay text as written, with a note: codes with leading zeros
    (``00123``) and integers beyond 2**53 (float64 rounds neighbours into
    one value); :func:`craft.infer_schema` makes them an identifier or
    categorical. Parquet keeps its stored types, except an integer column
    with missing cells and a value beyond 2**53 (pandas would store it as
    float64): it is read as text as written, with a note.

    All-empty rows (blank lines, blank rows of a sheet, lines of only
    delimiters) are dropped and counted in :func:`read_info`; blank lines
    cost no row while parsing.

    Excel (.xlsx): ``sheet``, or the first visible worksheet with a header
    and data (chart sheets, hidden and empty sheets before it are passed
    over and named in :func:`read_info`'s notes); first non-blank row as
    header, read as a stream of the cells the file really holds. Formula
    cells that the file holds without a saved value are missing, and the
    notes name their columns. Parquet:
    the stored types; list/struct/map columns become their JSON text and are
    ignored by :func:`craft.infer_schema`.

    Sizes are bounded before the expensive work by
    :func:`craft.limits.table_limits` (columns, rows × columns, the
    uncompressed size of a workbook), which follow this machine's memory;
    a text table's rows and columns are bounded by its non-blank lines and
    its widest line, so the memory a file takes follows its size whatever
    its shape.

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
    missing_tokens : iterable of str, default DEFAULT_MISSING_TOKENS
        Markers of a missing value (matched after stripping surrounding
        spaces). An empty sequence keeps every non-empty cell as it is
        written (a number column with ``NA`` in it then stays text).
    tokens_in_text : bool, default False
        Also read the markers as missing in text columns (pandas' way).
    sheet : str or int, optional
        The Excel sheet to read, by name or 0-based position; by default
        the first visible worksheet with data. The sheet read is in
        :func:`read_info`.
    as_text : bool, default False
        Every cell as the text the file holds (no number parsing, no missing
        markers; an empty cell is ``""``): the user's original cells, for
        exports. Blank rows are dropped as above, so rows match the default
        reading.

    Returns
    -------
    pandas.DataFrame
        At least one row and one column; ``RangeIndex``; unique ``str``
        column labels; ``attrs["craft_read"]`` holds a :class:`ReadInfo`.

    Raises
    ------
    CraftInputError
        For a missing, empty, binary, malformed, too large or unsupported
        file, or a file with a header but no data rows. The message names
        the file.
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
        options = _options(missing_tokens, tokens_in_text, sheet, as_text)
        data, file_name = _source_bytes(source, name)
        label = f"{file_name!r}" if file_name else "the data"
        return _read_bytes(data, file_name, label, options)
    except CraftInputError:
        raise
    except MissingExtraError:  # an installation problem, not a bad file: the message names the extra
        raise
    except MemoryError:
        raise CraftInputError(f"cannot read {label}: it is too large for memory") from None
    except Exception as exc:  # the contract: only CraftInputError (or a missing extra's ImportError) escapes
        raise CraftInputError(
            f"{label} is not a readable table: {type(exc).__name__}: {exc}"
        ) from exc


def _options(missing_tokens, tokens_in_text, sheet, as_text) -> _Options:
    if isinstance(missing_tokens, str):
        raise CraftInputError(
            f"missing_tokens must be a list of markers, not the string {missing_tokens!r}; "
            f"write missing_tokens=[{missing_tokens!r}]"
        )
    try:
        tokens = frozenset(missing_tokens)
    except TypeError:
        raise CraftInputError(
            f"missing_tokens must be an iterable of strings, got {type(missing_tokens).__name__}"
        ) from None
    bad = [t for t in tokens if not isinstance(t, str)]
    if bad:
        raise CraftInputError(f"missing_tokens must be strings, got {bad[0]!r}")
    if sheet is not None and (isinstance(sheet, bool) or not isinstance(sheet, (str, int))):
        raise CraftInputError(f"sheet must be a sheet name or a 0-based position, got {sheet!r}")
    return _Options(frozenset(t.strip() for t in tokens), bool(tokens_in_text), sheet, bool(as_text))


def _source_bytes(source, name: str | None) -> tuple[bytes, str | None]:  # noqa: C901 - one branch per kind of source and its failure
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


def _read_bytes(data: bytes, file_name: str | None, label: str, options: _Options) -> pd.DataFrame:
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
        return _read_parquet(data, label, options)
    if data.startswith(_ZIP_MAGIC):
        return _read_xlsx(data, label, options)
    if data.startswith(_OLE_MAGIC):
        return _read_xls(data, label, options)
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
    return _read_text(data, label, options, prefer_tab=extension in (".tsv", ".tab"))


# --------------------------------------------------------------------------
# Text tables
# --------------------------------------------------------------------------


def _bom_free_encoding(data: bytes) -> str | None:
    """UTF-16 or UTF-32 without a BOM, told by where the zero bytes of
    ASCII characters fall (every other byte, or three bytes of four)."""
    head = data[:4096]
    n = len(head) // 4 * 4
    if n < 8:
        return None
    quads = np.frombuffer(head[:n], dtype=np.uint8).reshape(-1, 4) == 0
    share = quads.mean(axis=0)
    if share[1] > 0.9 and share[2] > 0.9 and share[3] > 0.9 and share[0] < 0.5:
        return "utf-32-le"
    if share[0] > 0.9 and share[1] > 0.9 and share[2] > 0.9 and share[3] < 0.5:
        return "utf-32-be"
    pairs = np.frombuffer(head[: n], dtype=np.uint8).reshape(-1, 2) == 0
    even, odd = pairs.mean(axis=0)
    if odd > 0.4 and even < 0.05:
        return "utf-16-le"
    if even > 0.4 and odd < 0.05:
        return "utf-16-be"
    return None


def _decode(data: bytes, label: str) -> tuple[str, str]:
    encodings: tuple[str, ...]
    if data.startswith(b"\xef\xbb\xbf"):
        encodings = ("utf-8-sig",)
    elif data.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        encodings = ("utf-32",)
    elif data.startswith((b"\xff\xfe", b"\xfe\xff")):
        encodings = ("utf-16",)
    else:
        bom_free = _bom_free_encoding(data)
        encodings = (bom_free,) if bom_free else ("utf-8", "cp1252", "latin-1")
    for encoding in encodings:
        try:
            return data.decode(encoding), encoding
        except UnicodeDecodeError:
            continue
    raise CraftInputError(
        f"{label} is not a readable table: it is not valid {encodings[0]} text; the encodings read are "
        f"{_ENCODINGS_READ}: {_CONVERT_HINT}"
    )


def _strip_leading_blank_lines(text: str) -> str:
    """Drop blank lines before the header (pandas would take one for the header)."""
    match = re.match(r"(?:[ \t]*\r?\n)+", text)
    return text[match.end():] if match else text


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


def _delimiter(text: str, *, prefer_tab: bool) -> tuple[str, str, list[list[str]], str | None]:
    """The text without Excel's ``sep=;`` first line (which names the
    delimiter, and is not the header), the delimiter, the sample's records,
    and that first line (None without it)."""
    hint = _SEP_HINT_RE.match(text)
    if hint:
        text = _strip_leading_blank_lines(text[hint.end():])
    sample = text[:_SAMPLE_CHARS]
    truncated = len(text) > _SAMPLE_CHARS
    if truncated and "\n" in sample:
        sample = sample[: sample.rindex("\n") + 1]
    if hint:
        delimiter = hint.group(1)
        return text, delimiter, _parse_records(sample, delimiter, truncated=truncated), hint.group(0).strip()
    delimiter, records = _sniff_delimiter(sample, truncated=truncated, prefer_tab=prefer_tab)
    return text, delimiter, records, None


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


_COMMA_DECIMAL_RE = re.compile(r"\s*[-+]?(?:\d{1,3}(?:\.\d{3})+|\d+),\d+(?:[eE][-+]?\d+)?\s*")
_DOT_DECIMAL_RE = re.compile(r"\s*[-+]?(?:\d+\.\d*|\.\d+)(?:[eE][-+]?\d+)?\s*")


def _uses_decimal_comma(records: Sequence[Sequence[str]]) -> bool:
    """Whether numbers in the sample use a decimal comma (``2,5``) more
    often than a decimal point."""
    n_comma = n_dot = 0
    for record in records:
        for field_ in record:
            if _COMMA_DECIMAL_RE.fullmatch(field_):
                n_comma += 1
            elif _DOT_DECIMAL_RE.fullmatch(field_):
                n_dot += 1
    return n_comma > 0 and n_comma >= n_dot


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
_LONG_DIGITS_RE = re.compile(r"\d{16}", re.ASCII)
_LEADING_ZERO_LINE_RE = re.compile(r"\n[ \t]*[+-]?0\d", re.ASCII)


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


def _add_note(notes: dict[str, str], name: str, note: str | None) -> None:
    """Append ``note`` (when there is one) to the column's notes."""
    if note:
        notes[name] = _join(notes.get(name), note)


def _join(first: str | None, second: str) -> str:
    return second if not first else f"{first}; {second}"


def _count_text(markers: dict[str, int]) -> str:
    return ", ".join(f"{marker!r} ×{count:,}" for marker, count in markers.items())


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


# --------------------------------------------------------------------------
# Binary formats
# --------------------------------------------------------------------------


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


def _short_error(exc: Exception, limit: int = 160) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= limit else text[: limit - 1] + "…"


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


def _cell_text(value: object) -> str:
    """The text of a typed cell, for ``as_text``: a missing one (``None``,
    NaN, ``NaT``, ``pd.NA``) is an empty cell."""
    if value is None or value is pd.NA or value is pd.NaT or (isinstance(value, float) and np.isnan(value)):
        return ""
    if isinstance(value, np.generic):
        value = value.item()
    return str(value)


def _read_xlsx(data: bytes, label: str, options: _Options) -> pd.DataFrame:
    sheet = _xlsx_sheet(data, label, options.sheet)
    return _sheet_frame(sheet.rows, label, options, sheet=sheet.name, sheets=sheet.sheets,
                        skipped=sheet.skipped, uncached=sheet.uncached)


@dataclass(frozen=True)
class _SheetPart:
    name: str
    target: str
    is_chart: bool
    state: str


@dataclass(frozen=True)
class _SheetCells:
    """The non-empty cells of the sheet read, row by row (``[(row, {column: value})]``),
    with what the reader passed over on the way."""

    name: str
    rows: list
    sheets: tuple
    skipped: dict
    uncached: dict


def _xlsx_sheet(data: bytes, label: str, sheet) -> _SheetCells:  # noqa: C901 - each bound checked where the stream reaches it
    """The cells of the sheet named, or of the first visible worksheet with
    a header and data (charts, hidden and empty sheets before it passed
    over and named).

    Bounded by what the file holds: the archive's uncompressed size is
    checked before anything is parsed, a sheet's XML is streamed (its
    declared dimension, which can claim 16,384 columns, is not used), and
    the cells are counted as they come.
    """
    try:
        from openpyxl.reader.excel import ExcelReader
        from openpyxl.styles.stylesheet import apply_stylesheet
        from openpyxl.worksheet._reader import FORMULA_TAG, WorkSheetParser
    except ImportError as error:  # an installation problem, not a bad file
        raise missing("openpyxl", extra="readers", needed_for="reading Excel (.xlsx) files") from error

    limits = table_limits()
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        unzipped = sum(info.file_size for info in archive.infolist())
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise CraftInputError(f"{label} is not a readable Excel file: a damaged ZIP archive ({exc})") from None
    _check_workbook_archive(archive, label)
    if unzipped > limits.max_unzipped_bytes:
        raise CraftInputError(
            f"{label} expands to {unzipped / 2**20:,.0f} MB when unzipped ({len(data) / 2**20:,.1f} MB as "
            f"uploaded); this machine reads at most {limits.max_unzipped_bytes / 2**20:,.0f} MB of Excel data "
            f"({limits.describe()}). Save the sheet as CSV or Parquet, or keep only the rows you need."
        )
    # The shared strings are loaded whole before any cell: bound them by the
    # cells that may be read (a generous 256 bytes of text each).
    strings = sum(info.file_size for info in archive.infolist()
                  if info.filename.lower().endswith("sharedstrings.xml"))
    if strings > _SHARED_STRING_BYTES_PER_CELL * limits.max_excel_cells:
        raise CraftInputError(
            f"{label} holds {strings / 2**20:,.0f} MB of shared text (unzipped); this machine reads at most "
            f"{_SHARED_STRING_BYTES_PER_CELL * limits.max_excel_cells / 2**20:,.0f} MB of it "
            f"({_SHARED_STRING_BYTES_PER_CELL} bytes for each of the {limits.max_excel_cells:,} cells an Excel "
            f"sheet may have). Save the sheet as CSV, or shorten the long texts."
        )
    # openpyxl's load_workbook, read-only, would scan every sheet whose XML
    # lacks a dimension tag to its end (a sheet of millions of cells: a
    # minute) before a cell is read: take its steps but the worksheets.
    reader = ExcelReader(io.BytesIO(data), read_only=True, data_only=True)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            reader.read_manifest()
            reader.read_strings()
            reader.read_workbook()
            apply_stylesheet(reader.archive, reader.wb)
            parts = [_SheetPart(sheet.name, rel.target, "chartsheet" in rel.Type, sheet.state or "visible")
                     for sheet, rel in reader.parser.find_sheets() if rel.target in reader.valid_files]
    except Exception as exc:  # noqa: BLE001 - openpyxl/zipfile raise many types
        reader.archive.close()
        raise CraftInputError(
            f"{label} is not a readable Excel file: {type(exc).__name__}: {_short_error(exc)}"
        ) from None
    workbook = reader.wb

    class Parser(WorkSheetParser):
        """openpyxl's parser, counting formula cells that the file holds without a saved value."""

        uncached: dict[int, int]

        def parse_cell(self, element):
            cell = super().parse_cell(element)
            if cell["value"] is None and element.find(FORMULA_TAG) is not None:
                self.uncached[cell["column"]] = self.uncached.get(cell["column"], 0) + 1
            return cell

    def cells(part: _SheetPart) -> tuple[list[tuple[int, dict[int, object]]], dict[int, int]]:
        with reader.archive.open(part.target) as source:
            parser = Parser(source, reader.shared_strings, data_only=True, epoch=workbook.epoch,
                            date_formats=workbook._date_formats, timedelta_formats=workbook._timedelta_formats)
            parser.uncached = {}
            return _stream_cells(parser, part.name, label, limits, len(reader.shared_strings)), parser.uncached

    try:
        sheets = tuple(part.name for part in parts)
        if not sheets:
            raise CraftInputError(f"cannot read {label}: the workbook has no sheets")
        if sheet is not None:
            part = parts[sheets.index(_named_sheet(sheet, sheets, label))]
            if part.is_chart:
                raise CraftInputError(
                    f"cannot read {label}: sheet {part.name!r} is a chart, not a table; its sheets are "
                    f"{_quote_names(sheets)}: name another")
            rows, uncached = cells(part)
            return _SheetCells(part.name, rows, sheets, {}, uncached)
        skipped: dict[str, str] = {}
        for part in parts:
            if part.is_chart:
                skipped[part.name] = "(a chart)"
                continue
            if part.state != "visible":
                skipped[part.name] = f"({part.state})"
                continue
            rows, uncached = cells(part)
            if len(rows) >= 2 or len(parts) == 1:  # one sheet: its own message says what it lacks
                return _SheetCells(part.name, rows, sheets, skipped, uncached)
            skipped[part.name] = "(empty)" if not rows else "(a header, no data rows)"
        passed = ", ".join(f"{name!r} {why}" for name, why in skipped.items())
        raise CraftInputError(
            f"cannot read {label}: no visible worksheet holds a table (a header row and data rows); its sheets: "
            f"{passed}. Name the sheet to read (read_table(..., sheet=...), --sheet on the command line)"
        )
    finally:
        reader.archive.close()


def _named_sheet(sheet: str | int, sheets: tuple, label: str) -> str:
    """The name of the sheet asked for by name or 0-based position."""
    if isinstance(sheet, int):
        if not -len(sheets) <= sheet < len(sheets):
            raise CraftInputError(
                f"{label} has {len(sheets)} sheet(s) ({_quote_names(sheets)}); there is no sheet at "
                f"position {sheet} (0-based)"
            )
        return sheets[sheet]
    if sheet not in sheets:
        raise CraftInputError(f"{label} has no sheet named {sheet!r}; its sheets are {_quote_names(sheets)}")
    return sheet


def _stream_cells(parser, name: str, label: str, limits, n_strings: int) -> list[tuple[int, dict[int, object]]]:
    """The non-empty cells of one sheet's XML stream, refused as soon as they pass a cap."""
    rows: list[tuple[int, dict[int, object]]] = []
    n_cells = 0
    try:
        for row_number, cells in parser.parse():
            values = {}
            for cell in cells:
                value = cell["value"]
                if value is None or (isinstance(value, str) and not value.strip()):
                    continue
                if isinstance(value, str) and len(value) > _EXCEL_MAX_CELL_CHARS:
                    raise CraftInputError(
                        f"{label} is not a readable Excel file: the cell at row {row_number}, column "
                        f"{cell['column']} of sheet {name!r} holds {len(value):,} characters, and Excel "
                        f"cells hold at most {_EXCEL_MAX_CELL_CHARS:,}: the file was not written by a "
                        f"spreadsheet, or it is damaged"
                    )
                values[cell["column"]] = value
            if not values:
                continue
            rows.append((row_number, values))
            n_cells += len(values)
            # The real cells so far: refuse as soon as they pass a cap.
            if n_cells > limits.max_excel_cells:
                raise CraftInputError(
                    f"{label} (sheet {name!r}) has more than {limits.max_excel_cells:,} non-empty cells "
                    f"({len(rows):,} rows read so far); this machine reads at most "
                    f"{limits.max_excel_cells:,} cells of an Excel sheet ({limits.describe()}). Save the "
                    f"sheet as CSV or Parquet, which are read much faster."
                )
            if len(values) > limits.max_columns:
                check_table_shape(len(rows), len(values), f"{label} (sheet {name!r})", estimated=True)
    except IndexError:
        raise CraftInputError(
            f"{label} is not a readable Excel file: a cell of sheet {name!r} refers to a shared string "
            f"that the workbook's string table does not hold ({n_strings:,} "
            f"strings read); the file is damaged, or a string is too long to read. Save the sheet as "
            f"CSV instead"
        ) from None
    return rows


def _check_workbook_archive(archive: zipfile.ZipFile, label: str) -> None:
    """Refuse a ZIP archive that is not an Excel workbook (a zipped CSV, a
    Word document), saying what it holds."""
    names = archive.namelist()
    if "[Content_Types].xml" in names and any(n.lower().endswith("workbook.xml") for n in names):
        return
    inside = _quote_names([n for n in names if not n.endswith("/")], limit=5) or "nothing"
    raise CraftInputError(
        f"{label} is a ZIP archive, not a table or an Excel workbook (it holds {inside}): unzip it and read "
        f"the table inside (CSV, Parquet or .xlsx)"
    )


# Excel's own limit on the characters of a cell.
_EXCEL_MAX_CELL_CHARS = 32_767
_SHARED_STRING_BYTES_PER_CELL = 256


def _quote_names(names: Sequence[str], limit: int = 10) -> str:
    text = ", ".join(repr(n) for n in names[:limit])
    return text + (f" and {len(names) - limit} more" if len(names) > limit else "")


def _sheet_frame(rows: list[tuple[int, dict[int, object]]], label: str, options: _Options, *,
                 sheet: str, sheets: tuple, skipped: dict | None = None,
                 uncached: dict | None = None) -> pd.DataFrame:
    """The table of a sheet's non-empty rows: first one the header; blank
    rows between them dropped and counted; columns blank down to the header
    left out. ``skipped``: sheets passed over before it, and why;
    ``uncached``: per column number, formula cells without a saved value."""
    where = f"sheet {sheet!r} of {label}" if len(sheets) > 1 else label
    others = [s for s in sheets if s != sheet]
    another = f"; its other sheets: {_quote_names(others)}" if others else ""
    if not rows:
        raise CraftInputError(f"cannot read {label}: sheet {sheet!r} is empty{another}")
    used = sorted({column for _, values in rows for column in values})
    header_row, header = rows[0]
    body = rows[1:]
    if not body:
        raise CraftInputError(f"cannot read {label}: it has a header but no data rows (sheet {sheet!r}){another}")
    check_table_shape(len(body), len(used), where)
    blank_rows = body[-1][0] - header_row - len(body)
    position = {column: i for i, column in enumerate(used)}
    cells = np.full((len(body), len(used)), None, dtype=object)
    for i, (_, values) in enumerate(body):
        for column, value in values.items():
            cells[i, position[column]] = value
    names = _clean_names([header.get(column) for column in used])
    df = pd.DataFrame(cells, columns=range(len(used)))
    df.columns = names
    formulas = {names[position[column]]: count for column, count in (uncached or {}).items() if column in position}
    info = ReadInfo(label, "excel", blank_rows=blank_rows, sheet=sheet, sheets=sheets,
                    skipped_sheets=dict(skipped or {}), uncached_formulas=formulas)
    if options.as_text:
        return _finish_as_text(df.map(_cell_text), info)
    notes: dict[str, str] = {
        name: (f"{count:,} formula cell(s) without a saved value, read as missing (open the workbook in Excel "
               f"and save it to store the values)") for name, count in formulas.items()}
    for position_, name in enumerate(names):
        column = df.iloc[:, position_].infer_objects()
        inferred = pd.api.types.infer_dtype(column, skipna=True)
        if column.dtype == object and inferred not in ("boolean", "string", "empty"):
            kinds = {type(v).__name__ for v in column.dropna()}
            if "str" in kinds and len(kinds) > 1 and _as_numbers(
                    column, decimal_comma=False, placeholders=options.tokens | _NUMERIC_PLACEHOLDERS) is None:
                # Numbers and text in one column, as a CSV file would hold them.
                notes[name] = ("numbers and text mixed in the sheet: all read as text (the number 1 and "
                               "the text '1' are one level)")
                column = column.map(_cell_text).where(column.notna())
        df.isetitem(position_, column)
    return _finish_columns(df, info, options, decimal_comma=False, notes=notes)


def _read_xls(data: bytes, label: str, options: _Options) -> pd.DataFrame:
    try:
        import xlrd  # noqa: F401
    except ImportError:
        raise CraftInputError(
            f"cannot read {label}: Excel 97-2003 (.xls) files need the optional "
            f"package xlrd; save the sheet as .xlsx or CSV instead"
        ) from None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            book = pd.ExcelFile(io.BytesIO(data), engine="xlrd")
            sheets = tuple(str(s) for s in book.sheet_names)
            sheet = options.sheet if options.sheet is not None else 0
            if isinstance(sheet, str) and sheet not in sheets:
                raise CraftInputError(f"{label} has no sheet named {sheet!r}; its sheets are {_quote_names(sheets)}")
            raw = book.parse(sheet_name=sheet, header=None, keep_default_na=False, na_values=[])
    except CraftInputError:
        raise
    except Exception as exc:  # noqa: BLE001 - xlrd raises many types
        raise CraftInputError(
            f"{label} is not a readable Excel file: {type(exc).__name__}: {_short_error(exc)}"
        ) from None
    check_table_shape(raw.shape[0], raw.shape[1], label)
    rows = []
    for number, record in enumerate(raw.itertuples(index=False), start=1):
        values = {c: v for c, v in enumerate(record, start=1)
                  if not (v is None or (isinstance(v, float) and np.isnan(v)) or (isinstance(v, str) and not v.strip()))}
        if values:
            rows.append((number, values))
    name = sheet if isinstance(sheet, str) else sheets[sheet]
    return _sheet_frame(rows, label, options, sheet=name, sheets=sheets)
