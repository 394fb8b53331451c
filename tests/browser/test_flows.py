"""End-to-end flows in a real headless Chromium against ``streamlit run app.py``.

One server for the module (``app_server``), a fresh browser context per
test, so every test is its own Streamlit session. Moving between pages is
done by clicking the sidebar navigation (a page load would start a new
session and forget an upload). Figures are read from the Plotly graph div
(``.data``), tables from the data grid's accessible cells.
"""

from __future__ import annotations

import csv
import io
import os
import re
import time
from pathlib import Path

import pytest
from benchmarks.bench_browser import NAV_LINKS

pytestmark = [pytest.mark.browser, pytest.mark.timeout(240)]

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "corpus"
SCREENSHOTS = ROOT / "docs" / "screenshots"
#: Milliseconds a script run (a fit included) may take.
RUN_TIMEOUT_MS = 60_000
APP_IDLE = "[data-testid='stApp'][data-test-script-state='notRunning']"
APP_RUNNING = "[data-testid='stApp'][data-test-script-state='running']"
#: A figure of the app, from the moment its element is on the page (explorer.plotly_view's component).
CHART = ".craft-plot"
#: Per drawn chart: the bottom of what it draws and the top of the element after it in the page, if any.
_CHART_BOXES_JS = """() => Array.from(document.querySelectorAll('.craft-plot'), (plot) => plot.querySelector('.main-svg'))
    .filter((svg) => svg !== null).map((svg) => {
  const container = svg.closest('[data-testid="stElementContainer"]');
  let next = container.nextElementSibling;
  while (next && next.getBoundingClientRect().height === 0) next = next.nextElementSibling;
  return {bottom: svg.getBoundingClientRect().bottom, next_top: next ? next.getBoundingClientRect().top : null};
})"""
UPLOAD = "(uploaded file)"


# ---------------------------------------------------------------------------
# Helpers


def new_context_page(browser, base_url: str):
    """A page in a new browser context (its own cookies, storage and Streamlit session)."""
    context = browser.new_context(
        accept_downloads=True, viewport={"width": 1400, "height": 1000}, base_url=base_url
    )
    context.set_default_timeout(RUN_TIMEOUT_MS)
    page = context.new_page()
    page.craft_errors = []  # uncaught page errors, checked by the tests
    page.on("pageerror", lambda error: page.craft_errors.append(str(error)))
    return context, page


def wait_idle(page, timeout: int = RUN_TIMEOUT_MS) -> None:
    """Wait until the script has finished the run an interaction started.

    The rerun may not have begun when this is called: wait a moment for the
    ``running`` state (it may already be over), then for ``notRunning``.
    """
    try:
        page.wait_for_selector(APP_RUNNING, timeout=500)
    except Exception:  # noqa: BLE001 - the run was quick, or none started
        pass
    page.wait_for_selector(APP_IDLE, timeout=timeout)
    # A page that does not need the fit draws its progress and reruns when the fit is done.
    page.wait_for_selector(".st-key-background_fit", state="detached", timeout=timeout)
    page.wait_for_selector(APP_IDLE, timeout=timeout)
    page.wait_for_timeout(100)


def open_app(page, path: str = "/") -> None:
    """Load the app at ``path`` (a new session) and wait for its first run."""
    page.goto(path)
    page.wait_for_selector(NAV_LINKS, timeout=RUN_TIMEOUT_MS)
    wait_idle(page)


def go_to(page, title: str) -> None:
    """Open a page through the sidebar navigation (same session)."""
    page.locator(NAV_LINKS, has_text=title).first.click()
    wait_idle(page)
    page.wait_for_selector(f"[data-testid='stHeading']:has-text('{title.split()[0]}')")


def assert_charts_laid_out(page) -> None:
    """Every drawn chart takes its own height in the page, also once the window has been resized (Plotly
    redraws a responsive chart then): what follows a chart is not drawn over it."""
    previous = page.viewport_size
    page.set_viewport_size({"width": 1100, "height": 700})
    page.wait_for_timeout(600)  # Plotly's resize
    boxes = page.evaluate(_CHART_BOXES_JS)
    if previous is not None:
        page.set_viewport_size(previous)
    assert boxes and all(box["next_top"] is None or box["next_top"] >= box["bottom"] - 1 for box in boxes), boxes


def assert_clean(page) -> None:
    """No Streamlit exception element, no traceback text, no uncaught page error."""
    exceptions = page.locator("[data-testid='stException']")
    assert exceptions.count() == 0, exceptions.first.inner_text()
    assert "Traceback (most recent call last)" not in page.locator("[data-testid='stMain']").inner_text()
    assert not page.craft_errors, page.craft_errors


def alerts(page, kind: str) -> list[str]:
    """Texts of the alerts of one kind: error, success, info, warning."""
    selector = f"[data-testid='stAlertContent{kind.capitalize()}'] [data-testid='stMarkdownContainer']"
    return [text.strip() for text in page.locator(selector).all_inner_texts()]


def captions(page) -> list[str]:
    return page.locator("[data-testid='stCaptionContainer']").all_inner_texts()


_MASKS_JS = """
(key) => {
  const graph = document.querySelector(`.st-key-${key} .js-plotly-plot`);
  if (!graph || !graph.data) return null;
  const traces = graph.data.filter((d) => d.type === 'heatmap');
  const trace = traces.find((d) => d.name === 'CRAFT') || traces[traces.length - 1];
  let z = trace.z;
  if (z && z._inputArray) z = z._inputArray;
  else if (z && z.bdata) {
    const bytes = Uint8Array.from(atob(z.bdata), (c) => c.charCodeAt(0));
    const flat = new Float64Array(bytes.buffer);
    const [rows, cols] = z.shape.split(',').map(Number);
    z = Array.from({length: rows}, (_, i) => Array.from(flat.slice(i * cols, (i + 1) * cols)));
  }
  return {x: Array.from(trace.x), y: Array.from(trace.y), z: z.map((row) => Array.from(row))};
}
"""


def mask_figure(page, until=None, key: str = "fig_masks") -> dict:
    """The CRAFT mask heatmap on the page: ``{x: features, y: clusters, z: 0/1 rows}``.

    Reruns finish asynchronously: with ``until``, poll until the figure
    satisfies it (a predicate), so a figure of an earlier run is never taken.
    """
    end = time.monotonic() + RUN_TIMEOUT_MS / 1000
    figure = None
    while time.monotonic() < end:
        figure = page.evaluate(_MASKS_JS, key)
        if figure is not None and (until is None or until(figure)):
            return figure
        page.wait_for_timeout(200)
    summary = None if figure is None else {"x": figure["x"], "y": figure["y"],
                                           "selected": [sum(r) for r in figure["z"]]}
    raise AssertionError(f"the mask heatmap never reached the expected state; last seen: {summary}")


def selected_per_cluster(figure) -> list[int]:
    return [int(sum(row)) for row in figure["z"]]


def grid_rows(page, index: int) -> list[list[str]]:
    """Cells of the ``index``-th data grid on the page (its accessible table)."""
    grid = page.locator("[data-testid='stDataFrame']").nth(index)
    # The grid draws on a canvas and fills its accessible table a moment later.
    grid.locator("canvas table td").first.wait_for(state="attached")
    return grid.evaluate(
        "(el) => Array.from(el.querySelectorAll('tr')).map("
        "(tr) => Array.from(tr.querySelectorAll('td, th')).map((c) => c.textContent))"
    )


def slider_value(page, key: str) -> float:
    return float(page.locator(f".st-key-{key} input[type=range]").get_attribute("value"))


def selected(page, key: str) -> str:
    """The shown value of a selectbox."""
    return page.locator(f".st-key-{key} input[role='combobox']").input_value()


def select_options(page, key: str) -> list[str]:
    """The options a selectbox offers (opened and closed again)."""
    page.locator(f".st-key-{key} button[aria-label='Open']").click()
    page.wait_for_selector("[role='option']")
    options = [text.strip() for text in page.locator("[role='option']").all_inner_texts()]
    page.keyboard.press("Escape")
    page.wait_for_selector("[role='option']", state="detached")
    return options


def set_number(page, key: str, value) -> None:
    field = page.locator(f".st-key-{key} input")
    field.fill(str(value))
    field.press("Enter")
    wait_idle(page)


_NAME_SHOWN_JS = """
(name) => Array.from(document.querySelectorAll(
    "[data-testid='stAlert'], [data-testid='stCaptionContainer']")).some((el) => el.innerText.includes(name))
"""


def upload(page, name: str, data: bytes, mime: str = "text/csv", *, answered: bool = True) -> None:
    """Give a file to the Data page's uploader (the expander is opened first, as a user would).

    With ``answered``, wait until the app names the file (its error message,
    or the sidebar's "Your file ..."), i.e. until the upload's run is over.
    """
    if not page.locator(".st-key-uploader [data-testid='stFileUploaderDropzone']").is_visible():
        page.get_by_text("Upload your own table").first.click()  # open the expander
        page.locator(".st-key-uploader [data-testid='stFileUploaderDropzone']").wait_for()
    uploader = page.locator(".st-key-uploader input[type=file]")
    uploader.set_input_files(files=[{"name": name, "mimeType": mime, "buffer": data}])
    if answered:
        page.wait_for_function(_NAME_SHOWN_JS, arg=name, timeout=RUN_TIMEOUT_MS)
    wait_idle(page)


#: The README's screenshots: what a laptop shows.
README_VIEWPORT = {"width": 1280, "height": 720}


def screenshot(page, name: str, focus: str | None = None) -> None:
    """``docs/screenshots/<name>.png`` (palette PNG, small) at 1280 × 720 when CRAFT_SCREENSHOTS=1.

    ``focus``: a selector scrolled to the top of the page, under the app's header bar, before the shot.
    The page's own viewport is restored afterwards, so the flow goes on as it was.
    """
    if os.environ.get("CRAFT_SCREENSHOTS") != "1":
        return
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    previous = page.viewport_size
    page.set_viewport_size(README_VIEWPORT)
    wait_idle(page)
    if focus is not None:
        page.locator(focus).first.evaluate(
            "(el) => { el.scrollIntoView({block: 'start'}); document.querySelector(\"[data-testid='stMain']\")"
            ".scrollBy(0, -70); }")
    page.wait_for_timeout(600)  # let Plotly finish its transitions
    page.screenshot(path=str(path))
    if previous is not None:
        page.set_viewport_size(previous)
    try:
        from PIL import Image
    except ImportError:
        return
    with Image.open(path) as image:
        small = image.convert("RGB").quantize(colors=128, method=Image.Quantize.MEDIANCUT)
        small.save(path, optimize=True)


def mixed_csv(n_rows: int = 60) -> bytes:
    """A small mixed table with two clear groups and feature names unlike the examples'."""
    lines = ["height_cm,eye_colour,weight_kg,home_city"]
    for i in range(n_rows):
        group = i % 2
        lines.append(
            f"{150 + (i * 7) % 9 + 30 * group}.{i % 10},{['blue', 'brown'][group]},"
            f"{50 + (i * 3) % 5 + 25 * group}.{(i * 7) % 10},{['Paris', 'Rome', 'Oslo'][i % 3]}"
        )
    return ("\n".join(lines) + "\n").encode()


MIXED_FEATURES = ["height_cm", "eye_colour", "weight_kg", "home_city"]


# ---------------------------------------------------------------------------
# 1. Open the app


def test_open_the_app_loads_the_example_and_draws_the_mask_heatmap(page):
    open_app(page)
    assert_clean(page)
    assert any(s.startswith("Clustered into K = 3 clusters") for s in alerts(page, "success")), alerts(page, "success")
    assert any("300 rows × 25 columns" in c for c in captions(page)), captions(page)
    go_to(page, "Tune & see")
    figure = mask_figure(page)
    assert figure["x"] == [f"f{i}" for i in range(1, 25)]
    assert len(figure["y"]) == 3
    # Figure 1(a): three clusters, each on its own 8 features.
    assert selected_per_cluster(figure) == [8, 8, 8]
    assert page.locator(CHART).count() >= 1
    assert_clean(page)
    screenshot(page, "masks", focus=".st-key-fig_masks")
    page.get_by_role("tab", name="Data heatmap").click()
    wait_idle(page)
    page.wait_for_selector(".st-key-fig_heatmap .js-plotly-plot")
    assert_clean(page)
    screenshot(page, "data_heatmap", focus=".st-key-fig_heatmap")
    page.get_by_role("tab", name="Sizes & profiles").click()
    wait_idle(page)
    page.wait_for_selector(".st-key-fig_profile .js-plotly-plot")
    page.locator(".st-key-fig_profile").scroll_into_view_if_needed()
    assert_clean(page)
    screenshot(page, "profiles", focus=".st-key-fig_profile")


# ---------------------------------------------------------------------------
# 2. Upload a mixed CSV


def test_upload_a_mixed_csv_shows_its_schema_and_fits_it(page):
    open_app(page)
    upload(page, "people.csv", mixed_csv())
    assert_clean(page)
    assert not alerts(page, "error"), alerts(page, "error")
    assert any("60 rows × 4 columns" in c for c in captions(page)), captions(page)
    assert any(c.startswith("2 numeric, 2 categorical, 0 ignored") for c in captions(page)), captions(page)
    # The schema table: one row per column with its role.
    rows = grid_rows(page, 1)
    roles = {row[0]: row[1] for row in rows if len(row) > 1 and row[0] in MIXED_FEATURES}
    assert roles == {"height_cm": "numeric", "eye_colour": "categorical", "weight_kg": "numeric",
                     "home_city": "categorical"}, rows[:6]
    # The label picker offers the new table's columns, not the example's "true_cluster".
    assert selected(page, "label_select") == "(none)"
    assert any(s.startswith("Clustered into K = 3 clusters") for s in alerts(page, "success"))
    screenshot(page, "schema", focus="[data-testid='stHeading']:has-text('Columns: roles and missing values')")
    go_to(page, "Tune & see")
    figure = mask_figure(page)
    assert sorted(figure["x"]) == sorted(MIXED_FEATURES)
    assert len(figure["y"]) == 3
    assert_clean(page)


# ---------------------------------------------------------------------------
# 3. Move m and change k


def test_moving_m_and_k_changes_the_mask_heatmap(page):
    open_app(page)
    go_to(page, "Tune & see")
    before = mask_figure(page)
    assert selected_per_cluster(before) == [8, 8, 8]  # round(0.33 * 24)
    slider = page.locator(".st-key-m input[type=range]")
    slider.focus()
    page.keyboard.press("End")  # m = 0.95
    wait_idle(page)
    assert slider_value(page, "m") == pytest.approx(0.95)
    mask_figure(page, until=lambda f: selected_per_cluster(f) == [23] * 3)  # round(0.95 * 24)
    for _ in range(5):  # down to m = 0.90, one step at a time
        page.keyboard.press("ArrowLeft")
    wait_idle(page)
    assert slider_value(page, "m") == pytest.approx(0.90)
    page.wait_for_url(re.compile(r"[?&]m=0\.9(&|$)"))
    mask_figure(page, until=lambda f: selected_per_cluster(f) == [22] * 3)  # round(0.9 * 24)
    set_number(page, "k", 4)
    page.wait_for_url(re.compile(r"[?&]k=4(&|$)"))
    after_k = mask_figure(page, until=lambda f: len(f["y"]) == 4)
    assert selected_per_cluster(after_k) == [22] * 4
    assert_clean(page)


# ---------------------------------------------------------------------------
# 4. Download the labels


def test_download_labels_csv(page):
    open_app(page)
    go_to(page, "Export")
    with page.expect_download() as download_info:
        page.locator(".st-key-dl_labels button").click()
    download = download_info.value
    assert download.suggested_filename.endswith("_craft_labels.csv")
    text = Path(download.path()).read_text(encoding="utf-8")
    rows = list(csv.reader(io.StringIO(text)))
    header, body = rows[0], rows[1:]
    assert len(body) == 300  # one row per input row
    assert header[-1] == "craft_cluster"
    assert "true_cluster" in header and "f1" in header
    clusters = {int(row[-1]) for row in body}
    assert clusters == {0, 1, 2}
    assert_clean(page)


def test_downloaded_labels_neutralise_formulas(page):
    open_app(page)
    upload(page, "formula_prefix.csv", (CORPUS / "formula_prefix.csv").read_bytes())
    go_to(page, "Export")
    with page.expect_download() as download_info:
        page.locator(".st-key-dl_labels button").click()
    rows = list(csv.reader(io.StringIO(Path(download_info.value.path()).read_text(encoding="utf-8"))))
    assert rows[0] == ["formula", "number", "at", "craft_cluster"]
    assert [row[0] for row in rows[1:]] == ["'=SUM(A1:A3)", "'+1+2", "'-cmd"]
    assert [float(row[1]) for row in rows[1:]] == [-3.0, 4.0, 5.5]
    assert [row[2] for row in rows[1:]] == ["'@user", "'@admin", "plain"]


# ---------------------------------------------------------------------------
# 5. A broken file


def test_broken_upload_shows_a_readable_error_and_the_app_stays_usable(page):
    open_app(page)
    upload(page, "binary_garbage.csv", (CORPUS / "binary_garbage.csv").read_bytes())
    assert_clean(page)
    errors = alerts(page, "error")
    assert any(re.search(r"Not loaded: 'binary_garbage\.csv' is not a readable table: it looks like binary data",
                         e) for e in errors), errors
    # The example stays loaded and fitted.
    assert any(s.startswith("Clustered into K = 3 clusters") for s in alerts(page, "success"))
    assert any("Still showing" in i for i in alerts(page, "info"))
    screenshot(page, "upload_error")
    # Usable: parameters still work, and a good file is then read.
    go_to(page, "Tune & see")
    set_number(page, "k", 2)
    mask_figure(page, until=lambda f: len(f["y"]) == 2)
    go_to(page, "Data")
    upload(page, "people.csv", mixed_csv())
    assert not any(e.startswith("Not loaded") for e in alerts(page, "error"))
    assert any("60 rows × 4 columns" in c for c in captions(page))
    assert_clean(page)


def test_other_refused_files_give_messages_in_one_session(page):
    open_app(page)
    for file_name in ["empty.csv", "header_only.csv", "ragged_long_row.csv", "one_row.csv", "image_named.csv"]:
        upload(page, file_name, (CORPUS / file_name).read_bytes())
        assert_clean(page)
        errors = alerts(page, "error")
        assert any(e.startswith("Not loaded:") and file_name in e for e in errors), (file_name, errors)
    assert any(s.startswith("Clustered into K = 3 clusters") for s in alerts(page, "success"))


# ---------------------------------------------------------------------------
# 6. Parameters in the URL


def test_url_query_parameters_set_the_widgets(page):
    open_app(page, "/clusters?dataset=fig2_numeric&m=0.5&k=4&n_init=2")
    assert_clean(page)
    assert slider_value(page, "m") == pytest.approx(0.5)
    assert page.locator(".st-key-k input").input_value() == "4"
    assert slider_value(page, "n_init") == 2
    assert selected(page, "dataset") == "fig2_numeric"
    figure = mask_figure(page)
    assert len(figure["y"]) == 4
    assert len(figure["x"]) == 36  # Figure 2's numeric set has 36 features
    assert [sum(row) for row in figure["z"]] == [18] * 4  # round(0.5 * 36)


# ---------------------------------------------------------------------------
# Sessions and limits


def test_two_sessions_do_not_see_each_other(new_page):
    first, second = new_page(), new_page()
    open_app(first)
    open_app(second)

    def mixed_at_095(figure) -> bool:
        # m = 0.95 of 2 numeric + 2 categorical features: all 4 selected.
        return sorted(figure["x"]) == sorted(MIXED_FEATURES) and set(selected_per_cluster(figure)) == {4}

    # The first session uploads a table and moves m.
    upload(first, "people.csv", mixed_csv())
    go_to(first, "Tune & see")
    first.locator(".st-key-m input[type=range]").focus()
    first.keyboard.press("End")
    wait_idle(first)
    first_figure = mask_figure(first, until=mixed_at_095)

    # The second, open all along, reruns with the example, its own m, no upload offered.
    go_to(second, "Tune & see")
    assert slider_value(second, "m") == pytest.approx(0.33)
    assert selected(second, "dataset") == "fig1_binary"
    options = select_options(second, "dataset")
    assert "fig1_binary" in options and UPLOAD not in options, options
    assert mask_figure(second)["x"] == [f"f{i}" for i in range(1, 25)]
    set_number(second, "k", 2)
    figure = mask_figure(second, until=lambda f: len(f["y"]) == 2)
    assert figure["x"] == [f"f{i}" for i in range(1, 25)]
    assert selected_per_cluster(figure) == [8, 8]
    go_to(second, "Data")
    assert any("300 rows × 25 columns" in c for c in captions(second))
    assert not any("people.csv" in c for c in captions(second))

    # Back in the first session: its data and parameters are unchanged.
    go_to(first, "Data")
    assert any("60 rows × 4 columns" in c for c in captions(first))
    assert UPLOAD in select_options(first, "dataset")
    go_to(first, "Tune & see")
    assert slider_value(first, "m") == pytest.approx(0.95)
    assert first.locator(".st-key-k input").input_value() == "3"
    assert mask_figure(first, until=mixed_at_095) == first_figure

    # The first session's address does not carry its data to a third session: it asks for the table again.
    third = new_page()
    open_app(third, first.url)
    assert selected(third, "dataset") == UPLOAD
    assert any("has to be uploaded again" in text for text in alerts(third, "error"))
    assert not any("people.csv" in c for c in captions(third))
    for page in (first, second, third):
        assert_clean(page)


def test_upload_limit_is_stated_and_a_larger_file_is_refused(start_server, page_on):
    # The project's limit (200 MB) is stated the same way; a small limit keeps the file small.
    page = page_on(start_server("--server.maxUploadSize", "1"))
    open_app(page)
    page.get_by_text("Upload your own table").first.click()
    page.locator(".st-key-uploader [data-testid='stFileUploaderDropzone']").wait_for()
    assert any("Files up to 1 MB" in c for c in captions(page)), captions(page)
    big = b"a,b\n" + b"1,x\n" * 300_000  # 1.2 MB
    upload(page, "big.csv", big, answered=False)
    page.wait_for_selector(".st-key-uploader :text('1.0MB or smaller')", state="attached")
    assert "File must be 1.0MB or smaller" in page.locator(".st-key-uploader").text_content()
    assert any(s.startswith("Clustered into K = 3 clusters") for s in alerts(page, "success"))
    assert any("300 rows × 25 columns" in c for c in captions(page))
    assert_clean(page)
