"""Shared pytest set-up."""

import pytest


@pytest.fixture(autouse=True)
def _streamlit_navigation_mode(monkeypatch):
    """Run AppTest in the multipage mode the served app uses.

    With a ``pages/`` folder beside ``app.py``, Streamlit starts a server in
    its first-generation multipage mode and leaves it for good the first time
    ``app.py`` calls ``st.navigation``. ``AppTest`` resets that switch before
    every run, so each test run would start in the old mode again; pinning it
    reproduces the server after its first run. (Pages still work in the old
    mode: ``explorer.frame`` renders the sidebar and the fit for a page
    reached directly.)
    """
    try:
        from streamlit.runtime.pages_manager import PagesManager
    except ImportError:  # Streamlit is not needed by library-only tests
        return
    original = PagesManager.__init__

    def init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        PagesManager.uses_pages_directory = False

    monkeypatch.setattr(PagesManager, "__init__", init)
