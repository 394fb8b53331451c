"""Every figure of the app as SVG and PNG: beside the figure and on the Export page.

Two routes, both offline (no network is used; kaleido's default page fetched MathJax from a CDN):

* in the browser, the figure's toolbar camera (Plotly's client-side
  ``toImage``) saves an SVG (:func:`chart_config`), so a figure can always be
  saved, whatever the server has installed;
* on the server, the two buttons under each figure render it with kaleido,
  which drives the machine's own Chromium (no download at run time). The image
  is made only when a button is clicked (a deferred ``download_button``).
  Where kaleido or a Chromium is missing, the buttons are replaced by a line
  that points to the camera.

A click's image either arrives or the button says why (:func:`static_image`):
each image is made within :data:`RENDER_TIMEOUT_S`, and a failure's reason is
what the button shows (Streamlit's own message is a fixed "Failed to generate
file for download"; :func:`_say_why_downloads_fail`). kaleido itself can wait
for ever: it has no deadline on starting its Chromium, and a render that
never ends is a known kaleido bug (plotly/Kaleido#441), while the browser's
button spins for 180 s, Streamlit's limit for a deferred file, then says
only that the request timed out. A click also no longer reruns the page
(``on_click="ignore"``): the rerun bought nothing and, on a busy server,
competed with the image for the CPU.
"""

from __future__ import annotations

import contextvars
import functools
import json
import os
import shutil
import threading
from collections.abc import Callable

import plotly.graph_objects as go
import streamlit as st

from . import cache, plotly_view

#: Executables kaleido (through choreographer) can drive.
_BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
#: Pixel ratio of PNG exports (sharp on a projector or a slide).
PNG_SCALE = 2
#: Size of a static export when the figure does not fix one (a 16:9 slide).
DEFAULT_SIZE = (1280, 720)
#: Seconds one image may take on the server (a Chromium started, the figure drawn) before its button says it was
#: not made: 3 s on an idle 2-core machine, 5-6 s beside two CPU-bound processes, 14 s for six images at once
#: (measured); well under the 180 s after which Streamlit's button gives up. ``CRAFT_IMAGE_TIMEOUT_S`` sets it.
RENDER_TIMEOUT_S = float(os.environ.get("CRAFT_IMAGE_TIMEOUT_S", "60"))


class ImageNotMade(RuntimeError):
    """A static image that was not made, with the reason a person reads under the button."""


#: Set while Streamlit makes a deferred file (:func:`_say_why_downloads_fail`): the reasons of failed images.
_FAILURES: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar("craft_image_failures", default=None)


@functools.cache
def server_export_available() -> bool:
    """Whether kaleido and a Chromium it can drive are installed."""
    try:
        import kaleido  # noqa: F401 - only its presence is checked
    except ImportError:
        return False
    return any(shutil.which(name) for name in _BROWSERS)


#: Plotly's tool bar buttons the app's figures leave out: box and lasso selection select nothing here, and
#: zoom in / out / autoscale repeat zoom and reset. The bar keeps the camera, zoom, pan and reset, 4 buttons
#: (about 110 px) instead of 9 (about 250 px), which covered the end of a half-width chart's title on hover.
TOOLBAR_LEFT_OUT = ("select2d", "lasso2d", "zoomIn2d", "zoomOut2d", "autoScale2d")


def chart_config(name: str) -> dict:
    """Plotly config of an app figure: the toolbar camera saves ``name``.svg; a short tool bar."""
    return {
        "displaylogo": False,
        "modeBarButtonsToRemove": list(TOOLBAR_LEFT_OUT),
        "toImageButtonOptions": {"format": "svg", "filename": name, "scale": PNG_SCALE},
    }


# Kept in cache.FIGURES (bounded by bytes, shared: bytes are never mutated); an lru_cache held 32 images
# whatever their size, keyed by whole figures' JSON.
@cache.kept_in(cache.FIGURES)
def static_image(spec: str, fmt: str) -> bytes:
    """``spec`` (a figure's JSON) rendered as ``fmt`` ("svg" or "png") by kaleido, within :data:`RENDER_TIMEOUT_S`.

    Sent as it is, not re-validated by plotly.py: the theme holds values
    plotly.js takes and plotly.py's validators refuse (``"transparent"``).
    kaleido draws with plotly.py's own plotly.js and without MathJax (no
    figure of the app writes TeX), so nothing is fetched from the network.

    Raises
    ------
    ImageNotMade
        When the image was not made in time, or kaleido failed: the message says which and what to do.
        (Only images made are kept by the cache.)
    """
    figure = json.loads(spec)
    layout = figure.get("layout", {})
    width = layout.get("width") or DEFAULT_SIZE[0]
    height = layout.get("height") or DEFAULT_SIZE[1]
    opts = dict(format=fmt, width=width, height=height, scale=PNG_SCALE if fmt == "png" else 1)
    made: dict[str, object] = {}

    def render() -> None:
        import kaleido

        try:
            made["image"] = kaleido.calc_fig_sync(figure, opts=opts,
                                                  kopts=dict(mathjax=False, timeout=RENDER_TIMEOUT_S))
        except BaseException as problem:  # noqa: BLE001 - said to the person below
            made["error"] = problem

    # Its own thread, waited for with a deadline: a kaleido that never returns (see the module's notes) leaves a
    # thread behind, not a button spinning with no word; the next click starts afresh.
    worker = threading.Thread(target=render, name="craft-image", daemon=True)
    worker.start()
    worker.join(RENDER_TIMEOUT_S)
    camera = "or save it with the camera of the figure's toolbar (your browser makes that SVG)."
    if worker.is_alive():
        raise _failed(f"The {fmt.upper()} was not made within {RENDER_TIMEOUT_S:g} s: the server is busy or its "
                      f"Chromium did not answer. Try again in a moment, {camera}")
    if "error" in made:
        problem = made["error"]
        raise _failed(f"The {fmt.upper()} could not be made on the server ({type(problem).__name__}: "
                      f"{str(problem)[:200]}); {camera}")
    image = made["image"]
    assert isinstance(image, bytes)
    return image


def _failed(reason: str) -> ImageNotMade:
    """``reason`` as an exception, noted for the button that asked (:func:`_say_why_downloads_fail`)."""
    failures = _FAILURES.get()
    if failures is not None:
        failures.append(reason)
    return ImageNotMade(reason)


def _say_why_downloads_fail() -> None:
    """Have a deferred download's button show why its file was not made, not only that it was not.

    Streamlit answers a failed deferred file with a fixed "Failed to generate file for download". Its handler
    runs the file's function with ``asyncio.to_thread``, which carries the caller's context into the thread:
    a list set in :data:`_FAILURES` around the handler receives :func:`_failed`'s reasons, and the first one
    replaces the fixed text (the button shows it). Without that handler (another Streamlit), nothing changes.
    """
    try:
        from streamlit.runtime.backend_operation_handler import DeferredFileHandler
    except ImportError:  # pragma: no cover - depends on the Streamlit version
        return
    original = DeferredFileHandler.handle
    if getattr(original, "_craft_says_why", False):
        return

    async def handle(self, request, session_id):
        failures: list[str] = []
        token = _FAILURES.set(failures)
        try:
            response = await original(self, request, session_id)
        finally:
            _FAILURES.reset(token)
        if response.error_msg and failures:
            response.error_msg = failures[0]
        return response

    handle._craft_says_why = True  # type: ignore[attr-defined]
    DeferredFileHandler.handle = handle  # type: ignore[method-assign]


_say_why_downloads_fail()


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
    # on_click="ignore": the click makes the file and nothing else (no rerun of the page).
    row.download_button(
        "SVG", lambda: figure_image(made(), "svg"), file_name=f"{name}.svg", mime="image/svg+xml", on_click="ignore",
        key=f"{key}_svg", icon=":material/download:", help="The figure as a vector image (slides, papers).",
    )
    row.download_button(
        "PNG", lambda: figure_image(made(), "png"), file_name=f"{name}.png", mime="image/png", on_click="ignore",
        key=f"{key}_png", icon=":material/download:", help=f"The figure as a {PNG_SCALE}× PNG image.",
    )


def chart(figure: go.Figure, *, key: str, name: str, camera_name: str | None = None, container=None,
          export: go.Figure | Callable[[], go.Figure] | None = None, on_click=None) -> None:
    """Show ``figure`` with its SVG/PNG downloads (files ``name``) under it.

    ``camera_name`` (default ``name``) is the file the toolbar camera saves.
    ``export`` (default ``figure``) is the figure the buttons save, where the
    one shown is not a picture (the path scrubber's slider and frames).
    The browser redraws a figure from scratch whenever its figure or config
    changes, and leaves it alone otherwise: a view whose ``name`` changes
    more often than its figure (Teach's iteration steps) keeps a fixed one.
    """
    plotly_view.show(figure, key=key, config=chart_config(camera_name or name), container=container, on_click=on_click)
    download_buttons(figure if export is None else export, name, key, container)
