"""Streamlit side of CRAFT Explorer: session state, cached engine calls, shared widgets.

Everything that calls ``st.*`` lives here or in ``app.py`` / ``pages/``; the
computations and figures are in the ``craft`` package, which never imports
Streamlit.
"""
