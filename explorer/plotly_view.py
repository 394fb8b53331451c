"""The app's figures, drawn in the browser by a partial bundle of plotly.js.

``st.plotly_chart`` draws with a 4.7 MB file of Streamlit's that holds all of
plotly.js: a new visitor's browser spends about a second evaluating it before
the first chart appears (measured in Chromium: 1.9 s to load and evaluate the
full plotly.js against 0.75 s for its cartesian bundle). Every figure of
this app is made of bars, heatmaps, histograms and scatter traces, which
plotly.js's *cartesian* bundle (1.5 MB, MIT; ``static/plotly-cartesian.min.js``,
the same plotly.js version as the one plotly.py writes its figures for)
draws the same. A Streamlit component (``st.components.v2``, in the page,
no iframe) loads that file once per page from Streamlit's static files
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

# The module loads the bundle once per page and keeps each plot's last drawn
# JSON, so that a rerun that sends the same figure leaves the plot (and the
# scrubber's position) alone. Relative to the server's root as Streamlit
# knows it (explorer.serve names it on page links), else to the page.
_DRAW_JS = """
const BUNDLE = %(bundle)s;
let plotly = null;
const drawn = new WeakMap();
const queued = new WeakMap();

function loadPlotly() {
  if (plotly === null) {
    plotly = window.Plotly ? Promise.resolve(window.Plotly) : new Promise((resolve, reject) => {
      const base = (window.__streamlit && window.__streamlit.BACKEND_BASE_URL) || document.baseURI;
      const script = document.createElement("script");
      script.src = new URL(BUNDLE, base).href;
      script.onload = () => resolve(window.Plotly);
      script.onerror = () => { plotly = null; reject(new Error("could not load " + script.src)); };
      document.head.appendChild(script);
    });
  }
  return plotly;
}

function hasFrames(plot) {
  return Boolean(plot._transitionData && Object.keys(plot._transitionData._frameHash || {}).length);
}

// The camera of a figure with frames (the path scrubber) saves the frame on screen as its still picture: the
// current data and title, the slider left out, laid out as the figure's layout.meta.still says (plotly's own
// camera draws the whole plot, slider included).
function frameCamera(Plotly, options) {
  return {
    name: "toImage", title: "Download the frame on screen (" + (options.format || "png").toUpperCase() + ")",
    icon: Plotly.Icons.camera,
    click: (gd) => {
      const still = gd.layout.meta.still;
      const layout = Object.assign({}, gd.layout, {
        sliders: [], height: still.height,
        margin: Object.assign({}, gd.layout.margin, { b: still.margin_b }),
        title: Object.assign({}, gd.layout.title, { y: still.title_y }),
        legend: Object.assign({}, gd.layout.legend, { y: still.legend_y }),
      });
      return Plotly.downloadImage({ data: gd.data, layout }, {
        format: options.format || "png", filename: options.filename || "newplot", scale: options.scale || 1,
        width: gd._fullLayout.width, height: still.height,
      });
    },
  };
}

function configOf(Plotly, figure, text) {
  const config = JSON.parse(text);
  const still = figure.frames && figure.frames.length && figure.layout.meta && figure.layout.meta.still;
  if (still) {
    config.modeBarButtonsToRemove = (config.modeBarButtonsToRemove || []).concat(["toImage"]);
    config.modeBarButtonsToAdd = (config.modeBarButtonsToAdd || []).concat([frameCamera(Plotly, config.toImageButtonOptions || {})]);
  }
  return config;
}

// Draws of one plot run one after another, and only the latest figure is drawn: two overlapping draws
// (a rerun that sends a new figure while the last one is still being drawn) mixed the two figures' frames.
function draw(plot, spec) {
  const previous = queued.get(plot) || Promise.resolve();
  const next = previous.then(() => loadPlotly()).then((Plotly) => {
    if (drawn.get(plot) !== spec) return undefined;
    const figure = spec.parsed;
    const whole = { data: figure.data, layout: figure.layout, frames: figure.frames || [], config: configOf(Plotly, figure, spec.config) };
    // A figure with frames (the path scrubber), or one replacing it, is drawn anew: its frames and slider
    // must not be merged into the last figure's.
    return (whole.frames.length || hasFrames(plot)) ? Plotly.newPlot(plot, whole) : Plotly.react(plot, whole);
  }).catch((error) => {
    drawn.delete(plot);
    plot.textContent = "The chart could not be drawn: " + error.message;
  });
  queued.set(plot, next);
}

// A chart that reports clicks (data.clicks) sends the clicked point to Python as the trigger "click": its trace,
// x, y, customdata and point number (a mask cell to pin, a projection's row to link). Listeners are set again
// after each draw: Plotly.newPlot purges them.
function listen(plot) {
  if (!plot.on) return;
  if (!plot.__craftClick) {
    plot.__craftClick = (event) => {
      const point = event && event.points && event.points[0];
      if (!point || !plot.__craftTrigger) return;
      plot.__craftTrigger("click", {
        curve: point.curveNumber, x: point.x === undefined ? null : String(point.x),
        y: point.y === undefined ? null : String(point.y),
        customdata: point.customdata === undefined ? null : point.customdata, point: point.pointNumber,
        nonce: Date.now(),
      });
    };
  }
  if (plot.removeListener) plot.removeListener("plotly_click", plot.__craftClick);
  plot.on("plotly_click", plot.__craftClick);
}

export default function ({ parentElement, data, setTriggerValue }) {
  let plot = parentElement.querySelector(":scope > .craft-plot");
  if (plot === null) {
    plot = document.createElement("div");
    plot.className = "craft-plot";
    parentElement.appendChild(plot);
  }
  const last = drawn.get(plot);
  if (last === undefined || last.figure !== data.figure || last.config !== data.config) {
    const figure = JSON.parse(data.figure);
    // The figure's height before it is drawn: the page lays out around it at once (Plotly's default is 450).
    plot.style.height = ((figure.layout && figure.layout.height) || 450) + "px";
    const spec = { figure: data.figure, config: data.config, parsed: figure };
    drawn.set(plot, spec);
    draw(plot, spec);
  }
  plot.__craftTrigger = data.clicks ? setTriggerValue : null;
  if (data.clicks) (queued.get(plot) || Promise.resolve()).then(() => listen(plot));
  return () => {
    drawn.delete(plot);
    if (window.Plotly) window.Plotly.purge(plot);
  };
}
"""


@functools.cache
def theme() -> dict:
    """The Plotly template every figure of the app is drawn with."""
    return json.loads(THEME.read_text(encoding="utf-8"))


#: Plotly's tool bar, shown on hover at the top right, sits under the title's line (12-34 px from the top; the
#: figures leave 80 px or more above the plot, craft.plots._finish), not on it: it covered the end of a
#: half-width chart's title ("How sure each assignment is: cost m…").
_CSS = ".craft-plot .modebar-container { top: 38px !important; }"


@functools.cache
def _component():
    return st.components.v2.component("craft_chart", js=_DRAW_JS % {"bundle": json.dumps(BUNDLE_URL)}, css=_CSS,
                                      isolate_styles=False)


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
