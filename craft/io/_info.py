"""What a reading decided and the options it read with: :class:`ReadInfo`, the missing markers.

Shared by every reader of :mod:`craft.io`; also the small helpers their
messages and notes are written with.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field


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


@dataclass(frozen=True)
class _Options:
    tokens: frozenset
    tokens_in_text: bool
    sheet: str | int | None
    as_text: bool


def _add_note(notes: dict[str, str], name: str, note: str | None) -> None:
    """Append ``note`` (when there is one) to the column's notes."""
    if note:
        notes[name] = _join(notes.get(name), note)


def _join(first: str | None, second: str) -> str:
    return second if not first else f"{first}; {second}"


def _count_text(markers: dict[str, int]) -> str:
    return ", ".join(f"{marker!r} ×{count:,}" for marker, count in markers.items())


def _short_error(exc: Exception, limit: int = 160) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _quote_names(names: Sequence[str], limit: int = 10) -> str:
    text = ", ".join(repr(n) for n in names[:limit])
    return text + (f" and {len(names) - limit} more" if len(names) > limit else "")
