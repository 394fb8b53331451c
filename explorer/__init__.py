"""The app side of CRAFT Explorer.

* :mod:`explorer.services` - the app's computations, free of Streamlit (a
  notebook or a test can call them): parameters, examples and uploads,
  roles, fits with readable messages, Compare and What-if.
* :mod:`explorer.state`, :mod:`explorer.ui`, :mod:`explorer.cache`,
  :mod:`explorer.context`, :mod:`explorer.frame` - the Streamlit side:
  session state, widgets, cached calls and the frame every page runs in.

Everything that calls ``st.*`` lives here or in ``app.py`` / ``pages/``; the
engine, its inspection surface and the figures are in the ``craft``
package, which never imports Streamlit.
"""
