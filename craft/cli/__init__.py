"""The ``craft`` command: fit CRAFT on a file or a bundled dataset, in memory or on a Dask cluster.

Examples
--------
``craft fit wine --k 3 --out results/``
    Fit the bundled Wine data (its class column is the label) and write
    ``labels.csv``, ``masks.csv`` and ``summary.json`` into ``results/``.
``craft fit data.csv --m 0.4 --lam 25 --categorical colour,shape --label species --out results/``
    A file of your own; ``species`` is left out of the fit and used to score it.
``craft fit 'data/part-*.parquet' --local-workers 4 --lam 25 --out results/``
    The Dask backend on a local cluster of 4 worker processes; ``--scheduler
    tcp://host:8786`` uses a running cluster instead.
``craft datasets``
    The bundled datasets.
``craft app data.csv``
    The app (``pip install 'craft-explorer[app]'``) with ``data.csv`` loaded,
    on the first free port from 8501; ``--port`` and ``--no-browser`` as in
    ``streamlit run`` / ``jupyter lab``.

Exit status: 0 on success, 2 for invalid input (a bad option value, a
missing or unreadable file, a column that does not exist: the message is
printed on stderr, without a traceback), 1 for a missing optional package
(the message names the extra to install) or anything unexpected.

The package: :func:`main` here, the parser in ``_parser``, one module per command
(``_fit``, ``_predict``, ``_app``), and what they share in ``_common``.
"""

from __future__ import annotations

import os
import sys

from ..exceptions import CraftInputError
from ._parser import _parser


def main(argv: list[str] | None = None) -> int:
    """Run the ``craft`` command line; return its exit status.

    Parameters
    ----------
    argv : list of str, optional
        The arguments after the program name; ``sys.argv[1:]`` by default.

    Returns
    -------
    int
        0 on success, 2 for invalid input (message on stderr), 1 for a
        missing optional package (the message names the extra to install)
        or an unexpected error, 130 when interrupted.
    """
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # --help, --version, or a usage error (already printed)
        return int(exit_.code or 0) if not isinstance(exit_.code, str) else 2
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        return args.run(args)
    except CraftInputError as error:
        print(f"craft: error: {error}", file=sys.stderr)
        return 2
    except ImportError as error:  # a missing optional package: the message names the extra
        print(f"craft: error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("craft: interrupted", file=sys.stderr)
        return 130
    except Exception as error:  # noqa: BLE001 - the command line reports, it does not crash
        if os.environ.get("CRAFT_DEBUG"):
            raise
        print(
            f"craft: unexpected error: {type(error).__name__}: {error} (set CRAFT_DEBUG=1 for a traceback)",
            file=sys.stderr,
        )
        return 1
