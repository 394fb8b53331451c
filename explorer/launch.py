"""Serving the app for ``craft app``: what its sessions open with, the port it listens on, the server started.

``craft app`` (:mod:`craft.cli`) finds the app's folder, puts it on ``sys.path`` and checks the app's extras; on a
Dask cluster it reads and checks DATA with the library (:func:`craft.dask_io.read_partitioned`). Then it hands over
to :func:`serve_app` here, which knows the app: its examples and its reader (:mod:`explorer.services`), what its
sessions read at start (``state.START_DATA_ENV``, ``distributed_table.ENV``) and its server
(:func:`explorer.serve.main`, in this process).
"""

from __future__ import annotations

import errno
import os
import socket
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Callable

from craft.dask_io import check_regular_file
from craft.exceptions import CraftInputError

from . import distributed_table, serve, services, state

#: Ports tried from the first one when --port is not given.
PORT_TRIES = 100


def serve_app(data: str | None, *, host: str, port: int | None, first_port: int, browser: bool,
              client: Callable[[], AbstractContextManager[Any]] | None, partition_size: object, connect_timeout: float,
              local_workers: int | None) -> int:
    """Check DATA (in memory) and the port, then serve the app until it stops; the exit status.

    Parameters
    ----------
    data : str or None
        A table file, a bundled example's name, or None (the app's first example); with ``client``, the
        partitioned source that ``craft app`` has read and checked.
    host, port, browser
        As ``craft app``'s ``--host``, ``--port`` (None: the first free port from ``first_port``) and
        ``--no-browser``.
    client : callable or None
        A Dask client's context (``craft app --scheduler/--local-workers``): the cluster lives as long as the
        server, and the sessions reach it at its scheduler's address with ``partition_size``,
        ``connect_timeout`` and ``local_workers`` (the options of the same names).

    Returns
    -------
    int
        0 once the server has stopped.

    Raises
    ------
    CraftInputError
        A DATA the app cannot open, a port in use or out of range, a host that is not this machine's.
    """
    distributed = client is not None
    if distributed:
        if data is None:
            raise CraftInputError("serve_app: a Dask client needs DATA, the partitioned source its sessions read.")
        start: str | None = distributed_table.SOURCE
    else:
        os.environ.pop(distributed_table.ENV, None)
        start = start_data(data)
    port = free_port(host, port, first_port)
    if start is None:
        os.environ.pop(state.START_DATA_ENV, None)
    else:
        os.environ[state.START_DATA_ENV] = start
    shown = "localhost" if host in ("localhost", "127.0.0.1", "0.0.0.0", "::", "") else host
    if ":" in shown:  # an IPv6 address goes in brackets in a URL (RFC 3986)
        shown = f"[{shown}]"
    print(f"CRAFT Explorer ({data or state.DEFAULT_DATASET}): http://{shown}:{port}  (starting; Ctrl+C stops it)", flush=True)
    # Without --no-browser, Streamlit decides: it opens a tab unless it finds no display (Linux without DISPLAY).
    headless = [] if browser else ["--server.headless", "true"]
    argv = ["--server.port", str(port), "--server.address", host, *headless, "--browser.gatherUsageStats", "false"]
    if client is None or data is None:  # (data is given with a client: checked above)
        serve.main(argv)
        return 0
    # The cluster lives as long as the server: the app's sessions reach it at its scheduler's address.
    with client() as running:
        source = data if "://" in data or any(ch in data for ch in "*?[") else str(Path(data).resolve())
        os.environ[distributed_table.ENV] = distributed_table.Spec(
            source=source, scheduler=running.scheduler.address, partition_size=str(partition_size),
            connect_timeout=connect_timeout, local_workers=local_workers).to_env()
        print(f"Dask: {len(running.scheduler_info().get('workers', {}))} worker(s) at {running.scheduler.address}", flush=True)
        serve.main(argv)
    return 0


def start_data(data: str | None) -> str | None:
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
    check_regular_file(path, in_memory=True)
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


def free_port(host: str, port: int | None, first: int) -> int:
    """``port`` when it is free (else an input error), or the first free port from ``first`` (of :data:`PORT_TRIES`)."""
    if port is not None:
        if not 1 <= port <= 65535:
            raise CraftInputError(f"--port={port} must be between 1 and 65535.")
        if not port_free(host, port):
            raise CraftInputError(f"port {port} is in use on {host}: give another --port, or leave --port out to take the "
                                  f"first free port from {first}.")
        return port
    for candidate in range(first, first + PORT_TRIES):
        if port_free(host, candidate):
            return candidate
    raise CraftInputError(f"ports {first}-{first + PORT_TRIES - 1} are all in use on {host}: give a free one with --port.")


def port_free(host: str, port: int) -> bool:
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
