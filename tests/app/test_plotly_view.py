"""The app's figures as the browser and the exports get them: the vendored plotly.js, the theme, the JSON.

The browser side (the bundle draws, the theme equals what Streamlit's own
chart resolves to) is in ``tests/browser/test_charts_drawn.py``.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import plotly
import plotly.graph_objects as go
import pytest
import streamlit  # noqa: F401 - sets Plotly's default template to Streamlit's, as in the app

from craft import plots
from explorer import figure_export, plotly_view

# The re-vendor script, read as a module: its record is the one the test compares with.
_SPEC = importlib.util.spec_from_file_location("vendor_plotly", Path(__file__).resolve().parents[2] / ".ci" / "vendor_plotly.py")
assert _SPEC is not None and _SPEC.loader is not None
vendor_plotly = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(vendor_plotly)

#: Streamlit's template writes colours as placeholders (#000001 ...) that only its own chart replaces.
PLACEHOLDER = re.compile(r'"#0000[0-4]\d"')


def test_the_vendored_plotly_js_is_the_exact_version_plotly_py_writes_its_figures_for_and_the_recorded_file():
    # plotly.py writes its figures for one plotly.js version (a minor one adds attributes, a patch fixes drawing):
    # another one fails here until .ci/vendor_plotly.py is run again, which records what it fetched.
    header = plotly_view.BUNDLE.read_text(encoding="utf-8")[:200]
    vendored = re.search(r"plotly\.js \(cartesian - minified\) v(\d+\.\d+\.\d+)\n", header)
    assert vendored and vendored[1] == plotly.offline.get_plotlyjs_version(), header
    record = json.loads((plotly_view.BUNDLE.parent / "plotly-cartesian.json").read_text(encoding="utf-8"))
    assert record == vendor_plotly.record(plotly_view.BUNDLE.read_bytes(), vendored[1]), (
        "static/plotly-cartesian.min.js is not the file .ci/vendor_plotly.py recorded: run it again")
    assert (plotly_view.BUNDLE.parent / "plotly-cartesian.LICENSE").read_text().startswith("MIT License")


def test_the_charts_javascript_is_a_file_of_its_own_with_the_bundles_address_put_before_it():
    code = plotly_view.draw_js()
    first, rest = code.split("\n", 1)
    assert first == f"const BUNDLE = {json.dumps(plotly_view.BUNDLE_URL)};"
    assert rest == plotly_view.DRAW_JS.read_text(encoding="utf-8") and "export default function" in rest
    node = shutil.which("node")
    if node is None:
        pytest.skip("no node to parse the module with")
    with tempfile.TemporaryDirectory() as folder:
        module = Path(folder) / "plotly_view.mjs"
        module.write_text(code, encoding="utf-8")
        checked = subprocess.run([node, "--check", str(module)], capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stderr


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
