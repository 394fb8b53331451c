"""CRAFT Explorer: entry point.

Run with ``streamlit run app.py``. This script lists the pages
(``st.navigation``), renders the frame every page shares (sidebar with the
dataset and the parameters bound to the URL, the cached fit; see
``explorer/frame.py``) and runs the chosen page from ``pages/``.
"""

import streamlit as st

from explorer import frame

PAGES = [
    st.Page("pages/data.py", title="Data", icon=":material/table_view:", default=True, url_path="data"),
    st.Page("pages/clusters.py", title="Tune & see", icon=":material/grid_view:", url_path="clusters"),
    st.Page("pages/cards.py", title="Cluster cards", icon=":material/badge:", url_path="cards"),
    st.Page("pages/evaluate.py", title="Evaluate", icon=":material/target:", url_path="evaluate"),
    st.Page("pages/teach.py", title="Teach", icon=":material/school:", url_path="teach"),
    st.Page("pages/compare.py", title="Compare", icon=":material/balance:", url_path="compare"),
    st.Page("pages/whatif.py", title="What-if", icon=":material/tune:", url_path="whatif"),
    st.Page("pages/score.py", title="Score new rows", icon=":material/input:", url_path="score"),
    st.Page("pages/export.py", title="Export", icon=":material/download:", url_path="export"),
]
page = st.navigation(PAGES)
frame.render()
frame.run_page(page)
