"""How large a table is taken: limits checked before the expensive work.

Reading, profiling and fitting a table cost time and memory per cell and per
column (every column is a pandas object, a schema decision, a feature of the
engine). A table far wider or larger than the machine can hold would run for
minutes and then fail; these limits refuse it at once, with a message that
states them. There are two kinds, so that a computation on a table already in
memory never depends on the machine's state:

* **Fixed**, for the library's computations on a table the caller already
  holds (:meth:`craft.CRAFT.fit`, :func:`craft.infer_schema`):
  :data:`MAX_COLUMNS` columns, checked by :func:`check_columns`. The same
  call on the same table passes or fails on every machine, whatever its free
  memory at the moment.
* **This machine's**, for what reads a file or an upload into memory (the
  readers of :mod:`craft.io`, the command line, the app): :func:`table_limits`
  follows the memory available when asked (a bigger machine reads bigger
  tables), within fixed floors and ceilings, and is checked by
  :func:`check_table_shape`. Environment variables override them
  (``CRAFT_MAX_COLUMNS``, ``CRAFT_MAX_CELLS``, ``CRAFT_MAX_UNZIPPED_MB``,
  ``CRAFT_MAX_EXCEL_CELLS``) for a server that wants other bounds; no reader
  takes more than :data:`MAX_COLUMNS` columns, which no fit would take.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from .exceptions import CraftInputError

__all__ = ["MAX_COLUMNS", "TableLimits", "check_columns", "check_table_shape", "table_limits"]

#: Most columns :meth:`craft.CRAFT.fit` and :func:`craft.infer_schema` take, on any machine: each column is a
#: schema decision and a feature of every pass (100,000 columns took 30 s to profile and 87 s to fit on a
#: 2-core machine). Also the most that this machine's limits (:func:`table_limits`) ever allow.
MAX_COLUMNS = 100_000

# Budget per cell: a Python object cell of a text table (~60 B), its share of
# the encoded arrays and of the engine's per-cluster tables, with room to spare.
_BYTES_PER_CELL = 200
# Budget per column: pandas' per-column blocks and the schema's and encoder's
# per-column work, which dominate a table of a few rows and very many columns
# (100,000 columns took 30 s to profile and 87 s to fit on a 2-core machine).
_BYTES_PER_COLUMN = 512 * 1024
_MIN_COLUMNS = 1_000
_MIN_CELLS, _MAX_CELLS = 1_000_000, 2_000_000_000
# An .xlsx sheet's XML is about 20-40 bytes a cell and expands ~10x into
# Python objects while it is parsed: an eighth of the free memory, at most
# 512 MiB.
_MIN_UNZIPPED, _MAX_UNZIPPED = 64 * 2**20, 512 * 2**20
# openpyxl parses a cell in 10-25 µs (measured: 4,000,000 cells in 100 s on a
# loaded 2-core machine): Excel is bounded by time, not memory, so that one
# session's upload cannot hold the server for minutes. Larger tables: CSV or
# Parquet, read by native code.
_EXCEL_CELLS = 1_000_000


@dataclass(frozen=True)
class TableLimits:
    """The largest table this machine reads (see :func:`table_limits`).

    Attributes
    ----------
    max_columns : int
        Columns of one table.
    max_cells : int
        Rows × columns of one table.
    max_unzipped_bytes : int
        Uncompressed size of an Excel workbook (all its parts).
    max_excel_cells : int
        Non-empty cells of the Excel sheet read.
    """

    max_columns: int
    max_cells: int
    max_unzipped_bytes: int
    max_excel_cells: int = _EXCEL_CELLS

    def describe(self) -> str:
        """The limits in words, for messages and the app.

        Examples
        --------
        >>> TableLimits(2000, 10**7, 2**28, 10**6).describe()
        'at most 2,000 columns, 10,000,000 cells (rows × columns); Excel: 1,000,000 cells, 256 MB unzipped'
        """
        return (
            f"at most {self.max_columns:,} columns, {self.max_cells:,} cells (rows × columns); Excel: "
            f"{self.max_excel_cells:,} cells, {self.max_unzipped_bytes / 2**20:,.0f} MB unzipped"
        )


def available_memory() -> int:
    try:
        import psutil

        return int(psutil.virtual_memory().available)
    except Exception:  # noqa: BLE001 - psutil missing or unreadable /proc: assume a small machine
        return 2 * 2**30


def env_int(name: str, default: int, scale: int = 1) -> int:
    text = os.environ.get(name)
    if not text:
        return default
    try:
        value = int(float(text) * scale)
    except ValueError:
        raise CraftInputError(f"environment variable {name}={text!r} is not a number") from None
    if value < 1:
        raise CraftInputError(f"environment variable {name}={text!r} must be positive")
    return value


def table_limits() -> TableLimits:
    """The limits for reading a table on this machine now (free memory, or the environment's overrides).

    For the readers, the command line and the app; the library's fit takes
    the fixed :data:`MAX_COLUMNS` instead (:func:`check_columns`). The
    columns never exceed :data:`MAX_COLUMNS`, overridden or not.

    Returns
    -------
    TableLimits

    Examples
    --------
    >>> limits = table_limits()
    >>> 1_000 <= limits.max_columns and limits.max_columns * 10 <= limits.max_cells
    True
    """
    available = available_memory()
    columns = min(MAX_COLUMNS, max(_MIN_COLUMNS, available // _BYTES_PER_COLUMN))
    cells = min(_MAX_CELLS, max(_MIN_CELLS, available // _BYTES_PER_CELL))
    unzipped = min(_MAX_UNZIPPED, max(_MIN_UNZIPPED, available // 8))
    return TableLimits(
        max_columns=min(MAX_COLUMNS, env_int("CRAFT_MAX_COLUMNS", int(columns))),
        max_cells=env_int("CRAFT_MAX_CELLS", int(cells)),
        max_unzipped_bytes=env_int("CRAFT_MAX_UNZIPPED_MB", int(unzipped), scale=2**20),
        max_excel_cells=env_int("CRAFT_MAX_EXCEL_CELLS", _EXCEL_CELLS),
    )


def check_columns(n_columns: int, what: str = "the table") -> None:
    """Refuse a table of more than :data:`MAX_COLUMNS` columns, on any machine.

    Parameters
    ----------
    n_columns : int
    what : str
        How the message names the table (``"X"``).

    Raises
    ------
    CraftInputError
        Stating the columns and the limit.

    Examples
    --------
    >>> check_columns(MAX_COLUMNS)
    >>> check_columns(MAX_COLUMNS + 1, "X")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    craft.exceptions.CraftInputError: X has 100,001 columns; CRAFT takes at most 100,000 columns ...
    """
    if n_columns > MAX_COLUMNS:
        raise CraftInputError(
            f"{what} has {n_columns:,} columns; CRAFT takes at most {MAX_COLUMNS:,} columns on any machine (each "
            f"is a feature of every pass). Keep the columns you need, or transpose a table that has one column "
            f"per item."
        )


def check_table_shape(n_rows: int, n_columns: int, what: str = "the table", *, estimated: bool = False) -> None:
    """Refuse a table wider or larger than :func:`table_limits` allows (reading it on this machine).

    Parameters
    ----------
    n_rows, n_columns : int
        The table's shape (or, with ``estimated``, an upper bound of it).
    what : str
        How the message names the table (``"'data.csv'"``).
    estimated : bool
        Say "about" (the shape was estimated before reading).

    Raises
    ------
    CraftInputError
        Stating the shape and the limits.

    Examples
    --------
    >>> check_table_shape(10, 3)
    >>> import os; os.environ["CRAFT_MAX_COLUMNS"] = "5"
    >>> check_table_shape(10, 6, "'wide.csv'")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    craft.exceptions.CraftInputError: 'wide.csv' has 6 columns; this machine takes at most 5 ...
    >>> del os.environ["CRAFT_MAX_COLUMNS"]
    """
    limits = table_limits()
    about = "about " if estimated else ""
    if n_columns > limits.max_columns:
        raise CraftInputError(
            f"{what} has {about}{n_columns:,} columns; this machine takes at most {limits.max_columns:,} columns "
            f"(and {limits.max_cells:,} cells, rows × columns). Keep the columns you need, or transpose a table "
            f"that has one column per item."
        )
    if n_rows * n_columns > limits.max_cells:
        raise CraftInputError(
            f"{what} has {about}{n_rows:,} rows × {n_columns:,} columns = {n_rows * n_columns:,} cells; this "
            f"machine takes at most {limits.max_cells:,} cells (and {limits.max_columns:,} columns). Take a "
            f"sample of the rows or fewer columns."
        )
