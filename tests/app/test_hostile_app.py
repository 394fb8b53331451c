"""The files real users send, through the app's upload path (``AppTest``).

Every file of ``tests/corpus`` (and the large cases, generated here) is
uploaded with the Data page's file uploader. For each, the app either shows
the parsed table (and a fit, or a specific message why there is none) or a
readable "Not loaded: ..." message and keeps the data it had; never an
exception element, never a hang. Messages name the file and the fault; user
strings are shown escaped, and nothing the user sent reaches an element that
renders HTML. The CSV downloads neutralise spreadsheet formulas, and the
upload limit of ``.streamlit/config.toml`` is stated in the app.
"""

from __future__ import annotations

import io
import json
import math
import os
import re
import tomllib
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from craft import CRAFT, CraftInputError, infer_schema
from craft.io import read_table
from explorer.cache import FIGURES, STORE
from app_helpers import chart_elements, chart_spec, settle

from benchmarks.bench_browser import wide_table

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
CORPUS = ROOT / "tests" / "corpus"
UPLOAD = "(uploaded file)"

pytestmark = pytest.mark.timeout(180)

# ---------------------------------------------------------------------------
# Expectations per corpus file

#: Refused files: a regex the "Not loaded" message must match.
REFUSED = {
    "empty.csv": r"Not loaded: Cannot read 'empty\.csv': the file is empty\.",
    "whitespace_only.csv": r"Not loaded: Cannot read 'whitespace_only\.csv': the file is empty",
    "header_only.csv": r"Not loaded: Cannot read 'header_only\.csv': it has a header but no data rows",
    "binary_garbage.csv": r"Not loaded: 'binary_garbage\.csv' is not a readable table: it looks like binary data",
    "image_named.csv": r"Not loaded: 'image_named\.csv' is not a readable table: it looks like binary data",
    "ragged_long_row.csv": r"Not loaded: Cannot read 'ragged_long_row\.csv': line 4 has 3 fields but the header has 2",
    "unterminated_quote.csv": r"Not loaded: 'unterminated_quote\.csv' is not a readable table: EOF",
    "one_row.csv": r"Not loaded: 'one_row\.csv' has only 1 data row; clustering needs at least 2 rows",
}

#: Read files: (rows, columns) of the preview, and None when the default fit
#: works, else a regex of the message that says why there is no fit.
PARSED = {
    "all_missing_column.csv": ((3, 3), None),
    "constant_column.csv": ((3, 3), None),
    "cp1252.csv": ((2, 2), r"k = 3 clusters cannot be found in 2 rows: choose k ≤ 2"),
    "crlf.csv": ((2, 2), r"k = 3 clusters cannot be found in 2 rows"),
    "duplicated_names.csv": ((2, 6), r"k = 3 clusters cannot be found in 2 rows"),
    "extra_fields_everywhere.csv": ((2, 3), r"k = 3 clusters cannot be found in 2 rows"),
    "formula_prefix.csv": ((3, 3), None),
    "html_tags.csv": ((2, 2), r"k = 3 clusters cannot be found in 2 rows"),
    "inf_huge.csv": ((3, 3), r"Column 'x' has 3 infinite value\(s\); replace them"),
    "latin1.csv": ((2, 3), r"k = 3 clusters cannot be found in 2 rows"),
    "pipe_delimited.txt": ((2, 3), r"k = 3 clusters cannot be found in 2 rows"),
    "quoted_newlines.csv": ((3, 3), None),
    "semicolon_decimal_comma.csv": ((3, 4), None),
    "stray_text.csv": ((5, 4), None),
    "tab_delimited.tsv": ((3, 3), None),
    "trailing_delimiter.csv": ((2, 3), r"k = 3 clusters cannot be found in 2 rows"),
    "two_rows.csv": ((2, 2), r"k = 3 clusters cannot be found in 2 rows"),
    "utf8_bom.csv": ((2, 2), r"k = 3 clusters cannot be found in 2 rows"),
}

#: Pages other than Data, visited after hostile uploads.
PAGES = ["pages/clusters.py", "pages/cards.py", "pages/evaluate.py", "pages/teach.py", "pages/compare.py",
         "pages/whatif.py", "pages/score.py", "pages/export.py"]


def test_every_corpus_file_has_an_expectation():
    files = {p.name for p in CORPUS.iterdir() if p.name != "README.md"}
    assert files == set(REFUSED) | set(PARSED)


@pytest.mark.parametrize("file_name", sorted(set(REFUSED) | set(PARSED)))
def test_corpus_through_the_library(file_name):
    """read_table, infer_schema and a fit: a table and labels for every row,
    or a CraftInputError with a message; never another exception."""
    try:
        table = read_table(CORPUS / file_name)
    except CraftInputError as error:
        assert file_name in REFUSED and file_name in str(error)
        return
    assert file_name in PARSED or file_name == "one_row.csv"  # one row is a table, too small to cluster
    schema = infer_schema(table)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            model = CRAFT(k=min(2, len(table)), categorical=schema, n_init=2, random_state=0).fit(table)
        except CraftInputError as error:
            assert str(error)
            return
    assert model.labels_.shape == (len(table),)
    assert math.isfinite(model.objective_)


# ---------------------------------------------------------------------------
# Helpers


@pytest.fixture(autouse=True)
def _fresh_caches():
    """AppTest instances share the process's caches: start every test empty."""
    for clear in (st.cache_data.clear, st.cache_resource.clear, STORE.clear, FIGURES.clear):
        clear()
    yield
    for clear in (st.cache_data.clear, st.cache_resource.clear, STORE.clear, FIGURES.clear):
        clear()


def unescape(text: str) -> str:
    """Text of an element as the user reads it (Markdown backslash escapes removed)."""
    return re.sub(r"\\(.)", r"\1", text)


def messages(at: AppTest, kind: str) -> list[str]:
    return [unescape(str(el.value)) for el in getattr(settle(at), kind)]


def no_exception(at: AppTest) -> None:
    assert not at.exception, [el.value for el in at.exception]


def start() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=90).run()
    no_exception(at)
    return settle(at)


def upload(at: AppTest, name: str, data: bytes, mime: str = "text/csv") -> AppTest:
    at.file_uploader(key="uploader").set_value((name, data, mime)).run()
    no_exception(at)
    return settle(at)


def visit_pages(at: AppTest) -> None:
    uploaded = at.session_state["dataset"] == UPLOAD
    # AppTest's first page switch after an upload runs with the example the session opened with (a browser
    # does not: tests/browser/test_background_fit.py continues the upload's fit on Tune & see). Switching to
    # the Data page first, as test_app's page loops do, has every page below draw the upload.
    at.switch_page("pages/data.py").run()
    no_exception(at)
    for page in PAGES:
        at.switch_page(page).run()
        no_exception(at)
        assert at.title and at.title[0].value != "Data", page  # the page did switch
        assert_no_html_with(at, [])
        if uploaded:
            assert at.session_state["ctx"].data.kind == "upload", page
    at.switch_page("pages/data.py").run()
    no_exception(at)


def _walk(node):
    yield node
    children = getattr(node, "children", None)
    if isinstance(children, dict):
        for child in children.values():
            yield from _walk(child)


def html_elements(at: AppTest) -> list[str]:
    """Bodies of every element that renders raw HTML (markdown with HTML allowed, st.html), but the app's own
    style blocks (``explorer.ui.style``: CSS alone, no markup, so no user string can become an element)."""
    found = []
    for node in _walk(at._tree):
        proto = getattr(node, "proto", None)
        if proto is None:
            continue
        if getattr(node, "type", "") in ("markdown", "caption", "latex", "divider", "text", "title", "header",
                                         "subheader", "code") and getattr(proto, "allow_html", False):
            found.append(proto.body)
        body = getattr(proto, "body", "")
        if getattr(node, "type", "") == "html" and not re.fullmatch(r"<style>[^<]*</style>", body):
            found.append(body)
    return found


def assert_no_html_with(at: AppTest, user_strings: list[str]) -> None:
    """No element that renders raw HTML contains a user string; with none
    given, no element renders raw HTML at all."""
    if not user_strings:
        assert html_elements(at) == []
    for body in html_elements(at):
        for text in user_strings:
            assert text not in body, f"user string {text!r} rendered as HTML: {body[:200]!r}"


# ---------------------------------------------------------------------------
# The corpus through the upload path


@pytest.mark.parametrize("file_name", sorted(REFUSED))
def test_refused_file_shows_a_readable_message_and_keeps_the_app_usable(file_name):
    at = start()
    before = at.session_state["dataset"]
    upload(at, file_name, (CORPUS / file_name).read_bytes())
    errors = messages(at, "error")
    assert any(re.search(REFUSED[file_name], e) for e in errors), errors
    # No traceback text leaks into the message.
    assert not any("Traceback" in e or 'File "' in e for e in errors)
    # The data the app had stays loaded and fitted.
    assert at.session_state["dataset"] == before != UPLOAD
    assert any(s.startswith("Clustered into K = ") for s in messages(at, "success")), messages(at, "success")
    assert any("Still showing" in n for n in messages(at, "info"))
    # Usable: a good file afterwards is read, and the message is gone.
    upload(at, "two_rows.csv", (CORPUS / "two_rows.csv").read_bytes())
    assert at.session_state["dataset"] == UPLOAD
    assert not any(e.startswith("Not loaded") for e in messages(at, "error"))


def _preview(at: AppTest) -> pd.DataFrame:
    return at.dataframe[0].value


@pytest.mark.parametrize("file_name", sorted(PARSED))
def test_parsed_file_is_previewed_and_fitted_or_explained(file_name):
    (shape, fit_problem) = PARSED[file_name]
    data = (CORPUS / file_name).read_bytes()
    expected = read_table(data, name=file_name)
    at = upload(start(), file_name, data)
    assert at.session_state["dataset"] == UPLOAD
    assert not any(e.startswith("Not loaded") for e in messages(at, "error"))
    assert any(f"{shape[0]:,} rows × {shape[1]} columns" in c for c in messages(at, "caption"))
    shown = _preview(at)
    assert shown.shape == shape == expected.shape
    assert [str(c) for c in shown.columns] == list(expected.columns)
    assert shown.astype(str).to_numpy().tolist() == expected.astype(str).to_numpy().tolist()
    if fit_problem is None:
        assert any(s.startswith("Clustered into K = ") for s in messages(at, "success")), messages(at, "error")
    else:
        errors = messages(at, "error")
        assert any(re.search(fit_problem, e) for e in errors), errors
    assert_no_html_with(at, list(expected.columns))


@pytest.mark.parametrize("file_name", ["html_tags.csv", "formula_prefix.csv", "duplicated_names.csv",
                                       "inf_huge.csv", "quoted_newlines.csv"])
def test_every_page_survives_a_hostile_upload(file_name):
    data = (CORPUS / file_name).read_bytes()
    at = upload(start(), file_name, data)
    if at.session_state["k"] > 2:  # fit the two-row files too, so that every page has a model
        at.number_input(key="k").set_value(2).run()
        no_exception(at)
    visit_pages(at)
    table = read_table(data, name=file_name)
    strings = list(table.columns) + [v for v in table.to_numpy().ravel() if isinstance(v, str)]
    assert_no_html_with(at, strings)


def _strings(value):
    """Every string in a decoded JSON document."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def test_html_and_script_names_are_shown_as_text():
    data = (CORPUS / "html_tags.csv").read_bytes()
    at = upload(start(), "html_tags.csv", data)
    at.number_input(key="k").set_value(2).run()
    no_exception(at)
    assert any(s.startswith("Clustered into K = ") for s in messages(at, "success"))
    at.switch_page("pages/clusters.py").run()
    no_exception(at)
    charts = chart_elements(at)
    assert charts, "no figure on the Tune & see page"
    strings = [text for chart in charts for text in _strings(json.loads(chart_spec(chart)))]
    # Plotly renders a subset of HTML in labels and hover text: names must
    # arrive escaped, as text, and never as live tags.
    assert any("&lt;script&gt;alert(1)&lt;/script&gt;" in text for text in strings)
    assert any("&lt;b&gt;name&lt;/b&gt;" in text for text in strings)
    for text in strings:
        assert "<script" not in text and "<b>name" not in text and "<img" not in text, text
    assert_no_html_with(at, ["<script>", "<b>name</b>", "onerror"])


# ---------------------------------------------------------------------------
# Large and binary files, generated


@pytest.mark.timeout(900)  # a bound for a busy machine; the work is bounded below, not timed
def test_ten_thousand_columns(downloads):
    at = start()
    at.default_timeout = 600  # per run, for a busy machine: what the pages draw is bounded below, not timed
    at = upload(at, "wide.csv", wide_table())
    assert at.session_state["dataset"] == UPLOAD
    assert any("4 rows × 10000 columns" in c for c in messages(at, "caption"))
    # What is drawn is bounded: the preview shows the first columns and says where the others are.
    assert _preview(at).shape == (4, 200)
    assert any("the first 200 columns (every column is listed under *Columns* below)" in c
               for c in messages(at, "caption"))
    assert len(at.dataframe[1].value) == 10_000  # every column's role
    visit_pages(at)
    at.switch_page("pages/teach.py").run()
    no_exception(at)
    # The ρ demonstration (8 refits of every column, panels too wide to read) says it is not drawn.
    assert any("Not drawn for this table: its 10,000 fitted features" in n for n in messages(at, "info"))
    assert not [c for c in chart_elements(at) if c.proto.id and "rho_demo" in c.proto.id]
    labels = next(downloads[k] for k in downloads if k.endswith("_craft_labels.csv"))
    frame = pd.read_csv(io.BytesIO(labels))
    assert frame.shape == (4, 10_001) and frame.columns[-1] == "craft_cluster"


def test_very_long_strings():
    long_text = "x" * 300_000
    data = f'id,text,value\n1,"{long_text}",1.5\n2,short,2.5\n3,"{long_text}y",0.5\n'.encode()
    at = upload(start(), "long.csv", data)
    assert at.session_state["dataset"] == UPLOAD
    assert any("3 rows × 3 columns" in c for c in messages(at, "caption"))
    visit_pages(at)


def test_numeric_column_with_stray_text_is_categorical_with_a_reason():
    values = [str(v) for v in range(60)] + ["oops"]
    data = ("amount,colour\n" + "\n".join(f"{v},{'red' if i % 2 else 'blue'}" for i, v in enumerate(values))
            + "\n").encode()
    at = upload(start(), "stray.csv", data)
    report = at.dataframe[1].value
    reason = report.set_index("column").loc["amount", "reason"]
    assert "numbers but not all" in reason and "'oops'" in reason


def test_parquet_and_excel_uploads():
    # No cell starts with "=": openpyxl would write it as a formula without a value.
    table = pd.DataFrame({"size": [1.0, 1.2, 0.9, 8.0, 8.1, 7.7], "colour": list("rrrbbb"),
                          "@cmd": ["+1+1", "a", "b", "c", "d", "e"]})
    buffer = io.BytesIO()
    table.to_parquet(buffer)
    at = upload(start(), "t.parquet", buffer.getvalue(), "application/octet-stream")
    assert at.session_state["dataset"] == UPLOAD
    assert _preview(at).shape == (6, 3)
    buffer = io.BytesIO()
    table.to_excel(buffer, index=False)
    upload(at, "t.xlsx", buffer.getvalue(),
           "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet")
    assert _preview(at).shape == (6, 3)
    assert list(_preview(at).columns) == ["size", "colour", "@cmd"]
    assert _preview(at)["@cmd"].tolist()[0] == "+1+1"


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        ("book.xlsx", b"PK\x03\x04 not a zip", r"Not loaded: 'book\.xlsx' is not a readable Excel file"),
        ("t.parquet", b"PAR1 then junk", r"Not loaded: 't\.parquet' is not a readable Parquet file"),
        ("old.xls", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 512, r"Not loaded: .*'old\.xls'"),
        ("nul.csv", b"a,b\n1,\x002\n", r"Not loaded: 'nul\.csv' is not a readable table"),
    ],
)
def test_corrupt_binary_uploads(name, data, message):
    at = upload(start(), name, data, "application/octet-stream")
    errors = messages(at, "error")
    assert any(re.search(message, e) for e in errors), errors
    assert at.session_state["dataset"] != UPLOAD


@pytest.mark.parametrize("seed", range(6))
def test_random_bytes_never_raise(seed):
    rng = np.random.default_rng(seed)
    at = start()
    for name in ("r.csv", "r.tsv", "r.parquet", "r.xlsx"):
        upload(at, name, rng.bytes(int(rng.integers(1, 3000))), "application/octet-stream")


# ---------------------------------------------------------------------------
# Exports and the upload limit


def test_labels_download_neutralises_formulas(downloads):
    data = (CORPUS / "formula_prefix.csv").read_bytes()
    at = upload(start(), "formula_prefix.csv", data)
    at.switch_page("pages/export.py").run()
    no_exception(at)
    labels = next(downloads[k] for k in downloads if k.endswith("_craft_labels.csv"))
    frame = pd.read_csv(io.BytesIO(labels), dtype=str, keep_default_na=False)
    assert len(frame) == 3
    assert frame["formula"].tolist() == ["'=SUM(A1:A3)", "'+1+2", "'-cmd"]
    assert frame["at"].tolist() == ["'@user", "'@admin", "plain"]
    assert [float(v) for v in frame["number"]] == [-3.0, 4.0, 5.5]  # numbers stay numbers
    assert frame.columns[-1] == "craft_cluster"
    for cell in [*frame.columns, *frame.to_numpy().ravel()]:
        assert not re.match(r"[=+@\t\r]", cell), cell
        assert not re.match(r"-(?![\d.])", cell), cell


def test_masks_download_escapes_formula_column_names(downloads):
    table = "=HYPERLINK(\"x\"),+a,@b,-c\n1,x,p,1.5\n2,y,q,2.5\n3,x,p,0.5\n4,y,q,1.0\n"
    at = upload(start(), "names.csv", table.encode())
    at.number_input(key="k").set_value(2).run()
    at.switch_page("pages/export.py").run()
    no_exception(at)
    masks = next(downloads[k] for k in downloads if k.endswith("_craft_masks.csv"))
    header = pd.read_csv(io.BytesIO(masks), nrows=0).columns.tolist()
    assert header[0] == "cluster"
    assert header[-4:] == ["'=HYPERLINK(\"x\")", "'+a", "'@b", "'-c"]


def test_html_report_escapes_user_strings(downloads):
    at = upload(start(), "html_tags.csv", (CORPUS / "html_tags.csv").read_bytes())
    at.number_input(key="k").set_value(2).run()
    at.switch_page("pages/export.py").run()
    no_exception(at)
    at.button(key="build_report").click().run()
    no_exception(at)
    report = next(downloads[k] for k in downloads if k.endswith("_craft_report.html")).decode("utf-8")
    assert "html_tags" in report
    for raw in ["<script>alert(1)</script>", "<img src=x onerror=alert(1)>", "<b>name</b>", "<i>x</i>"]:
        assert raw not in report, raw
    # The names are there, as text: escaped in the figures' data (Plotly shows them as typed).
    assert "&lt;script&gt;alert(1)&lt;" in report
    assert "&amp;lt;" not in report  # and not escaped twice


def test_upload_limit_fits_the_machine_and_is_stated():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    limit = config["server"]["maxUploadSize"]
    assert isinstance(limit, int) and limit >= 1
    memory_mb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**20
    # A parsed table takes several times its file size; a few uploads must fit.
    assert limit * 10 <= memory_mb, (limit, memory_mb)
    assert config["server"].get("maxMessageSize", 200) >= limit or limit <= 200
    at = start()
    stated = [c for c in messages(at, "caption") if f"{limit} MB" in c]
    assert stated, messages(at, "caption")
    assert at.file_uploader(key="uploader").help and f"{limit} MB" in at.file_uploader(key="uploader").help


def test_no_user_string_is_rendered_with_unsafe_html_in_the_sources():
    sources = [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py")), *sorted((ROOT / "explorer").glob("*.py"))]
    for path in sources:
        text = path.read_text()
        assert "unsafe_allow_html=True" not in text, path
        # explorer/ui.py's style() is the one st.html call: a <style> block of the app's own CSS, markup refused.
        assert ("st.html(" not in text or path.name == "ui.py") and "components.html(" not in text, path


# ---------------------------------------------------------------------------
# Issues 14 and 15: the user's cells survive, the reader says what it did


def _labels(downloads) -> bytes:
    return next(downloads[k] for k in downloads if k.endswith("_craft_labels.csv"))


def test_text_markers_are_shown_switchable_and_exported_as_written(downloads):
    def income(i: int) -> str:
        return "NA" if i % 7 == 0 else '"' + f"{1000 + i:,}" + '"'

    rows = ["n,children,income"] + [f"{i},{'None' if i % 3 else 'two'},{income(i)}" for i in range(30)]
    at = upload(start(), "survey.csv", "\n".join(rows).encode())
    report = at.dataframe[1].value
    by_column = report.set_index("column")
    assert by_column.loc["children", "missing"] == 0
    assert by_column.loc["children", "markers"] == "kept as text: 'None' ×20"
    assert by_column.loc["income", "markers"] == "read as missing: 'NA' ×5"
    assert "thousands separators" in by_column.loc["income", "reason"]
    shown = " ".join(messages(at, "markdown"))
    assert "Missing markers, read as missing in columns whose other values are numbers: " in shown
    assert "Kept as text (not missing): 'None' ×20 in 'children'" in shown
    # The labels CSV writes the cells as the file holds them.
    at.switch_page("pages/export.py").run()
    no_exception(at)
    back = pd.read_csv(io.BytesIO(_labels(downloads)), dtype=str, keep_default_na=False)
    assert back["children"].tolist() == [r.split(",")[1] for r in rows[1:]]
    assert back["income"].tolist()[:3] == ["NA", "1,001", "1,002"]
    # Switched on: 'None' becomes missing in the text column too.
    at.switch_page("pages/data.py").run()
    at.checkbox(key="upload_markers_in_text").check().run()
    no_exception(at)
    by_column = at.dataframe[1].value.set_index("column")
    assert by_column.loc["children", "missing"] == 20
    assert by_column.loc["children", "markers"] == "read as missing: 'None' ×20"


def test_workbook_sheet_is_named_and_can_be_changed(tmp_path):
    import openpyxl

    book = openpyxl.Workbook()
    first = book.active
    first.title = "Notes"
    for row in (["note", "x"], ["a", 1], ["b", 2], ["c", 3]):
        first.append(row)
    second = book.create_sheet("Data")
    second.append(["height", "colour"])
    for i in range(12):
        second.append([1.0 + i % 3 * 5 + i / 10, ["red", "blue"][i % 2]])
    path = tmp_path / "book.xlsx"
    book.save(path)
    at = upload(start(), "book.xlsx", path.read_bytes(),
                "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet")
    assert any("Read sheet 'Notes' of 2 ('Notes', 'Data')." in m for m in messages(at, "markdown"))
    at.selectbox(key="upload_sheet").set_value("Data").run()
    no_exception(at)
    assert at.dataframe[0].value.columns.tolist() == ["height", "colour"]
    assert any("Read sheet 'Data' of 2" in m for m in messages(at, "markdown"))


def test_blank_excel_rows_are_dropped_and_counted(tmp_path):
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["v", "w"])
    for i in range(10):
        sheet.append([float(i), "ab"[i % 2]])
        if i % 3 == 0:
            sheet.append([None, None])
    path = tmp_path / "gaps.xlsx"
    book.save(path)
    at = upload(start(), "gaps.xlsx", path.read_bytes(), "application/octet-stream")
    assert at.dataframe[0].value.shape == (10, 2)
    assert any("3 blank row(s) of 'gaps.xlsx' dropped" in m for m in messages(at, "markdown"))  # the last is past the data


def test_too_wide_upload_is_refused_with_the_limits(monkeypatch):
    monkeypatch.setenv("CRAFT_MAX_COLUMNS", "100")
    header = ",".join(f"c{i}" for i in range(150))
    at = upload(start(), "wide.csv", (header + "\n" + ",".join("1" * 150) + "\n").encode())
    shown = " ".join(messages(at, "error"))
    assert "Not loaded: 'wide.csv' has about 150 columns; this machine takes at most 100 columns" in shown
    assert any("at most 100 columns" in c for c in messages(at, "caption"))


def test_nested_parquet_upload_with_a_list_column_named_class(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(0)
    table = pa.table({"x": rng.normal(size=30), "y": rng.normal(size=30),
                      "class": [[int(v)] for v in rng.integers(0, 3, 30)]})
    path = tmp_path / "nested.parquet"
    pq.write_table(table, path)
    at = upload(start(), "nested.parquet", path.read_bytes(), "application/octet-stream")
    report = at.dataframe[1].value.set_index("column")
    assert "nested Parquet list column" in report.loc["class", "reason"]
    # The session stays usable: another upload, and a fit.
    at = upload(at, "small.csv", b"a,b\n1,x\n2,y\n3,x\n4,y\n")
    assert at.dataframe[0].value.shape == (4, 2)


# Every bundled dataset and every corpus table, uploaded, fitted and exported:
# the labels CSV gives back the file's cells, plus the cluster column.
ROUND_TRIP = [("corpus", name) for name in sorted(PARSED)] + [
    ("bundled", name) for name in ("wine", "zoo", "soybean", "credit-g", "splice", "spambase")]


def _file_records(data: bytes) -> list[list[str]]:
    """The file's rows as the csv module reads them (after the encoding and delimiter are known)."""
    from craft.io import read_info

    info = read_info(read_table(data, name="f.csv"))
    text = data.decode(info.encoding)
    import csv

    records = list(csv.reader(io.StringIO(text, newline=""), delimiter=info.delimiter))
    return [r for r in records if any(cell.strip() for cell in r)]


@pytest.mark.parametrize(("where", "name"), ROUND_TRIP)
def test_round_trip_upload_fit_labels_gives_back_the_cells(where, name, downloads):
    from craft import datasets
    from craft.export import neutralize

    if where == "corpus":
        file_name, data = name, (CORPUS / name).read_bytes()
    else:  # the package's own file, as a user would upload it
        from importlib import resources

        file_name = datasets._info(name).file
        data = resources.files("craft").joinpath("data", file_name).read_bytes()
    at = upload(start(), file_name, data)
    if at.number_input(key="k").value > 2:
        at.number_input(key="k").set_value(2).run()
    at.switch_page("pages/export.py").run()
    no_exception(at)
    if not any(k.endswith("_craft_labels.csv") for k in downloads):
        # No fit with the suggested roles (inf_huge.csv: infinite numbers): every column categorical.
        at.switch_page("pages/data.py").run()
        at.multiselect(key="roles_columns").set_value(at.dataframe[0].value.columns.tolist())
        at.radio(key="roles_role").set_value("categorical")
        at.get("form_submit_button")[0].click().run()  # type: ignore[union-attr]  # AppTest.get: Element | Block
        at.switch_page("pages/export.py").run()
        no_exception(at)
    import csv

    written = list(csv.reader(io.StringIO(_labels(downloads).decode("utf-8"), newline="")))
    original = _file_records(data)
    header, rows = original[0], original[1:]
    width = max(len(header), *(len(r) for r in rows))
    assert len(written) == len(rows) + 1
    for got, expected in zip(written[1:], rows, strict=True):
        expected = expected + [""] * (width - len(expected))
        assert got[:-1] == [neutralize(cell) for cell in expected]
        assert got[-1].isdigit()
    assert written[0][-1] == "craft_cluster"


def test_hostile_link_values_are_named_once_on_the_page():
    at = AppTest.from_file(APP, default_timeout=90)
    hostile = {"m": "abc", "k": "-5", "dataset": "../../etc/passwd", "eps_v": "1e309", "roles": "{bad",
               "standardize": "maybe", "bogus": "x", "seed": "7",
               "syn_n": "<script>alert(1)</script>" + "9" * 20_000}
    for key, value in hostile.items():
        at.query_params[key] = value
    at.run()
    no_exception(at)
    warnings_shown = messages(at, "warning")
    assert len(warnings_shown) == 1
    text = warnings_shown[0]
    assert text.startswith("Ignored in the link: ")
    for part in ("m='abc' (not a finite number)", "k='-5' (not an allowed value; 3 is used)",
                 "dataset='../../etc/passwd' (not an allowed value; 'fig1_binary' is used)",
                 "eps_v='1e309' (not a finite number)", "roles='{bad' (not a JSON object",
                 "standardize='maybe' (not an allowed value; True is used)",
                 "bogus='x' (not a parameter of this app)", "syn_n='<script>alert(1)</script>999"):
        assert part in text, part
    assert "seed=" not in text  # a valid value is applied, not reported
    assert len(text) < 1500  # the 20,000-character value is shortened
    assert at.session_state["seed"] == 7
    assert_no_html_with(at, [])
    at.run()
    assert messages(at, "warning") == []  # said once


def test_valid_link_says_nothing():
    at = AppTest.from_file(APP, default_timeout=90)
    for key, value in {"dataset": "wine", "m": "0.50", "k": "3", "standardize": "false"}.items():
        at.query_params[key] = value
    at.run()
    no_exception(at)
    assert not [m for m in messages(at, "warning") if m.startswith("Ignored in the link")]


@pytest.mark.parametrize("key, value", [("k", "inf"), ("k", "1e400"), ("seed", "1e400"), ("syn_n", "1e400"),
                                        ("max_iter", "1e400"), ("seed", "1e30"), ("k", "-inf"), ("n_init", "nan"),
                                        ("roles", "[" * 3000), ("roles", '{"a":' * 3000)])
def test_link_value_that_overflowed_the_page_is_ignored_with_the_note(key, value):
    """Infinite, overflowing or deeply nested link values: the page draws and the note names the value."""
    at = AppTest.from_file(APP, default_timeout=90)
    at.query_params[key] = value
    at.run()
    no_exception(at)
    shown = [m for m in messages(at, "warning") if m.startswith("Ignored in the link: ")]
    assert len(shown) == 1 and f"{key}={value[:20]}" in shown[0].replace("'", ""), shown
    assert at.session_state["seed"] == 0 and at.session_state["dataset"] == "fig1_binary"
