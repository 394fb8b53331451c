"""CRAFT Explorer: entry point.

Run with ``streamlit run app.py``. This script sets up the session, lists
the pages (``st.navigation``), renders the sidebar (dataset and parameters,
bound to the URL), fits CRAFT through the cache, and then runs the chosen
page, which reads the result from ``st.session_state["ctx"]``.

The page scripts live in ``app_pages/``, not ``pages/``: while a ``pages/``
folder exists, Streamlit 1.67 runs a deep-linked page on its own (legacy
multipage mode) until ``st.navigation`` has been called once in the server
process, and ``AppTest`` resets that state before every run.
"""

import streamlit as st

from explorer import context, state, ui

st.set_page_config(page_title="CRAFT Explorer", page_icon=":material/grid_view:", layout="wide")
state.init_session()

PAGES = [
    st.Page("app_pages/data.py", title="Data", icon=":material/table_view:", default=True, url_path="data"),
    st.Page("app_pages/clusters.py", title="Tune & see", icon=":material/grid_view:", url_path="clusters"),
    st.Page("app_pages/evaluate.py", title="Evaluate", icon=":material/target:", url_path="evaluate"),
    st.Page("app_pages/teach.py", title="Teach", icon=":material/school:", url_path="teach"),
    st.Page("app_pages/compare.py", title="Compare", icon=":material/balance:", url_path="compare"),
    st.Page("app_pages/whatif.py", title="What-if", icon=":material/tune:", url_path="what-if"),
    st.Page("app_pages/export.py", title="Export", icon=":material/download:", url_path="export"),
]
page = st.navigation(PAGES)

st.sidebar.title("CRAFT Explorer")
st.sidebar.caption("Clustering of mixed data with cluster-specific feature selection (Garg, Rudin, Jaakkola).")
params = ui.render_sidebar()
ctx = context.build(params)
state.sync_url(ctx.shareable)
page.run()
