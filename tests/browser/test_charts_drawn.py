"""The app's charts in Chromium: drawn by the vendored cartesian plotly.js, in Streamlit's own chart theme.

``explorer.plotly_view`` replaces ``st.plotly_chart`` (whose file holds all
of plotly.js) by a component that draws each figure with the 1.5 MB cartesian
bundle. These check what a visitor gets from that: the chart is drawn by that
bundle, Streamlit's Plotly file is never fetched, and the theme the figures
carry is the one a bare ``st.plotly_chart`` resolves to in the app's light
theme, so the charts look as Streamlit's would.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import pytest

from test_flows import assert_charts_laid_out

from explorer import plotly_view

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

#: A bare page with one chart of Streamlit's.
BARE_CHART = """
import plotly.graph_objects as go
import streamlit as st

st.plotly_chart(go.Figure(go.Bar(y=[1, 2, 3])))
"""


def test_a_chart_is_drawn_by_the_cartesian_bundle_and_streamlits_plotly_file_is_never_fetched(page):
    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url))
    page.goto("/clusters?view=Feature+masks")
    page.wait_for_selector(".st-key-fig_masks .js-plotly-plot .main-svg", timeout=120_000)
    drawn = page.evaluate("""() => {
      const plot = document.querySelector('.st-key-fig_masks .js-plotly-plot');
      return {version: window.Plotly.version, font: plot._fullLayout.font.family, title: plot._fullLayout.title.text,
              colorway: plot._fullLayout.colorway};
    }""")
    header = plotly_view.BUNDLE.read_text(encoding="utf-8")[:200]
    assert f"plotly.js (cartesian - minified) v{drawn['version']}" in header
    assert "Source Sans" in drawn["font"] and drawn["title"]
    assert drawn["colorway"] == plotly_view.theme()["layout"]["colorway"]
    assert any(url.endswith(f"/app/static/{plotly_view.BUNDLE.name}") for url in asked)
    assert not [url for url in asked if "PlotlyChart" in url], "Streamlit's own Plotly file was fetched"


def test_the_charts_theme_is_what_streamlits_own_chart_resolves_to_in_the_apps_theme(browser):
    from benchmarks.bench_browser import Server

    script = Path(tempfile.mkdtemp(prefix="craft-bare-chart-")) / "bare.py"
    script.write_text(BARE_CHART, encoding="utf-8")
    # Run from the checkout, as every test server is: Streamlit reads the app's settings (its theme) there.
    server = Server([sys.executable, "-m", "streamlit", "run", str(script)]).start()
    try:
        context = browser.new_context(base_url=server.url, viewport={"width": 1280, "height": 720})
        page = context.new_page()
        page.goto("/")
        page.wait_for_selector("[data-testid='stPlotlyChart'] .js-plotly-plot .main-svg", timeout=120_000)
        resolved = page.evaluate("() => JSON.stringify(document.querySelector('.js-plotly-plot').layout.template)")
        context.close()
    finally:
        server.stop()
    assert json.loads(resolved) == plotly_view.theme()


def test_every_chart_takes_its_height_in_the_page_so_nothing_below_it_is_drawn_over_it(page):
    # A cluster card: its chart is followed by its download buttons and text (a card whose chart changes
    # height, as another cluster's does, is checked in test_card_flow.py).
    page.goto("/cards")
    page.wait_for_selector(".craft-plot .main-svg", timeout=120_000)
    assert_charts_laid_out(page)
