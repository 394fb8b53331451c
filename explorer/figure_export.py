"""Every figure of the app as SVG and PNG: beside the figure and on the Export page.

Two routes, both offline:

* in the browser, the figure's toolbar camera (Plotly's client-side
  ``toImage``) saves an SVG (:func:`chart_config`), so a figure can always be
  saved, whatever the server has installed;
* on the server, the two buttons under each figure render it with kaleido,
  which drives the machine's own Chromium (no download at run time). The image
  is made only when a button is clicked (a deferred ``download_button``).
  Where kaleido or a Chromium is missing, the buttons are replaced by a line
  that points to the camera.
"""

from __future__ import annotations

import functools
import json
import shutil
from collections.abc import Callable

import plotly.graph_objects as go
import plotly.io as pio
import streamlit as st

from . import plotly_view

#: Executables kaleido (through choreographer) can drive.
_BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
#: Pixel ratio of PNG exports (sharp on a projector or a slide).
PNG_SCALE = 2
#: Size of a static export when the figure does not fix one (a 16:9 slide).
DEFAULT_SIZE = (1280, 720)


@functools.cache
def server_export_available() -> bool:
    """Whether kaleido and a Chromium it can drive are installed."""
    try:
        import kaleido  # noqa: F401 - only its presence is checked
    except ImportError:
        return False
    return any(shutil.which(name) for name in _BROWSERS)


def chart_config(name: str) -> dict:
    """Plotly config of an app figure: the toolbar camera saves ``name``.svg."""
    return {
        "displaylogo": False,
        "toImageButtonOptions": {"format": "svg", "filename": name, "scale": PNG_SCALE},
    }


@functools.lru_cache(maxsize=32)
def static_image(spec: str, fmt: str) -> bytes:
    """``spec`` (a figure's JSON) rendered as ``fmt`` ("svg" or "png") by kaleido.

    Sent as it is, not re-validated by plotly.py: the theme holds values
    plotly.js takes and plotly.py's validators refuse (``"transparent"``).
    """
    figure = json.loads(spec)
    layout = figure.get("layout", {})
    width = layout.get("width") or DEFAULT_SIZE[0]
    height = layout.get("height") or DEFAULT_SIZE[1]
    return pio.to_image(figure, format=fmt, width=width, height=height, scale=PNG_SCALE if fmt == "png" else 1,
                        validate=False)


def figure_image(figure: go.Figure, fmt: str) -> bytes:
    """``figure`` as the app draws it (its theme, :func:`plotly_view.figure_json`), rendered as ``fmt``."""
    return static_image(plotly_view.figure_json(figure), fmt)


def download_buttons(figure: go.Figure | Callable[[], go.Figure], name: str, key: str, container=None) -> None:
    """SVG and PNG buttons for ``figure`` (files ``name``.svg / .png), made on click.

    ``figure`` may be a function that makes it: then the figure too is made
    only on a click (the Export page lists every figure without drawing one).
    """
    container = container if container is not None else st
    if not server_export_available():
        container.caption("Save this figure with the camera icon of its toolbar (SVG).")
        return
    # The figure's JSON only when a button is clicked: serialising it on every
    # run cost as much as drawing it (0.07 s for the data heatmap).
    # A row sized to the buttons (fixed column shares cut their labels to "S.." in a half-width column).
    made = figure if callable(figure) else (lambda: figure)
    row = container.container(horizontal=True)
    row.download_button(
        "SVG", lambda: figure_image(made(), "svg"), file_name=f"{name}.svg", mime="image/svg+xml",
        key=f"{key}_svg", icon=":material/download:", help="The figure as a vector image (slides, papers).",
    )
    row.download_button(
        "PNG", lambda: figure_image(made(), "png"), file_name=f"{name}.png", mime="image/png",
        key=f"{key}_png", icon=":material/download:", help=f"The figure as a {PNG_SCALE}× PNG image.",
    )


def chart(figure: go.Figure, *, key: str, name: str, camera_name: str | None = None, container=None,
          export: go.Figure | Callable[[], go.Figure] | None = None) -> None:
    """Show ``figure`` with its SVG/PNG downloads (files ``name``) under it.

    ``camera_name`` (default ``name``) is the file the toolbar camera saves.
    ``export`` (default ``figure``) is the figure the buttons save, where the
    one shown is not a picture (the path scrubber's slider and frames).
    The browser redraws a figure from scratch whenever its figure or config
    changes, and leaves it alone otherwise: a view whose ``name`` changes
    more often than its figure (Teach's iteration steps) keeps a fixed one.
    """
    plotly_view.show(figure, key=key, config=chart_config(camera_name or name), container=container)
    download_buttons(figure if export is None else export, name, key, container)
