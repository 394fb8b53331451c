"""``craft app``: its arguments, the port it takes, and the table a new session opens with.

The arguments are checked in this process through ``craft.cli.main`` (each
refusal happens before a server starts); the table handed to the app
(``CRAFT_APP_DATA``) through ``streamlit.testing.v1.AppTest``. The installed
program itself, from the built wheel in a clean virtual environment, is
driven in Chromium by ``tests/browser/test_installed_app.py``.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from craft import cli, datasets
from explorer import launch
from explorer.cache import STORE
from explorer.state import START_DATA_ENV, UPLOAD

ROOT = Path(__file__).resolve().parents[2]


def _craft(capsys, *argv: str) -> tuple[int, str]:
    status = cli.main(list(argv))
    return status, capsys.readouterr().err


def test_an_unknown_file_is_named_and_refused_without_a_traceback(capsys, tmp_path):
    missing = tmp_path / "no-such-table.csv"
    status, err = _craft(capsys, "app", str(missing))
    assert status == 2
    assert f"{str(missing)!r} is neither a file nor a bundled example" in err, err
    assert "wine" in err and "fig1_binary" in err  # the examples it could have named
    assert "Traceback" not in err


def test_a_file_the_app_cannot_read_is_refused_with_the_apps_reason(capsys, tmp_path):
    notes = tmp_path / "notes.md"
    notes.write_text("# not a table\n")
    status, err = _craft(capsys, "app", str(notes))
    assert status == 2
    assert f"{str(notes)!r}:" in err and "unsupported file type '.md'" in err, err
    status, err = _craft(capsys, "app", str(tmp_path))
    assert status == 2 and "is a folder" in err, err


def test_parquet_excel_and_example_names_pass_the_checks_as_the_app_will_open_them(tmp_path):
    X, _ = datasets.load("zoo")
    for name, write in (("zoo.parquet", X.to_parquet), ("zoo.xlsx", X.to_excel)):
        write(tmp_path / name)
        assert launch.start_data(str(tmp_path / name)) == str((tmp_path / name).resolve())
    assert launch.start_data("splice") == "splice"
    assert launch.start_data(None) is None


def test_a_port_in_use_is_refused_and_without_port_the_next_free_one_is_taken(capsys, monkeypatch):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        status, err = _craft(capsys, "app", "zoo", "--port", str(port), "--no-browser")
        assert status == 2
        assert f"port {port} is in use on localhost" in err and "leave --port out" in err, err
        # Without --port the search starts at the first port and steps over the busy one.
        chosen = launch.free_port("localhost", None, port)
        assert chosen > port and launch.port_free("localhost", chosen)
    status, err = _craft(capsys, "app", "zoo", "--port", "70000")
    assert status == 2 and "--port=70000 must be between 1 and 65535" in err, err


def test_without_streamlit_the_message_names_the_app_extra(capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "streamlit", None)  # `import streamlit` raises ImportError
    status, err = _craft(capsys, "app", "zoo")
    assert status == 1
    assert "craft app needs the optional package streamlit: pip install 'craft-explorer[app]'" in err, err


def test_the_other_commands_import_neither_streamlit_nor_the_app():
    code = ("import sys; from craft.cli import main; status = main(['datasets']); "
            "print(status, sorted(m for m in ('streamlit', 'explorer', 'plotly') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "0 []", done.stdout


def test_the_served_pages_preload_the_charts_code_and_a_page_link_names_its_server():
    from streamlit import file_util

    from benchmarks.bench_browser import Server
    from explorer.plotly_view import BUNDLE
    from explorer.serve import BACKEND_HINT, chart_code_link

    streamlit_page = (Path(file_util.get_static_dir()) / "index.html").read_bytes()
    link = chart_code_link()
    assert link == b'<link rel="preload" as="script" href="./app/static/plotly-cartesian.min.js">'
    server = Server().start()  # as `make run` starts it: python -m explorer.serve, own HOME, a free port
    try:
        # The root page: Streamlit's, with the charts' code preloaded at the end of its <head>.
        with urllib.request.urlopen(f"{server.url}/", timeout=30) as root:
            root_html = root.read()
            assert root.headers.get_content_type() == "text/html" and root.headers["ETag"] is None
            assert int(root.headers["Content-Length"]) == len(root_html)
        assert root_html == streamlit_page.replace(b"</head>", link + b"</head>", 1) != streamlit_page
        # A shared link to a page: the same, and the server's address above it at the top of its <head>.
        with urllib.request.urlopen(f"{server.url}/clusters?view=Feature+masks", timeout=30) as linked:
            html = linked.read()
            assert int(linked.headers["Content-Length"]) == len(html) and linked.headers["ETag"] is None
        assert html == root_html.replace(b"<head>", b"<head>" + BACKEND_HINT, 1) != root_html
        # The file the link names is served as JavaScript, unchanged.
        with urllib.request.urlopen(f"{server.url}/app/static/{BUNDLE.name}", timeout=30) as code:
            assert "javascript" in code.headers.get_content_type()
            assert code.read() == BUNDLE.read_bytes()
    finally:
        server.stop()


@pytest.mark.parametrize(("root", "path", "page_link"), [
    ("", "/clusters", True),
    ("", "/", False),
    ("", "/static/js/index.js", False),
    ("/craft", "/craft/teach", True),
    ("/craft", "/craft", False),
    ("/craft", "/craft/", False),
    ("/craft", "/craft/favicon.png", True),
])
def test_only_a_page_below_the_apps_root_gets_the_servers_address(root, path, page_link):
    from explorer.serve import _page_link

    assert _page_link({"type": "http", "method": "GET", "path": path, "root_path": root}) is page_link
    assert _page_link({"type": "http", "method": "HEAD", "path": path, "root_path": root}) is False


# ----------------------------------------------------------------------
# The table a new session opens with


@pytest.fixture
def clear_caches():
    st.cache_data.clear()
    STORE.clear()
    yield
    st.cache_data.clear()
    STORE.clear()


def _open(monkeypatch, value: str | None, **query: str) -> AppTest:
    if value is None:
        monkeypatch.delenv(START_DATA_ENV, raising=False)
    else:
        monkeypatch.setenv(START_DATA_ENV, value)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90)
    at.query_params["n_init"] = "1"
    for key, text in query.items():
        at.query_params[key] = text
    at.run()
    assert not at.exception, at.exception
    return at


def test_a_file_given_to_craft_app_opens_as_the_sessions_upload(monkeypatch, tmp_path, clear_caches):
    X, y = datasets.load("zoo")
    path = tmp_path / "animals.csv"
    X.assign(kind=y).to_csv(path, index=False)
    at = _open(monkeypatch, str(path))
    assert at.session_state["dataset"] == UPLOAD
    assert at.session_state["upload"]["name"] == "animals.csv"
    assert at.session_state["upload"]["data"] == path.read_bytes()
    assert any("Your file animals.csv" in caption.value for caption in at.sidebar.caption)
    # A link that names a dataset still opens that one.
    at = _open(monkeypatch, str(path), dataset="wine")
    assert at.session_state["dataset"] == "wine" and at.session_state["upload"] is None


def test_an_example_given_to_craft_app_opens_with_its_presets(monkeypatch, clear_caches):
    at = _open(monkeypatch, "fig3_categorical")
    assert at.session_state["dataset"] == "fig3_categorical"
    assert at.session_state["budget"] == "approximate" and at.session_state["eps_c"] == 0.9  # its preset
    assert _open(monkeypatch, None).session_state["dataset"] == "fig1_binary"


def test_a_file_that_became_unreadable_is_said_on_the_data_page(monkeypatch, tmp_path, clear_caches):
    at = _open(monkeypatch, str(tmp_path / "gone.csv"))
    assert at.session_state["dataset"] == "fig1_binary"
    assert "cannot read" in at.session_state["upload_error"] and "gone.csv" in at.session_state["upload_error"]
    assert any("gone.csv" in error.value for error in at.error), [error.value for error in at.error]


def test_a_host_of_another_machine_is_one_line_exit_2(capsys):
    """192.0.2.1 (TEST-NET-1) is no address of this machine: 'unexpected error: OSError 99' before."""
    status, err = _craft(capsys, "app", "zoo", "--host", "192.0.2.1", "--port", "8765", "--no-browser")
    assert status == 2, err
    assert err.strip().splitlines() == [
        "craft: error: --host '192.0.2.1' is not an address of this machine (none of its addresses can be listened "
        "on); give one of this machine's addresses, e.g. localhost or 0.0.0.0."
    ]


def test_an_ipv6_host_is_printed_in_brackets(capsys, monkeypatch):
    from explorer import serve

    served = []
    monkeypatch.setattr(launch, "free_port", lambda host, port, first: 8765)
    monkeypatch.setattr(serve, "main", lambda argv: served.append(argv))
    status = cli.main(["app", "zoo", "--host", "::1", "--no-browser"])
    out = capsys.readouterr().out
    assert status == 0 and served
    assert "http://[::1]:8765" in out, out
