"""A slow or refused upload in one session does not stall the others.

Streamlit runs every session's script in its own thread; reading an upload
is bounded work (an Excel sheet is streamed and refused past its cell cap)
that happens in the uploading session's run. This test checks the order of
events, never a duration: while one session is still reading a large
workbook, another session's rerun (a new fit) starts and finishes.
"""

from __future__ import annotations

import io
import zipfile

import pytest

from test_flows import APP_RUNNING, RUN_TIMEOUT_MS, alerts, go_to, mask_figure, open_app, set_number

pytestmark = [pytest.mark.browser, pytest.mark.timeout(240)]

_XML = '<?xml version="1.0" encoding="UTF-8"?>'
_MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_RELS = "http://schemas.openxmlformats.org/package/2006/relationships"
_DOC = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml"


def large_workbook(n_rows: int, n_cols: int = 4) -> bytes:
    """A minimal .xlsx whose one sheet holds ``n_rows`` × ``n_cols`` numbers, its XML written directly (fast)."""
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[:n_cols]
    rows = "".join(
        f'<row r="{i}">' + "".join(f'<c r="{c}{i}"><v>{i * n_cols + j}</v></c>' for j, c in enumerate(letters)) + "</row>"
        for i in range(1, n_rows + 1)
    )
    files = {
        "[Content_Types].xml": (
            f'{_XML}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
            f'<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
            f'<Default Extension="xml" ContentType="application/xml"/>'
            f'<Override PartName="/xl/workbook.xml" ContentType="{_TYPE}.sheet.main+xml"/>'
            f'<Override PartName="/xl/worksheets/sheet1.xml" ContentType="{_TYPE}.worksheet+xml"/></Types>'
        ),
        "_rels/.rels": (
            f'{_XML}<Relationships xmlns="{_RELS}"><Relationship Id="rId1" Type="{_DOC}/officeDocument" '
            f'Target="xl/workbook.xml"/></Relationships>'
        ),
        "xl/workbook.xml": (
            f'{_XML}<workbook xmlns="{_MAIN}" xmlns:r="{_DOC}"><sheets><sheet name="Data" sheetId="1" r:id="rId1"/>'
            f"</sheets></workbook>"
        ),
        "xl/_rels/workbook.xml.rels": (
            f'{_XML}<Relationships xmlns="{_RELS}"><Relationship Id="rId1" Type="{_DOC}/worksheet" '
            f'Target="worksheets/sheet1.xml"/></Relationships>'
        ),
        "xl/worksheets/sheet1.xml": f'{_XML}<worksheet xmlns="{_MAIN}"><sheetData>{rows}</sheetData></worksheet>',
    }
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return buffer.getvalue()


def test_a_large_upload_in_one_session_does_not_stall_another(new_page):
    reader, other = new_page(), new_page()
    open_app(reader)
    open_app(other)
    go_to(other, "Tune & see")

    # 1.2 million cells: streamed until the 1,000,000-cell cap of an Excel sheet, then refused.
    reader.get_by_text("Upload your own table").first.click()  # the uploader's expander, as a user opens it
    reader.locator(".st-key-uploader input[type=file]").set_input_files(
        files=[{"name": "big.xlsx", "mimeType": "application/octet-stream", "buffer": large_workbook(300_000)}]
    )
    reader.wait_for_selector(APP_RUNNING, timeout=RUN_TIMEOUT_MS)

    # Meanwhile the other session asks for a new fit and gets it ...
    set_number(other, "k", 2)
    mask_figure(other, until=lambda f: len(f["y"]) == 2)
    # ... while the reading session is still at work on its file.
    assert reader.locator(APP_RUNNING).count() == 1, "the other session had to wait for the upload to be read"

    reader.wait_for_function(
        "() => Array.from(document.querySelectorAll(\"[data-testid='stAlert']\"))"
        ".some((el) => el.innerText.includes('big.xlsx'))",
        timeout=RUN_TIMEOUT_MS,
    )
    assert any("more than 1,000,000 non-empty cells" in e for e in alerts(reader, "error")), alerts(reader, "error")
