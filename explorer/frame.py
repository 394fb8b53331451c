"""What every run shows around a page: the sidebar with the dataset and the
parameters, the fit, and the URL.

``app.py`` renders it once per run and then runs the page that
``st.navigation`` chose. A page can also be run without ``app.py``: while a
``pages/`` folder exists, Streamlit runs a deep-linked page on its own (its
first-generation multipage mode) until ``st.navigation`` has been called once
in the server process. :func:`current` then renders the frame itself, so
every page works however it was reached.
"""

from __future__ import annotations

import threading

import streamlit as st

from . import context, distributed_table, history, state, ui


# The context of the run in progress, per script thread (one per session run).
_run = threading.local()


def render(page=None) -> context.AppContext:
    """Page config, session state, sidebar, fit and URL for this run of ``page`` (from ``st.navigation``)."""
    st.set_page_config(page_title="CRAFT Explorer", page_icon=":material/grid_view:", layout="wide")
    state.init_session()
    # Streamlit leaves 128 px above a page's first element (60 px of them under the header): half of the rest goes,
    # so that Tune & see's mask heatmap starts within the first half of a 720 px screen.
    ui.style("[data-testid='stMainBlockContainer'] { padding-top: 4.5rem; }")
    # The description sits behind the title's help icon: the sidebar's height goes to the sliders (Tune & see).
    st.sidebar.title("CRAFT Explorer", help="Clustering of mixed data with cluster-specific feature selection "
                                            "(Garg, Rudin, Jaakkola).")
    history.keep_entries_restorable()
    params = ui.render_sidebar()
    ctx = context.build(params, getattr(page, "url_path", None))
    state.sync_url(ctx.shareable)
    ignored = state.ignored_url_values()
    said = ("Ignored in the link: " + "; ".join(ignored) + ". The sidebar shows the values in use.") if ignored else None
    if said is None and st.session_state.pop(state.CONTINUED, False):
        # The rerun that shows a finished background fit continues the view the user was reading.
        said = st.session_state.get("_link_warning")
    st.session_state["_link_warning"] = said
    if said:
        ui.warning(said)
    opened = distributed_table.table_of(ctx.data) if ctx.data is not None else None
    if opened is not None:  # every view of a cluster table says what it was computed from
        st.caption(ui.esc(opened.computed_from()))
    _run.ctx = ctx
    return ctx


def run_page(page) -> None:
    """Run ``page`` (from ``st.navigation``) inside the frame rendered for this run."""
    if page.url_path != "export":
        # The Export page's share link reopens the page looked at before it.
        st.session_state["last_page"] = page.url_path
    try:
        page.run()
    finally:
        _run.ctx = None


def current() -> context.AppContext:
    """The context of this run, rendering the frame first if ``app.py`` did not."""
    ctx = getattr(_run, "ctx", None)
    return ctx if ctx is not None else render()
