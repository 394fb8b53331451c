"""Steering in Chromium (issue 32): a click on a mask cell pins it and the mask refits; two rows of different
clusters linked end in one cluster; undo; the shared link reopens the same steered fit in a fresh context."""

from __future__ import annotations

import json
import re

import pytest
from test_flows import RUN_TIMEOUT_MS, assert_clean, mask_figure, open_app, screenshot, wait_idle

from benchmarks.bench_browser import CELL_JS, NAV_LINKS, REFINED  # CELL_JS: a mask cell's place on the screen

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

_PINS_JS = """() => {
  const graph = document.querySelector('.st-key-fig_masks .js-plotly-plot');
  return graph.data.filter((d) => String(d.name).startsWith('pinned')).map((d) => [d.name, Array.from(d.x), Array.from(d.y)]);
}"""


def _tune_and_see(page) -> None:
    page.locator(NAV_LINKS, has_text="Tune & see").first.click()
    page.wait_for_selector(REFINED, timeout=RUN_TIMEOUT_MS)
    page.wait_for_selector(".st-key-fig_masks .js-plotly-plot", timeout=RUN_TIMEOUT_MS)
    wait_idle(page)


def _cell(figure, row: int, column: int) -> bool:
    return bool(figure["z"][row][column])


def test_pin_a_cell_link_rows_undo_and_share(page, new_page):
    page.set_viewport_size({"width": 1280, "height": 900})
    open_app(page, "/?dataset=fig1_binary&n_init=1")
    _tune_and_see(page)
    before = mask_figure(page)
    # A cell of the first cluster row that the fit leaves out: pinned on, the refit must select it.
    column = next(j for j, on in enumerate(before["z"][0]) if not on)
    feature, row = before["x"][column], before["y"][0]
    point = page.evaluate(CELL_JS, [feature, row])
    page.mouse.click(point["x"], point["y"])
    after = mask_figure(page, until=lambda figure: _cell(figure, 0, column))
    wait_idle(page)
    assert page.evaluate(_PINS_JS) == [["pinned on (1)", [feature], [row]]]
    assert sum(map(sum, after["z"])) == sum(map(sum, before["z"]))  # the budget holds: another feature left
    assert "steer=p" in page.url
    assert page.locator(".st-key-steer_summary").inner_text().startswith("Steered (1 action(s)")

    # Two rows of different clusters, picked by number, put together.
    picked = page.locator(".st-key-steer_picked")
    for value in ("0", "299"):
        page.locator(".st-key-steer_row_input input").fill(value)
        page.locator(".st-key-steer_row_input input").press("Enter")
        wait_idle(page)
        page.locator(".st-key-steer_pick button").click()
        wait_idle(page)
    clusters = [int(c) for c in re.findall(r"cluster (\d+)", picked.inner_text())]
    assert len(clusters) == 2 and clusters[0] != clusters[1], picked.inner_text()
    page.locator(".st-key-steer_must button").click()
    wait_idle(page)
    together = page.locator(".st-key-steer_panel").inner_text()
    found = re.search(r"rows 0 and 299 together \(now in clusters (\d+) and (\d+)\)", together)
    assert found and found.group(1) == found.group(2), together
    assert "What changed:" in page.locator(".st-key-steer_price").inner_text()
    shared = page.url
    screenshot(page, "steer_it_1280x720", focus=".st-key-steer_panel")
    steered = mask_figure(page)

    # The shared link in a fresh context: the same steered fit (masks and pins).
    other = new_page()
    other.set_viewport_size({"width": 1280, "height": 900})
    open_app(other, "/" + shared.split("/", 3)[-1])
    wait_idle(other)
    other.wait_for_selector(".st-key-fig_masks .js-plotly-plot", timeout=RUN_TIMEOUT_MS)
    assert mask_figure(other, until=lambda figure: figure["z"] == steered["z"])["y"] == steered["y"]
    assert other.evaluate(_PINS_JS) == page.evaluate(_PINS_JS)
    assert re.search(r"rows 0 and 299 together \(now in clusters (\d+) and \1\)",
                     other.locator(".st-key-steer_panel").inner_text())
    assert_clean(other)

    # Undo twice: the link, then the pin, leave; the mask is the unsteered fit's again.
    page.locator(".st-key-steer_undo button").click()
    wait_idle(page)
    assert "rows 0 and 299 together" not in page.locator(".st-key-steer_panel").inner_text()
    page.locator(".st-key-steer_undo button").click()
    wait_idle(page)
    mask_figure(page, until=lambda figure: figure["z"] == before["z"])
    assert page.evaluate(_PINS_JS) == [] and "steer=" not in page.url
    page.locator(".st-key-steer_redo button").click()
    mask_figure(page, until=lambda figure: _cell(figure, 0, column))
    wait_idle(page)
    # The same cell clicked again: pinned off (its pin replaced in the list), then free (the list empty).
    for expected in ([["pinned off (1)", [feature], [row]]], []):
        point = page.evaluate(CELL_JS, [feature, row])
        page.mouse.click(point["x"], point["y"])
        wait_idle(page)
        page.wait_for_function(f"() => JSON.stringify(({_PINS_JS})()) === {json.dumps(json.dumps(expected, separators=(',', ':')))}",
                               timeout=RUN_TIMEOUT_MS)
        assert page.evaluate(_PINS_JS) == expected
    assert "No steering yet." in page.locator(".st-key-steer_panel").inner_text() and "steer=" not in page.url
    assert_clean(page)


_POINT_JS = """() => {
  const graph = document.querySelector('.st-key-fig_projection .js-plotly-plot');
  const trace = graph._fullData[0];
  const xa = graph._fullLayout.xaxis, ya = graph._fullLayout.yaxis;
  const box = graph.getBoundingClientRect();
  return {x: box.left + xa._offset + xa.d2p(trace.x[0]), y: box.top + ya._offset + ya.d2p(trace.y[0])};
}"""


def test_a_click_on_the_projection_picks_its_row(page):
    page.set_viewport_size({"width": 1280, "height": 900})
    open_app(page, "/?dataset=fig1_binary&n_init=1")
    _tune_and_see(page)
    page.get_by_role("tab", name="Projection").click()
    page.wait_for_selector(".st-key-fig_projection .js-plotly-plot .main-svg", timeout=RUN_TIMEOUT_MS)
    wait_idle(page)
    point = page.evaluate(_POINT_JS)
    page.mouse.click(point["x"], point["y"])
    wait_idle(page)
    picked = page.locator(".st-key-steer_picked")
    # Rows of Figure 1(a) share coordinates: the click picks one of the rows drawn there, of the first trace's cluster.
    picked.filter(has_text=re.compile(r"Rows picked: \d+ \(cluster 0\)")).wait_for(timeout=RUN_TIMEOUT_MS)
    ring = page.evaluate("() => document.querySelector('.st-key-fig_projection .js-plotly-plot').data"
                         ".filter((d) => String(d.name).startsWith('picked')).length")
    assert ring == 1
    assert_clean(page)
