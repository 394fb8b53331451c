"""The public entry of :mod:`craft.io`: :func:`read_table`, :func:`read_info`, :func:`table_fingerprint`.

Turns any accepted source (a path, bytes, a file object) into bytes, and
hands them to the reader of their format: chosen by the content's signature
(Parquet, ZIP, OLE2) first, then by the file's extension, else text.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from .._optional import MissingExtraError
from ..exceptions import CraftInputError
from ._excel import _read_xls, _read_xlsx
from ._info import _Options, DEFAULT_MISSING_TOKENS, ReadInfo
from ._parquet import _read_parquet
from ._text import _read_text


_TEXT_EXTENSIONS = frozenset({".csv", ".tsv", ".tab", ".txt"})
_PARQUET_EXTENSIONS = frozenset({".parquet", ".pq"})
_XLSX_EXTENSIONS = frozenset({".xlsx", ".xlsm"})
_XLS_EXTENSIONS = frozenset({".xls"})
_PARQUET_MAGIC = b"PAR1"
_ZIP_MAGIC = b"PK\x03\x04"
_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"


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
