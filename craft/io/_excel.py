"""Reading an Excel workbook (.xlsx streamed from its XML, .xls through xlrd).

An .xlsx file is bounded by what it holds before it is parsed (the
archive's uncompressed size, the shared strings), and its cells are counted
as they are streamed: a declared dimension is never trusted.
"""

from __future__ import annotations

import io
import warnings
import zipfile
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._optional import missing
from ..exceptions import CraftInputError
from ..limits import check_table_shape, table_limits
from ._columns import _as_numbers, _cell_text, _clean_names, _finish_as_text, _finish_columns
from ._info import _NUMERIC_PLACEHOLDERS, _Options, _quote_names, _short_error, ReadInfo


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
