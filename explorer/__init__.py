"""The app side of CRAFT Explorer.

* :mod:`explorer.services` - the app's computations, free of Streamlit (a
  notebook or a test can call them), one module a job: parameters, examples
  and uploads, roles, fits with readable messages, Compare, What-if and
  scoring new rows.
* :mod:`explorer.state`, :mod:`explorer.ui`, :mod:`explorer.cache`,
  :mod:`explorer.context`, :mod:`explorer.frame` and the other modules - the
  Streamlit side: session state, widgets, cached calls, the frame every page
  runs in, and what the pages share (``docs/architecture.md``'s package map
  names each module's job).

Everything that calls ``st.*`` lives here or in ``app.py`` / ``pages/``; the
engine, its inspection surface and the figures are in the ``craft``
package, which never imports Streamlit.
"""
