"""Screens that must not mislead, in Chromium (issue 30, items 8-15): downloads under load, the scrubber's
camera, the Back button, readability at 1280 × 720.

AppTest checks of the same items are in ``tests/app/test_app_screens.py``.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_flows import go_to, open_app, set_number, wait_idle

pytestmark = [pytest.mark.browser, pytest.mark.timeout(400)]

#: A CPU-bound process beside the server: the load under which a download must still arrive or say why.
_BUSY = "import time\nend = time.time() + {seconds}\nwhile time.time() < end:\n    pass\n"


@pytest.fixture
def busy():
    """Two CPU-bound processes (one per core of a small machine), for the test's duration."""
    processes = [subprocess.Popen([sys.executable, "-c", _BUSY.format(seconds=300)]) for _ in range(2)]
    yield
    for process in processes:
        process.kill()
        process.wait(10)


def _download(page, button, timeout_s: float) -> tuple[float, str | None, str | None]:
    """Click ``button``; (seconds, file path or None, the button's error text or None)."""
    start = time.monotonic()
    try:
        with page.expect_download(timeout=timeout_s * 1000) as info:
            button.click()
        return time.monotonic() - start, str(info.value.path()), None
    except Exception as problem:  # noqa: BLE001 - no file: what the page says instead is the result
        print("no download:", type(problem).__name__, str(problem)[:300])
        error = page.locator("[data-testid='stDownloadButtonError']")
        return time.monotonic() - start, None, error.first.inner_text() if error.count() else None


def test_figure_downloads_arrive_next_to_a_cpu_bound_process(page, busy):
    open_app(page, "/?dataset=fig2_numeric&syn_n=120&n_init=1")
    go_to(page, "Export")
    for key in ("export_craft_cluster_sizes_svg", "export_craft_iterations_png", "export_craft_feature_masks_svg",
                "export_craft_projection_png"):
        button = page.locator(f".st-key-{key} [data-testid='stBaseButton-secondary']").first
        seconds, path, error = _download(page, button, 120)
        print(key, round(seconds, 1), path, error)
        assert path is not None, f"{key}: no file within 120 s (error shown: {error!r})"
        assert Path(path).stat().st_size > 1000


def test_figure_downloads_on_tune_and_see_while_its_path_is_fitted(page, busy):
    # Zoo's Tune & see fits its m path in the background (CPU-bound, in the server's process) from its first run.
    open_app(page, "/clusters?dataset=zoo&k=4")
    for key in ("fig_masks_svg", "fig_masks_png"):
        button = page.locator(f".st-key-{key} [data-testid='stBaseButton-secondary']").first
        seconds, path, error = _download(page, button, 120)
        print(key, round(seconds, 1), path, error)
        assert path is not None, f"{key}: no file within 120 s (error shown: {error!r})"


def test_an_image_not_made_in_time_says_why_under_its_button(start_server, page_on, monkeypatch):
    # A deadline no image can meet stands for a server too busy to make one (or a kaleido that never returns).
    monkeypatch.setenv("CRAFT_IMAGE_TIMEOUT_S", "0.01")
    page = page_on(start_server())
    open_app(page, "/?dataset=fig2_numeric&syn_n=120&n_init=1")
    go_to(page, "Export")
    button = page.locator(".st-key-export_craft_cluster_sizes_svg [data-testid='stBaseButton-secondary']").first
    button.click()
    said = page.locator("[data-testid='stDownloadButtonError']").first
    said.wait_for(timeout=30_000)
    assert "was not made within 0.01 s" in said.inner_text() and "camera" in said.inner_text()


# ---------------------------------------------------------------------------
# The Back button (item 8)


def _choose(page, key: str, option: str) -> None:
    page.locator(f".st-key-{key} input[role='combobox']").click()
    page.locator("[role='option']", has_text=option).first.click()
    wait_idle(page)


def _view(page) -> dict:
    """What is on screen: the address, the sidebar's dataset, k and m, and the fit's K in the summary."""
    summary = page.locator("[data-testid='stMain']").inner_text()
    found = re.search(r"K\s*=\s*(\d+)", summary)
    return {"query": page.evaluate("() => location.search"), "path": page.evaluate("() => location.pathname"),
            "dataset": page.locator(".st-key-dataset input[role='combobox']").input_value(),
            "k": page.locator(".st-key-k input").input_value(),
            "m": page.locator(".st-key-m input[type=range]").get_attribute("value"),
            "K": found.group(1) if found else None}


def test_back_shows_the_view_that_was_on_screen_and_the_app_adds_no_half_written_entry(page, new_page):
    open_app(page, "/clusters")
    entries = page.evaluate("() => history.length")
    set_number(page, "k", 4)
    _choose(page, "dataset", "zoo")  # its presets: k = 7, m = 0.5, set by the app
    set_number(page, "k", 5)
    page.locator(".st-key-m input[type=range]").focus()
    page.keyboard.press("ArrowRight")
    wait_idle(page)
    set_number(page, "k", 6)
    # Five changes of the parameters on one page: no entry Back could not show again (there were two: zoo at k = 4).
    assert page.evaluate("() => history.length") == entries
    left = _view(page)
    assert (left["dataset"], left["k"], left["m"]) == ("zoo", "6", "0.51")
    go_to(page, "Evaluate")
    set_number(page, "k", 3)
    assert page.evaluate("() => history.length") == entries + 1  # one entry per page
    page.go_back()
    wait_idle(page)
    page.wait_for_function("() => location.pathname.endsWith('/clusters')")
    wait_idle(page)
    back = _view(page)
    # Tune & see as it was left: the same parameters and the same fit.
    assert back == left, (back, left)
    # The same link in a fresh tab shows the same view.
    fresh = new_page()
    open_app(fresh, back["path"] + back["query"])
    assert _view(fresh) == left


# ---------------------------------------------------------------------------
# Readability at 1280 × 720 (item 13)

_OVERLAP_JS = """
(plot) => {
  const box = (el) => el.getBoundingClientRect();
  const bar = box(plot.querySelector('.modebar-container .modebar') || plot.querySelector('.modebar-container'));
  const title = box(plot.querySelector('.gtitle'));
  return {bar: [bar.left, bar.top, bar.right, bar.bottom], title: [title.left, title.top, title.right, title.bottom]};
}
"""


def _overlap(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def test_at_1280_by_720_labels_are_whole_and_the_tool_bar_leaves_titles_alone(page):
    from explorer import services

    page.set_viewport_size({"width": 1280, "height": 720})
    open_app(page, "/?dataset=fig2_numeric&syn_n=120&n_init=1")
    go_to(page, "Export")
    label = page.locator(".st-key-dl_model [data-testid='stMarkdownContainer']").first
    assert label.evaluate("(el) => el.scrollWidth <= el.clientWidth + 1"), label.inner_text()
    go_to(page, "Score new rows")
    table = services.load_example("fig2_numeric", n_samples=120, seed=0).table.copy()
    numbers = table.select_dtypes("number").columns
    table.loc[:4, numbers] = table.loc[:4, numbers] * 40
    page.locator(".st-key-score_uploader input[type=file]").set_input_files(
        files=[{"name": "new.csv", "mimeType": "text/csv", "buffer": table.to_csv(index=False).encode()}])
    page.wait_for_selector(".st-key-score_margins .js-plotly-plot .gtitle", timeout=120_000)
    wait_idle(page)
    for key in ("score_margins", "score_sizes"):  # the two half-width charts
        plot = page.locator(f".st-key-{key} .js-plotly-plot").first
        plot.scroll_into_view_if_needed()
        plot.hover(position={"x": 200, "y": 200})
        page.wait_for_timeout(400)
        boxes = plot.evaluate(_OVERLAP_JS)
        assert boxes["bar"][2] > boxes["bar"][0], "the tool bar is not shown on hover"
        assert not _overlap(boxes["bar"], boxes["title"]), (key, boxes)


# ---------------------------------------------------------------------------
# The scrubber's picture (item 9)


def test_the_scrubbers_camera_saves_the_frame_on_screen_without_the_slider(page):
    from test_path_scrubber import SCRUBBER, _step_position

    open_app(page, "/clusters?dataset=zoo&k=4&view=Mask+path")
    page.wait_for_selector(SCRUBBER, timeout=180_000)
    wait_idle(page)
    page.locator(SCRUBBER).scroll_into_view_if_needed()
    page.mouse.click(*_step_position(page, "0.1"))
    page.wait_for_function("(s) => document.querySelector(s).querySelector('.gtitle').textContent"
                           ".startsWith('The fit at m = 0.1:')", arg=SCRUBBER, timeout=10_000)
    title = page.locator(SCRUBBER).locator(".gtitle").first.text_content()
    page.locator(SCRUBBER).hover()
    camera = page.locator(f"{SCRUBBER} .modebar-btn[data-title^='Download the frame on screen']").first
    with page.expect_download(timeout=60_000) as info:
        camera.click()
    assert info.value.suggested_filename == "craft_path_fit_m_on_screen.svg"
    svg = Path(info.value.path()).read_text(encoding="utf-8")
    assert title.replace("&", "&amp;") in svg or title in svg  # the frame shown, not the first one (m = 0.5)
    assert "The fit at m = 0.5:" not in svg
    assert "slider" not in svg  # no slider group drawn into the picture
