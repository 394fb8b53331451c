"""The app's figures as the browser and the exports get them: the vendored plotly.js, the theme, the JSON.

The browser side (the bundle draws, the theme equals what Streamlit's own
chart resolves to) is in ``tests/browser/test_charts_drawn.py``.
"""

from __future__ import annotations

import json
import re

import plotly
import plotly.graph_objects as go
import pytest
import streamlit  # noqa: F401 - sets Plotly's default template to Streamlit's, as in the app

from craft import plots
from explorer import figure_export, plotly_view

#: Streamlit's template writes colours as placeholders (#000001 ...) that only its own chart replaces.
PLACEHOLDER = re.compile(r'"#0000[0-4]\d"')


def test_the_vendored_plotly_js_is_the_major_version_plotly_py_writes_its_figures_for():
    # A plotly.py of another major version (the app extra asks for 7) writes for another plotly.js: re-vendor.
    header = plotly_view.BUNDLE.read_text(encoding="utf-8")[:200]
    vendored = re.search(r"plotly\.js \(cartesian - minified\) v(\d+)\.\d+\.\d+\n", header)
    assert vendored and vendored[1] == plotly.offline.get_plotlyjs_version().split(".")[0], header
    assert (plotly_view.BUNDLE.parent / "plotly-cartesian.LICENSE").read_text().startswith("MIT License")


def test_a_figure_goes_to_the_browser_as_plotly_py_writes_it_with_the_apps_theme_for_streamlits_placeholders():
    figure = plots.fig_feature_masks(_zoo_model())
    assert PLACEHOLDER.search(figure.to_json()), "the app's figures carry Streamlit's placeholder template"
    sent = plotly_view.figure_json(figure)
    assert not PLACEHOLDER.search(sent)
    written, drawn = json.loads(figure.to_json()), json.loads(sent)
    assert drawn["layout"].pop("template") == plotly_view.theme()
    written["layout"].pop("template")
    assert drawn == written


def test_an_exported_image_has_the_colours_the_browser_shows():
    if not figure_export.server_export_available():
        pytest.skip("kaleido or a Chromium is not installed: the figures' toolbar camera is the export route")
    bars = go.Figure(go.Bar(y=[1, 2, 3]))
    svg = figure_export.figure_image(bars, "svg").decode()
    fills = set(re.findall(r"fill: (rgb\([^)]*\))", svg))
    first = plotly_view.theme()["layout"]["colorway"][0]
    assert f"rgb({', '.join(str(int(first[i:i + 2], 16)) for i in (1, 3, 5))})" in fills, fills
    assert "rgb(0, 0, 1)" not in fills  # Streamlit's placeholder for its first colour


def _zoo_model():
    from craft import CRAFT, datasets

    X, _ = datasets.load("zoo")
    return CRAFT(k=3, n_init=1, random_state=0).fit(X)
