"""Real-browser fixtures: one ``streamlit run`` server for the session, one
headless Chromium, a fresh browser context (cookies, storage, websocket
session) per test.

The browser is Debian's ``chromium`` package driven by Playwright for Python
through ``executable_path`` (Playwright's own browser download is not used).
Where no Chromium or no Playwright exists the tests skip with the reason,
unless ``CRAFT_REQUIRE_BROWSER=1`` (set by ``.ci/run``): then they fail.

``CRAFT_SCREENSHOTS=1`` makes the flows write the README screenshots to
``docs/screenshots/``. A failing test leaves a screenshot and the server log
in ``$TMPDIR/craft-browser-failures/``.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

from benchmarks.app_server import ServerProcess, free_port  # one start-and-wait for the tests and the benchmark
from benchmarks.bench_browser import CHROMIUM_ARGS  # one list of Chromium flags for the tests and the benchmark

# A module named by file name, not ``conftest``: another folder's conftest may hold that name in one session.
from test_flows import ROOT, new_context_page


def pytest_collection_modifyitems(items):
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.browser)


def chromium_path() -> str | None:
    """Debian's Chromium, or None."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    return "/usr/bin/chromium" if os.access("/usr/bin/chromium", os.X_OK) else None


def _missing_browser_reason() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return ("Playwright for Python is not installed "
                "(pip install --group test; make test installs it); real-browser tests need it")
    if chromium_path() is None:
        return ("no Chromium found (looked for `chromium` on PATH and /usr/bin/chromium); "
                "install Debian's package: apt-get install -y chromium")
    if not (ROOT / "app.py").exists():
        return f"the app entry point {ROOT / 'app.py'} does not exist"
    return None


def _require_browser() -> None:
    reason = _missing_browser_reason()
    if reason is None:
        return
    if os.environ.get("CRAFT_REQUIRE_BROWSER") == "1":
        pytest.fail(f"CRAFT_REQUIRE_BROWSER=1 but {reason}", pytrace=False)
    pytest.skip(reason)


class AppServer(ServerProcess):
    """A ``streamlit run app.py`` subprocess on a free local port (started and waited for by
    ``benchmarks.app_server.ServerProcess``, as the benchmark's servers are)."""

    def __init__(self, home: Path, extra_args: list[str] | None = None):
        port = free_port()
        env = dict(os.environ)
        # Own HOME: no ~/.streamlit/config.toml or credentials of the machine
        # leak in; the project's .streamlit/config.toml (cwd) still applies.
        env.update(
            HOME=str(home),
            XDG_CONFIG_HOME=str(home / ".config"),
            XDG_CACHE_HOME=str(home / ".cache"),
            STREAMLIT_BROWSER_GATHER_USAGE_STATS="false",
            PYTHONUNBUFFERED="1",
        )
        command = [
            sys.executable, "-m", "streamlit", "run", "app.py",
            "--server.headless", "true",
            "--server.port", str(port),
            "--server.address", "localhost",
            "--browser.gatherUsageStats", "false",
            "--server.fileWatcherType", "none",
            "--server.runOnSave", "false",
            *(extra_args or []),
        ]
        super().__init__(command, port=port, cwd=ROOT, env=env, log_path=home / "streamlit.log")
        self.home = home


@pytest.fixture(scope="session")
def app_server():
    """Base URL of a headless Streamlit server running ``app.py``."""
    _require_browser()
    with tempfile.TemporaryDirectory(prefix="craft-streamlit-home-") as home:
        server = AppServer(Path(home))
        server.start()
        try:
            yield server
        finally:
            server.stop()


@pytest.fixture
def start_server(tmp_path):
    """Factory of further servers with extra ``streamlit run`` options, stopped at teardown."""
    servers: list[AppServer] = []

    def start(*extra_args: str) -> AppServer:
        _require_browser()
        home = tmp_path / f"home{len(servers)}"
        home.mkdir()
        server = AppServer(home, list(extra_args))
        servers.append(server)
        server.start()
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture(scope="session")
def browser():
    """One headless Debian Chromium for the session."""
    _require_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser, app_server, request):
    """A page in a fresh browser context (its own Streamlit session)."""
    context, page = new_context_page(browser, app_server.url)
    yield page
    if getattr(request.node, "rep_call", None) is not None and request.node.rep_call.failed:
        _save_failure(page, request.node.name, app_server)
    context.close()


@pytest.fixture
def page_on(browser):
    """Factory of pages on another server (e.g. one from ``start_server``)."""
    contexts = []

    def make(server: AppServer):
        context, page = new_context_page(browser, server.url)
        contexts.append(context)
        return page

    yield make
    for context in contexts:
        context.close()


@pytest.fixture
def new_page(browser, app_server):
    """Factory of further pages, each in its own browser context."""
    contexts = []

    def make():
        context, page = new_context_page(browser, app_server.url)
        contexts.append(context)
        return page

    yield make
    for context in contexts:
        context.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"rep_{report.when}", report)


def _save_failure(page, name: str, server: AppServer) -> None:
    out = Path(tempfile.gettempdir()) / "craft-browser-failures"
    out.mkdir(exist_ok=True)
    try:
        page.screenshot(path=str(out / f"{name}.png"), full_page=True)
    except Exception:  # noqa: BLE001 - best effort on a failing page
        pass
    (out / f"{name}.server.log").write_text(server.log())
