"""The app's figures, drawn in the browser by a partial bundle of plotly.js.

``st.plotly_chart`` draws with a 4.7 MB file of Streamlit's that holds all of
plotly.js: a new visitor's browser spends about a second evaluating it before
the first chart appears (measured in Chromium: 1.9 s to load and evaluate the
full plotly.js against 0.75 s for its cartesian bundle). Every figure of
this app is made of bars, heatmaps, histograms and scatter traces, which
plotly.js's *cartesian* bundle (1.5 MB, MIT; ``static/plotly-cartesian.min.js``,
the same plotly.js version as the one plotly.py writes its figures for)
draws the same (``.ci/vendor_plotly.py`` fetches it and records its sha256).
A Streamlit component (``st.components.v2``, in the page, no iframe; its
JavaScript is ``static/plotly_view.js``) loads that file once per page from Streamlit's static files
(``server.enableStaticServing``) and draws each figure from its JSON as
plotly.py writes it, frames (the path scrubber) and config (the camera's
file name) included: updated in place with ``Plotly.react``, left alone
when a rerun sends the same figure, drawn anew (``Plotly.newPlot``) when it
has frames or replaces one that had.

Streamlit's own chart applies its theme in the browser, replacing the
placeholder colours of its ``"streamlit"`` template. The figures here carry
that theme's result instead (``chart_theme.json``: the template a bare
``st.plotly_chart`` resolves to in the app's light theme, read in Chromium),
so they look as they did. The app runs in the light theme
(``.streamlit/config.toml``) that this template belongs to.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import plotly.graph_objects as go
import plotly.io as pio
import streamlit as st

#: The vendored bundle, under the folder Streamlit serves as ``app/static/``.
BUNDLE = Path(__file__).resolve().parent.parent / "static" / "plotly-cartesian.min.js"
#: Where a page's browser fetches the bundle, relative to the app's root.
BUNDLE_URL = f"app/static/{BUNDLE.name}"
THEME = Path(__file__).with_name("chart_theme.json")

#: The chart component's JavaScript (a file of its own, so that it is read as JavaScript, not as a string).
DRAW_JS = Path(__file__).resolve().parent.parent / "static" / "plotly_view.js"


def draw_js() -> str:
    """The component's module: the bundle's address, then ``static/plotly_view.js``."""
    return f"const BUNDLE = {json.dumps(BUNDLE_URL)};\n" + DRAW_JS.read_text(encoding="utf-8")


@functools.cache
def theme() -> dict:
    """The Plotly template every figure of the app is drawn with."""
    return json.loads(THEME.read_text(encoding="utf-8"))


#: Plotly's tool bar, shown on hover at the top right, sits under the title's line (12-34 px from the top; the
#: figures leave 80 px or more above the plot, craft.plots._style._finish), not on it: it covered the end of a
#: half-width chart's title ("How sure each assignment is: cost m…").
_CSS = ".craft-plot .modebar-container { top: 38px !important; }"


@functools.cache
def _component():
    return st.components.v2.component("craft_chart", js=draw_js(), css=_CSS, isolate_styles=False)


def figure_json(figure: go.Figure) -> str:
    """``figure`` as plotly.js draws it here: its JSON with the app's template."""
    spec = figure.to_dict()
    spec["layout"]["template"] = theme()
    return pio.json.to_json_plotly(spec)


def show(figure: go.Figure, *, key: str, config: dict, container=None, on_click=None) -> None:
    """Draw ``figure`` with ``config`` (Plotly's) in ``container`` (default: where the page is).

    ``on_click(point)``, where given, is called (as a widget callback, before the rerun) with the clicked
    point: a dict of ``curve``, ``x``, ``y`` (as text), ``customdata`` and ``point``.
    """
    config = {**config, "responsive": True}
    data = {"figure": figure_json(figure), "config": json.dumps(config), "clicks": on_click is not None}
    extra = {}
    if on_click is not None:
        extra["on_click_change"] = lambda: on_click((st.session_state.get(key) or {}).get("click"))
    mount = functools.partial(_component(), key=key, data=data, **extra)
    if container is None or container is st:
        mount()
    else:
        with container:
            mount()
