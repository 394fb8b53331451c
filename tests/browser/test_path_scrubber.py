"""The mask path's scrubber in Chromium: its slider steps through the stored fits in the browser, with no rerun.

``CRAFT_SCREENSHOTS=1`` writes ``docs/screenshots/path_scrubber.png`` at 1280 × 720 (the README's picture).
"""

from __future__ import annotations

import pytest
from test_flows import open_app, screenshot, wait_idle

from benchmarks.bench_browser import NAV_LINKS, SCRUBBER_STEPS_JS

pytestmark = [pytest.mark.browser, pytest.mark.timeout(240)]

SCRUBBER = ".st-key-fig_scrub_tune .js-plotly-plot"
#: What the scrubber shows now, and what its frame of each value holds (Plotly keeps the frames by name).
_SHOWN_JS = """
(selector) => {
  // An array as the figure's JSON gave it: NumPy's as {dtype, bdata, shape} (Plotly adds its decoded copy once drawn).
  const plain = (v) => (v && v.bdata !== undefined) ? {dtype: v.dtype, bdata: v.bdata, shape: String(v.shape)} : v;
  const plot = document.querySelector(selector);
  const frames = Object.fromEntries(Object.entries(plot._transitionData._frameHash)
    .map(([name, frame]) => [name, {z: plain(frame.data[0].z), sizes: plain(frame.data[1].x),
                                    title: frame.layout.title.text}]));
  return {z: plain(plot.data[0].z), sizes: plain(plot.data[1].x), title: plot.querySelector('.gtitle').textContent,
          ticks: [...plot.querySelectorAll('.yaxislayer-above .ytick text')].map((t) => t.textContent), frames};
}
"""


def _step_position(page, label: str) -> tuple[float, float]:
    """Where a click moves the scrubber's slider to ``label`` (the benchmark's own reading of the slider)."""
    (step,) = [step for step in page.evaluate(SCRUBBER_STEPS_JS) if step["label"] == label]
    return step["x"], step["y"]


def test_the_scrubber_shows_each_stored_fit_without_running_the_page(page):
    sent: list[str] = []
    page.on("websocket", lambda socket: socket.on("framesent", lambda payload: sent.append(str(payload)[:40])))
    # As a user gets there: the example picked by its link, then Tune & see and its Mask path tab.
    open_app(page, "/?dataset=zoo&k=4")
    page.locator(NAV_LINKS, has_text="Tune & see").first.click()
    wait_idle(page)
    page.locator("[data-testid='stTab']", has_text="Mask path").first.click()
    page.wait_for_selector(SCRUBBER, timeout=180_000)  # the m path is fitted in the background, then drawn
    wait_idle(page)
    page.locator(SCRUBBER).scroll_into_view_if_needed()
    shown = page.evaluate(_SHOWN_JS, SCRUBBER)
    assert list(shown["frames"]) == ["0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9"]
    # It opens on the sidebar's m (0.5 for Zoo's preset), the fit on screen.
    assert shown["title"].startswith("The fit at m = 0.5:") and shown["title"] == shown["frames"]["0.5"]["title"]
    before = len(sent)
    for label in ("0.2", "0.8", "0.7"):
        page.mouse.click(*_step_position(page, label))
        page.wait_for_function("([s, label]) => document.querySelector(s).querySelector('.gtitle').textContent"
                               ".startsWith(`The fit at m = ${label}:`)", arg=[SCRUBBER, label], timeout=10_000)
        shown = page.evaluate(_SHOWN_JS, SCRUBBER)
        frame = shown["frames"][label]
        # The drawn heatmap, the bars and the title are the frame's: the fit stored for that m.
        assert shown["z"] == frame["z"] and shown["sizes"] == frame["sizes"]
        assert shown["title"] == frame["title"] and any("cluster" in tick for tick in shown["ticks"])
    assert shown["frames"]["0.7"]["z"] != shown["frames"]["0.2"]["z"], "m = 0.2 and 0.7 select alike on Zoo"
    # Dragged, not only released: the fit under the grip is shown while the button is still down.
    page.mouse.move(*_step_position(page, "0.7"))
    page.mouse.down()
    page.mouse.move(*_step_position(page, "0.3"), steps=8)
    page.wait_for_function("(s) => document.querySelector(s).querySelector('.gtitle').textContent"
                           ".startsWith('The fit at m = 0.3:')", arg=SCRUBBER, timeout=10_000)
    page.mouse.up()
    page.wait_for_timeout(300)
    assert len(sent) == before, f"moving the scrubber sent {sent[before:]} to the server"
    screenshot(page, "path_scrubber", focus=".st-key-fig_scrub_tune")


def _k_path_scrubber(page) -> None:
    """Zoo's Mask path tab at k = 2, its m path drawn, then its k path: the scrubber's figure replaced."""
    page.goto("/clusters?dataset=zoo&k=2&view=Mask+path")
    page.wait_for_function("() => document.body.innerText.includes('The mask path over m')", timeout=180_000)
    page.locator(".st-key-path_knob_tune button", has_text="k").first.click()
    page.wait_for_function("() => document.body.innerText.includes('The mask path over k')", timeout=180_000)
    wait_idle(page)


def test_a_scrubber_whose_figure_is_replaced_steps_through_the_new_figures_fits(page, new_page):
    # Both paths fitted (cached) by a first session, so a second session gets the m path's scrubber and, at
    # once, the k path's: the second figure arrives while the first is still being drawn.
    _k_path_scrubber(page)
    second = new_page()
    _k_path_scrubber(second)
    second.locator(SCRUBBER).scroll_into_view_if_needed()
    wait_idle(second)
    for label in ("3", "5"):
        second.mouse.click(*_step_position(second, label))
        second.wait_for_function("([s, label]) => document.querySelector(s).querySelector('.gtitle').textContent"
                                 ".startsWith(`The fit at k = ${label}:`)", arg=[SCRUBBER, label], timeout=10_000)
    shown = second.evaluate(_SHOWN_JS, SCRUBBER)
    assert list(shown["frames"]) == ["2", "3", "4", "5", "6", "7", "8"]
    assert shown["z"] == shown["frames"]["5"]["z"] and shown["sizes"] == shown["frames"]["5"]["sizes"]
