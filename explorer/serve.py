"""Start the app with its code already loaded: ``python -m explorer.serve [streamlit options]``.

``streamlit run app.py`` imports the app's modules (pandas, scikit-learn,
Plotly, numba) and loads CRAFT's compiled kernels during the first visitor's
first run: seconds on a small machine, every time the server starts. This
does both first, in the server's own process, then starts the same server
(``streamlit run app.py`` with the given options), so the first session after
a start is as quick as any later one. It also has the browser fetch the
charts' code with the page (:func:`preload_chart_code`), and a link to one
of its pages connect to the server at once
(:func:`name_the_server_on_page_links`).
``make run`` and ``craft app`` use it.
"""

from __future__ import annotations

import gc
import sys
import warnings
from pathlib import Path
from typing import Callable

APP = Path(__file__).resolve().parent.parent / "app.py"


def warm() -> None:
    """Import what the pages use, load the kernels and draw one small fit's figures."""
    import craft
    from craft import plots

    from . import figure_export
    from .services.fitting import fit_craft, fitted_X
    from .services.loading import load_example
    from .services.params import FitParams
    from .services.roles import fit_schema

    craft.warm_up()
    # Whether figures can be exported on the server: the first answer imports kaleido (0.2 s of a first run).
    figure_export.server_export_available()
    data = load_example("fig1_binary", n_samples=60, seed=0)
    schema, _ = fit_schema(data, {}, data.label)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        outcome = fit_craft(data.table, schema, FitParams(k=3))
    model = outcome.model
    assert model is not None, outcome.error
    X = fitted_X(model, data.table)
    # Plotly loads its validators on first use: build and serialise the figures once.
    for figure in (plots.fig_feature_masks(model), plots.fig_data_heatmap(model, X),
                   plots.fig_projection(plots.projection_frame(model, X)), plots.fig_history(model)):
        figure.to_json()
    # What is loaded now lives as long as the server: keep it out of every later collection.
    gc.collect()
    gc.freeze()


def _change_html_pages(change: Callable[[dict, bytes], bytes | None]) -> bool:
    """Pass every HTML page Streamlit serves through ``change(scope, page)``.

    ``change`` returns the page to send instead, or None to send Streamlit's
    own, byte for byte. A changed page goes out in one piece with its length,
    and without the file's ``ETag`` and ``Last-Modified``: they describe the
    file, and a 304 answered from them would serve a copy cached under
    another address or change. Wraps Streamlit's static-file handler factory
    (``starlette_static_routes.create_streamlit_static_handler``); where that
    factory is missing nothing changes. Returns whether the pages pass
    through ``change``.
    """
    try:
        from streamlit.web.server.starlette import starlette_static_routes as routes
    except ImportError:
        return False
    make_handler = getattr(routes, "create_streamlit_static_handler", None)
    if make_handler is None:
        return False

    def handler_with_change(directory, base_url):
        static = make_handler(directory, base_url)

        async def app(scope, receive, send):
            if scope.get("type") != "http" or scope.get("method") != "GET":
                await static(scope, receive, send)
                return
            held: dict = {}
            body: list[bytes] = []

            async def send_changed(message):
                if message["type"] == "http.response.start":
                    headers = message.get("headers", [])
                    html = any(name.lower() == b"content-type" and value.startswith(b"text/html") for name, value in headers)
                    if html and message.get("status") == 200:
                        held["start"] = message
                        return
                elif "start" in held:
                    body.append(message.get("body", b""))
                    if message.get("more_body", False):
                        return
                    page = b"".join(body)
                    changed = change(scope, page)
                    if changed is None:
                        await send(held["start"])
                        await send({"type": "http.response.body", "body": page})
                        return
                    dropped = {b"content-length", b"etag", b"last-modified"}
                    headers = [(name, value) for name, value in held["start"].get("headers", [])
                               if name.lower() not in dropped]
                    await send({**held["start"], "headers": [*headers, (b"content-length", str(len(changed)).encode())]})
                    await send({"type": "http.response.body", "body": changed})
                    return
                await send(message)

            await static(scope, receive, send_changed)

        return app

    routes.create_streamlit_static_handler = handler_with_change
    return True


def chart_code_link() -> bytes:
    """The tag that has the browser fetch the charts' plotly.js with the page (relative, as the page's own)."""
    from .plotly_view import BUNDLE_URL

    return f'<link rel="preload" as="script" href="./{BUNDLE_URL}">'.encode()


def preload_chart_code() -> bool:
    """Have a new visitor's browser fetch the charts' plotly.js with the page instead of at the first chart.

    The charts' code (``static/plotly-cartesian.min.js``, 1.5 MB) is asked
    for when the first chart is drawn, after the first run; on this app's
    pages the widgets' code (about 47 small files) is fetched then too. A
    ``preload`` link at the end of the page's ``<head>``
    (:func:`chart_code_link`) has the browser fetch it at once, beside the
    page's own code; the chart then only evaluates it.

    Tried and left out, with Streamlit's own chart (all of plotly.js in one
    4.7 MB file): preloading the widgets' files too (slower: they compete
    with the page's code), and *running* Plotly's file early. That moved its
    evaluation, one task of about 0.9 s, before the first run: the first
    chart came 0.05–0.3 s sooner, but the page's frame (sidebar, title, the
    skeletons of its elements) came about 1.2 s later, since the first run
    waited for that task.

    Feature-detected: where Streamlit serves its files otherwise, nothing
    changes. Returns whether the link is added.
    """
    link = chart_code_link()
    return _change_html_pages(lambda scope, page: page.replace(b"</head>", link + b"</head>", 1))


#: Run before Streamlit's own code, which reads ``window.__streamlit`` once as it loads. A host's own setting wins.
BACKEND_HINT = (b'<script>window.__streamlit = Object.assign({BACKEND_BASE_URL: new URL(".", location.href).href}, '
                b"window.__streamlit)</script>")


def _page_link(scope) -> bool:
    """Whether a GET asks for one name below the app's root, as a page link does (``/clusters``).

    The root page and anything deeper are not page links; a file at the root (``/favicon.png``) is asked like
    one, but only an HTML answer is changed.
    """
    inside = scope.get("path", "")[len(scope.get("root_path", "")):].strip("/")
    return scope.get("type") == "http" and scope.get("method") == "GET" and bool(inside) and "/" not in inside


def name_the_server_on_page_links() -> bool:
    """Have a link to one of the app's pages connect to the server at once.

    Streamlit's client does not know under which path its server answers, so
    on a page link (``/clusters?...``) it first takes the page's path for the
    server's and asks ``/clusters/_stcore/health``, and only after that fails
    the path above: measured, its first run was requested about 200 ms later
    than on the root page. Streamlit reads the server's address from
    ``window.__streamlit.BACKEND_BASE_URL`` when a host sets it; on a page
    link this sets it, at the top of the HTML page's ``<head>``, to the
    address above the page (``new URL(".", location.href)``), which is right
    under a base URL path and behind a proxy that adds a prefix, since it is
    relative. The root page gets nothing of it. Feature-detected as
    :func:`preload_chart_code` is. Returns whether the hint is set.
    """
    return _change_html_pages(
        lambda scope, page: page.replace(b"<head>", b"<head>" + BACKEND_HINT, 1) if _page_link(scope) else None)


def main(argv: list[str] | None = None) -> None:
    warm()
    preload_chart_code()
    name_the_server_on_page_links()
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
