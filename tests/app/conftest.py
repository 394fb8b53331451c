"""Shared set-up of the app tests (AppTest): the multipage mode the served app uses and the files offered for download.

The autouse fixtures of ``tests/conftest.py`` (the process environment kept) apply here too.
"""

from collections.abc import Callable, Iterator, Mapping

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


class Downloads(Mapping):
    """Files offered by ``st.download_button``, by file name; a deferred file is made when it is read."""

    def __init__(self) -> None:
        self.made: dict[str, bytes] = {}
        self.deferred: dict[str, Callable] = {}

    def __getitem__(self, name: str) -> bytes:
        if name not in self.made:
            made = self.deferred[name]()
            self.made[name] = made.encode() if isinstance(made, str) else made
        return self.made[name]

    def __iter__(self) -> Iterator[str]:
        return iter({**self.deferred, **self.made})

    def __len__(self) -> int:
        return len({**self.deferred, **self.made})


@pytest.fixture
def downloads(monkeypatch) -> Downloads:
    """The files every ``st.download_button`` offers during the test, by file name.

    AppTest keeps media files in a mock runtime: bytes given at once are recorded as they are stored; a
    callable given for deferred generation (run when a user clicks, never by AppTest) is called when the
    test reads its file, so that the figures' images, made by kaleido, cost nothing unread.
    """
    from streamlit.runtime.media_file_manager import MediaFileManager
    from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage

    files = Downloads()
    store = MemoryMediaFileStorage.load_and_get_id
    defer = MediaFileManager.add_deferred

    def stored(self, path_or_data, mimetype, kind, filename=None):
        if isinstance(path_or_data, bytes) and filename:
            files.made[filename] = path_or_data
        return store(self, path_or_data, mimetype, kind, filename)

    def deferred(self, data_callable, mimetype, coordinates, file_name=None, **kwargs):
        if file_name:
            files.deferred[file_name] = data_callable
            files.made.pop(file_name, None)  # a new run offers the file anew
        return defer(self, data_callable, mimetype, coordinates, file_name, **kwargs)

    monkeypatch.setattr(MemoryMediaFileStorage, "load_and_get_id", stored)
    monkeypatch.setattr(MediaFileManager, "add_deferred", deferred)
    return files

