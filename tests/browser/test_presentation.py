"""The app in front of a room, in a real headless Chromium: a 1280 x 720 window.

No Deploy button, tick labels of at least 14 px, the mask heatmap above the
fold, the approximate budget's thresholds in view, SVG/PNG downloads beside the
figures, the agreement with the planted truth on the page, the ρ
demonstration, and links that reopen the right view (or say why they cannot).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_flows import (
    APP_IDLE,
    RUN_TIMEOUT_MS,
    alerts,
    assert_clean,
    captions,
    go_to,
    slider_value,
    wait_idle,
)
from benchmarks.bench_browser import NAV_LINKS

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

LECTURE_VIEWPORT = {"width": 1280, "height": 720}


@pytest.fixture
def room(browser, app_server):
    """A page in a fresh session, in a projector-sized window."""
    context = browser.new_context(accept_downloads=True, viewport=LECTURE_VIEWPORT, base_url=app_server.url)
    context.set_default_timeout(RUN_TIMEOUT_MS)
    page = context.new_page()
    page.craft_errors = []
    page.on("pageerror", lambda error: page.craft_errors.append(str(error)))
    yield page
    context.close()


def open_view(page, path: str) -> None:
    page.goto(path)
    page.wait_for_selector(NAV_LINKS, timeout=RUN_TIMEOUT_MS)
    wait_idle(page)
    page.wait_for_selector(APP_IDLE, timeout=RUN_TIMEOUT_MS)


def wait_for_chart(page, key: str) -> None:
    page.wait_for_selector(f".st-key-{key} .js-plotly-plot g.xtick text", state="attached", timeout=RUN_TIMEOUT_MS)


_TICK_SIZES_JS = """
(key) => Array.from(document.querySelectorAll(`.st-key-${key} .js-plotly-plot g.xtick text, `
                                              + `.st-key-${key} .js-plotly-plot g.ytick text`))
  .map((t) => parseFloat(getComputedStyle(t).fontSize))
"""


def test_no_deploy_button(room):
    open_view(room, "/clusters")
    header = room.locator("[data-testid='stHeader']")
    assert header.get_by_text("Deploy", exact=True).count() == 0
    assert room.locator("[data-testid='stAppDeployButton']").count() == 0
    assert_clean(room)


def test_ticks_are_at_least_14px_and_the_heatmap_is_above_the_fold(room):
    open_view(room, "/clusters")
    wait_for_chart(room, "fig_masks")
    sizes = room.evaluate(_TICK_SIZES_JS, "fig_masks")
    assert sizes and min(sizes) >= 14, sizes
    box = room.locator(".st-key-fig_masks .js-plotly-plot").bounding_box()
    assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= LECTURE_VIEWPORT["height"], box
    assert_clean(room)


def test_approximate_budget_shows_its_thresholds_in_the_sidebar(room):
    open_view(room, "/clusters?dataset=fig3_categorical")
    sidebar = room.locator("[data-testid='stSidebar']")
    # wait_for: a widget's code can arrive after the page's run has finished on a busy machine.
    sidebar.locator(".st-key-eps_c").wait_for(state="visible")
    sidebar.locator(".st-key-eps_v").wait_for(state="visible")
    # Not inside an expander
    assert sidebar.locator("[data-testid='stExpander'] .st-key-eps_c").count() == 0


def test_agreement_with_the_planted_truth_is_on_the_page(room):
    open_view(room, "/clusters?dataset=fig3_categorical")
    shown = " ".join(alerts(room, "success"))
    assert "3 of 3 clusters matched" in shown and "3 of 3 masks equal" in shown, shown
    assert_clean(room)


def test_figures_download_as_svg_and_png(room, tmp_path):
    open_view(room, "/clusters")
    wait_for_chart(room, "fig_masks")
    for fmt, magic in (("svg", b"<svg"), ("png", b"\x89PNG")):
        button = room.locator(f".st-key-fig_masks_{fmt} button").first
        # The buttons are drawn after the figure, once their own code has arrived (later on a busy machine).
        button.wait_for(state="visible")
        with room.expect_download(timeout=120_000) as info:
            button.click()
        download = info.value
        assert download.suggested_filename == f"craft_feature_masks.{fmt}"
        content = Path(download.path()).read_bytes()
        assert content.lstrip()[: len(magic)] == magic, content[:40]
    assert_clean(room)


def test_a_shared_link_to_an_upload_says_to_upload_again(room):
    open_view(room, "/clusters?dataset=%28uploaded+file%29&k=5")
    shown = " ".join(alerts(room, "error"))
    assert "uploaded table" in shown and "has to be uploaded again" in shown, shown
    assert room.locator(".st-key-fig_masks").count() == 0  # no other dataset's figure instead
    assert_clean(room)


def test_a_dataset_link_applies_the_presets_of_the_list(room):
    open_view(room, "/clusters?dataset=splice")
    assert slider_value(room, "m") == pytest.approx(0.5)  # splice's preset, as when picked from the list


def test_export_link_reopens_the_page_and_tab(room):
    open_view(room, "/clusters?dataset=fig2_numeric&syn_n=90")
    room.get_by_role("tab", name="Data heatmap").click()
    wait_idle(room)
    go_to(room, "Export")
    link = room.locator("[data-testid='stCode'] code").last.inner_text()
    assert re.search(r"/clusters\?", link), link
    assert "view=Data+heatmap" in link and "dataset=fig2_numeric" in link


def test_teach_rho_demonstration_shows_masks_under_both_rules(room):
    open_view(room, "/teach?dataset=fig2_numeric&n_init_auto=false&n_init=1")
    room.wait_for_selector(".st-key-rho_demo_shrink .js-plotly-plot", timeout=180_000)
    shown = captions(room)
    counts = {}
    for mode in ("paper", "shrink"):
        line = next(c for c in shown if c.startswith(f"{mode}: clusters disagree on"))
        counts[mode] = [int(n) for n in re.findall(r"(\d+) feature\(s\) at ρ = ", line)]
    assert all(d > 0 for d in counts["paper"]) and counts["shrink"][0] == 0 and counts["shrink"][-1] > 0, counts
    assert_clean(room)
