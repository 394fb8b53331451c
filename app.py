"""CRAFT Explorer: entry point.

Run with ``streamlit run app.py``. This script lists the pages
(``st.navigation``, in the header), renders the frame every page shares (sidebar with the
dataset and the parameters bound to the URL, the cached fit; see
``explorer/frame.py``) and runs the chosen page from ``pages/``.
"""

import streamlit as st

from explorer import frame

PAGES = [
    st.Page("pages/data.py", title="Data", default=True, url_path="data"),
    st.Page("pages/clusters.py", title="Tune & see", url_path="clusters"),
    st.Page("pages/cards.py", title="Cluster cards", url_path="cards"),
    st.Page("pages/evaluate.py", title="Evaluate", url_path="evaluate"),
    st.Page("pages/teach.py", title="Teach", url_path="teach"),
    st.Page("pages/compare.py", title="Compare", url_path="compare"),
    st.Page("pages/whatif.py", title="What-if", url_path="whatif"),
    st.Page("pages/score.py", title="Score new rows", url_path="score"),
    st.Page("pages/export.py", title="Export", url_path="export"),
]
# The pages in the header, not the sidebar: the sidebar's height goes to the sliders, which then sit in view beside
# Tune & see's figures at 1280 × 720; without icons the nine titles fit the header of a 1280-pixel window.
page = st.navigation(PAGES, position="top")
frame.render(page)
frame.run_page(page)
