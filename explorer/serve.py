"""Start the app with its code already loaded: ``python -m explorer.serve [streamlit options]``.

``streamlit run app.py`` imports the app's modules (pandas, scikit-learn,
Plotly, numba) and loads CRAFT's compiled kernels during the first visitor's
first run: seconds on a small machine, every time the server starts. This
does both first, in the server's own process, then starts the same server
(``streamlit run app.py`` with the given options), so the first session after
a start is as quick as any later one. It also has the browser fetch the
chart's code with the page (:func:`preload_chart_code`). ``make run`` and
``craft app`` use it.
"""

from __future__ import annotations

import gc
import sys
import warnings
from pathlib import Path

APP = Path(__file__).resolve().parent.parent / "app.py"


def warm() -> None:
    """Import what the pages use, load the kernels and draw one small fit's figures."""
    import craft
    from craft import plots

    from . import figure_export, services

    craft.warm_up()
    # Whether figures can be exported on the server: the first answer imports kaleido (0.2 s of a first run).
    figure_export.server_export_available()
    data = services.load_example("fig1_binary", n_samples=60, seed=0)
    schema, _ = services.fit_schema(data, {}, data.label)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        outcome = services.fit_craft(data.table, schema, services.FitParams(k=3))
    model = outcome.model
    assert model is not None, outcome.error
    X = services.fitted_X(model, data.table)
    # Plotly loads its validators on first use: build and serialise the figures once.
    for figure in (plots.fig_feature_masks(model), plots.fig_data_heatmap(model, X),
                   plots.fig_projection(plots.projection_frame(model, X)), plots.fig_history(model)):
        figure.to_json()
    # What is loaded now lives as long as the server: keep it out of every later collection.
    gc.collect()
    gc.freeze()


#: Streamlit's frontend chunk that draws Plotly figures (its file name carries a content hash).
CHART_CHUNK = "PlotlyChart.*.js"


def chart_chunk() -> Path | None:
    """The file of Streamlit's frontend that holds Plotly (4.7 MB in Streamlit 1.67), or None if not found."""
    from streamlit import file_util

    found = sorted((Path(file_util.get_static_dir()) / "static" / "js").glob(CHART_CHUNK))
    return found[0] if len(found) == 1 else None


def preload_chart_code() -> bool:
    """Have a new visitor's browser fetch Plotly's code with the page instead of after the first run.

    Streamlit's frontend loads each element's code when it first draws one.
    On this app's pages the widgets' code (about 47 small files) goes first
    and Plotly's waits behind it for one of the browser's six connections to
    the server: measured, it arrived 0.5–0.7 s after the first run had
    ended, against 0.2 s on a bare page with one chart. A ``Link: <…>;
    rel=modulepreload`` header on the HTML page has the browser fetch it at
    once, beside the page's own code (the page's code already preloads its
    own files the same way). Preloading the widgets' files too made the first
    view slower: they compete with the page's code.

    Feature-detected: where Streamlit serves its files otherwise, or the
    file is not found, nothing changes. Returns whether the header is set.
    """
    try:
        from streamlit.web.server.starlette import starlette_static_routes as routes
    except ImportError:
        return False
    chunk = chart_chunk()
    make_handler = getattr(routes, "create_streamlit_static_handler", None)
    if chunk is None or make_handler is None:
        return False
    # Relative, as the page names its own files: right under a base URL path too.
    link = (b"link", f"<./static/js/{chunk.name}>; rel=modulepreload".encode())

    def handler_with_preload(directory, base_url):
        static = make_handler(directory, base_url)

        async def app(scope, receive, send):
            async def send_with_preload(message):
                if message["type"] == "http.response.start":
                    headers = list(message.get("headers", []))
                    if any(name.lower() == b"content-type" and value.startswith(b"text/html") for name, value in headers):
                        message = {**message, "headers": [*headers, link]}
                await send(message)

            await static(scope, receive, send_with_preload)

        return app

    routes.create_streamlit_static_handler = handler_with_preload
    return True


def main(argv: list[str] | None = None) -> None:
    warm()
    preload_chart_code()
    from streamlit.runtime.pages_manager import PagesManager
    from streamlit.web import cli

    # The app lists its pages with st.navigation (app.py). Because a pages/ folder exists, Streamlit would
    # serve the first session of a fresh server in its older folder mode until app.py has run once: a shared
    # link to a page then showed the file names ("app", "clusters", ...) in the sidebar instead of the titles.
    PagesManager.uses_pages_directory = False

    sys.argv = ["streamlit", "run", str(APP), *(sys.argv[1:] if argv is None else argv)]
    cli.main()


if __name__ == "__main__":
    main()
