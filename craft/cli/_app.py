"""``craft app``: find the app beside this copy of craft, check DATA and the port, and serve the app.

The app's package (``explorer``) is imported only here, inside :func:`_run_app`, after its extras are checked
and its folder is put on ``sys.path`` (a clone's root, or the installed ``craft_app``): the library and
the other commands never import it."""

from __future__ import annotations

import errno
import importlib.util
import os
import socket
import sys
from pathlib import Path

from .. import dask_io
from .._optional import require
from ..exceptions import CraftInputError
from ._common import _check_memory_limit, _check_regular_file, _check_run_options, _dask_client


#: The app's first port when --port is not given (Streamlit's) and how many after it are tried.
_APP_PORT, _APP_PORT_TRIES = 8501, 100


def _run_app(args) -> int:
    """Check DATA and the port, then serve the app in this process (Streamlit's server; returns when it stops)."""
    root = _app_root()
    for module, package in (("streamlit", "streamlit"), ("plotly", "plotly")):
        require(module, package=package, extra="app", needed_for="craft app")
    # The app imports its package `explorer` from the folder of app.py, as Streamlit runs it; the checks and the
    # warm-up import it from there too, so that the server and the sessions share one copy of each module.
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    from explorer import distributed_table, serve, services, state

    distributed = args.scheduler is not None or args.local_workers is not None
    if distributed:
        if args.data is None:
            raise CraftInputError("--scheduler and --local-workers need DATA: a folder of Parquet files, a glob of "
                                  "CSV or Parquet files, or a large file.")
        _check_run_options(args, distributed)
        table = dask_io.read_partitioned(args.data, partition_size=args.partition_size)
        if args.local_workers is not None:
            _check_memory_limit(args, table)
        start: str | None = distributed_table.SOURCE
    else:
        os.environ.pop(distributed_table.ENV, None)
        start = _app_data(args.data, services)
    port = _app_port(args.host, args.port)
    if start is None:
        os.environ.pop(state.START_DATA_ENV, None)
    else:
        os.environ[state.START_DATA_ENV] = start
    shown = "localhost" if args.host in ("localhost", "127.0.0.1", "0.0.0.0", "::", "") else args.host
    if ":" in shown:  # an IPv6 address goes in brackets in a URL (RFC 3986)
        shown = f"[{shown}]"
    print(f"CRAFT Explorer ({args.data or state.DEFAULT_DATASET}): http://{shown}:{port}  (starting; Ctrl+C stops it)", flush=True)
    # Without --no-browser, Streamlit decides: it opens a tab unless it finds no display (Linux without DISPLAY).
    headless = [] if args.browser else ["--server.headless", "true"]
    argv = ["--server.port", str(port), "--server.address", args.host, *headless, "--browser.gatherUsageStats", "false"]
    if not distributed:
        serve.main(argv)
        return 0
    # The cluster lives as long as the server: the app's sessions reach it at its scheduler's address.
    with _dask_client(args) as client:
        source = args.data if "://" in args.data or any(ch in args.data for ch in "*?[") else str(Path(args.data).resolve())
        os.environ[distributed_table.ENV] = distributed_table.Spec(
            source=source, scheduler=client.scheduler.address, partition_size=str(args.partition_size),
            connect_timeout=args.connect_timeout, local_workers=args.local_workers).to_env()
        print(f"Dask: {len(client.scheduler_info().get('workers', {}))} worker(s) at {client.scheduler.address}", flush=True)
        serve.main(argv)
    return 0


def _app_root() -> Path:
    """The folder of app.py that goes with this copy of craft: the clone it lies in, or the installed craft_app."""
    clone = Path(__file__).resolve().parents[2]
    if (clone / "app.py").is_file() and (clone / "explorer" / "serve.py").is_file():
        return clone
    spec = importlib.util.find_spec("craft_app")
    if spec is not None and spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    raise ImportError(f"craft app: the app's files (craft_app/app.py) are not installed beside craft at {clone}; "
                      f"reinstall: pip install --force-reinstall 'craft-explorer[app]'")


def _app_data(data: str | None, services) -> str | None:
    """What the sessions open with: None (the default example), an example's name, or a readable table's full path.

    A file is read here with the app's own reader (``explorer.services.load_upload``), so a table the app
    cannot cluster is refused before the server starts, with the message the Data page would show.
    """
    if data is None:
        return None
    path = Path(data)
    if not path.exists():
        if data in services.EXAMPLES:
            return data
        raise CraftInputError(f"{data!r} is neither a file nor a bundled example (examples: {', '.join(services.EXAMPLES)}).")
    _check_regular_file(path, in_memory=True)
    if path.is_dir():
        raise CraftInputError(f"{data!r} is a folder; the app opens one table file (CSV/TSV/text, Parquet, Excel), or a "
                              "folder of Parquet files on a Dask cluster: add --local-workers N or --scheduler ADDRESS.")
    try:
        content = path.read_bytes()
    except OSError as error:
        raise CraftInputError(f"cannot read {data!r}: {error.strerror or error}.") from None
    try:
        services.load_upload(content, path.name)
    except CraftInputError as error:
        raise CraftInputError(f"{data!r}: {error}") from None
    return str(path.resolve())


def _app_port(host: str, port: int | None) -> int:
    """``port`` when it is free (else an input error), or the first free port from :data:`_APP_PORT`."""
    if port is not None:
        if not 1 <= port <= 65535:
            raise CraftInputError(f"--port={port} must be between 1 and 65535.")
        if not _port_free(host, port):
            raise CraftInputError(f"port {port} is in use on {host}: give another --port, or leave --port out to take the "
                                  f"first free port from {_APP_PORT}.")
        return port
    for candidate in range(_APP_PORT, _APP_PORT + _APP_PORT_TRIES):
        if _port_free(host, candidate):
            return candidate
    raise CraftInputError(f"ports {_APP_PORT}-{_APP_PORT + _APP_PORT_TRIES - 1} are all in use on {host}: give a free one with --port.")


def _port_free(host: str, port: int) -> bool:
    """Whether the server could listen on ``host:port`` (every address the name has, as Tornado binds them)."""
    try:
        addresses = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as error:
        raise CraftInputError(f"--host {host!r} is not an address of this machine: {error.strerror or error}.") from None
    bound = 0
    for family, kind, proto, _, address in addresses:
        with socket.socket(family, kind, proto) as probe:
            # Tornado sets SO_REUSEADDR: a port left in TIME_WAIT is free for it, one with a listener is not.
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(address)
            except OSError as error:
                if error.errno == errno.EADDRNOTAVAIL:  # e.g. ::1 of localhost without IPv6; Tornado skips it too
                    continue
                return False
            bound += 1
    if not bound:  # every address is another machine's: the server could listen on none of them
        raise CraftInputError(f"--host {host!r} is not an address of this machine (none of its addresses can be "
                              "listened on); give one of this machine's addresses, e.g. localhost or 0.0.0.0.")
    return True
