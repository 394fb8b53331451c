"""``craft app``: find the app beside this copy of craft, check its extras and a partitioned DATA, and hand over to the
app's launcher (:func:`explorer.launch.serve_app`), which checks DATA in memory and the port and serves the app.

The app's package (``explorer``) is imported only here, inside :func:`_run_app`, after its extras are checked
and its folder is put on ``sys.path`` (a clone's root, or the installed ``craft_app``): the library and
the other commands never import it."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from .. import dask_io
from .._optional import require
from ..exceptions import CraftInputError
from ._common import _check_memory_limit, _check_run_options, _dask_client


#: The app's first port when --port is not given (Streamlit's); explorer.launch tries the ones after it.
_APP_PORT = 8501


def _run_app(args) -> int:
    """Check the app's extras and a partitioned DATA, then serve the app in this process (Streamlit's server;
    returns when it stops) with :func:`explorer.launch.serve_app`."""
    root = _app_root()
    for module, package in (("streamlit", "streamlit"), ("plotly", "plotly")):
        require(module, package=package, extra="app", needed_for="craft app")
    # The app imports its package `explorer` from the folder of app.py, as Streamlit runs it; the checks and the
    # warm-up import it from there too, so that the server and the sessions share one copy of each module.
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    from explorer import launch

    distributed = args.scheduler is not None or args.local_workers is not None
    if distributed:
        if args.data is None:
            raise CraftInputError("--scheduler and --local-workers need DATA: a folder of Parquet files, a glob of "
                                  "CSV or Parquet files, or a large file.")
        _check_run_options(args, distributed)
        table = dask_io.read_partitioned(args.data, partition_size=args.partition_size)
        if args.local_workers is not None:
            _check_memory_limit(args, table)
    return launch.serve_app(args.data, host=args.host, port=args.port, first_port=_APP_PORT, browser=args.browser,
                            client=(lambda: _dask_client(args)) if distributed else None,
                            partition_size=args.partition_size, connect_timeout=args.connect_timeout,
                            local_workers=args.local_workers)


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

