"""Threads of one fit: how many, the restarts run on them in restart order, and the λ search's fits run ahead.

Every run is a function of its own seed (a restart) or of its λ (a search
fit), so what a fit keeps does not depend on the threads
(``docs/numerics.md``, *Restarts on threads*).
"""

from __future__ import annotations

import concurrent.futures
import os
import threading
from collections.abc import Callable, Sequence
from typing import TypeVar

from . import _engine
from .encoding import EncodedData

_T = TypeVar("_T")


#: Least work of a pass at which ``n_jobs=None`` runs a fit's runs on several threads, in cells of the table: rows x
#: (categorical features + numeric features x :data:`NUMERIC_CELL_WEIGHT`). The compiled pass and update release
#: Python's lock, but the glue between them (about a quarter of a pass on Spambase, 60 of 220 µs) does not, and two threads read the
#: table through one cache: threads pay only where a pass's compiled work dominates. On two quiet cores, two
#: threads took Splice (3,190 x 60 categorical: 191,000) 0.74x and a 20,000-row mixed table (12 + 12: 300,000)
#: 0.67x as long as one, but Spambase (4,601 x 57 numeric: 66,000) 1.15x, a 5,000-row mixed table (75,000)
#: 1.03x, Credit-g (14,800) 1.11x, Soybean (23,900) 1.09x and Zoo 1.35x (``docs/RESULTS.md``, *Warm starts*).
THREADED_CELLS = 150_000
#: What a numeric cell counts against :data:`THREADED_CELLS`: the pass adds a numeric term in the processor's
#: vector lanes, and only for the selected features, a categorical one by a table look-up per cell.
NUMERIC_CELL_WEIGHT = 0.25


def _threads_for(data, n_jobs) -> int:
    """Threads for the runs of one fit on ``data``: ``n_jobs`` in memory (one on a Dask cluster, which spreads
    each pass), and with ``n_jobs=None`` one where a pass's work is below :data:`THREADED_CELLS`."""
    if not isinstance(data, (EncodedData, _engine.InMemory)):
        return 1
    backend = _engine.as_backend(data)
    work = backend.n_samples * (backend.template.n_categorical + NUMERIC_CELL_WEIGHT * backend.template.n_numeric)
    if n_jobs is None and work < THREADED_CELLS:
        return 1
    return _thread_count(n_jobs)


def _in_order(one: Callable[[int], _T], items: Sequence[int], threads: int) -> list[_T]:
    """``one(item)`` for every item, in the items' order, on up to ``threads`` threads.

    An item that raises stops the items not yet started; the first error in
    the items' order is raised.
    """
    if threads <= 1:
        return [one(item) for item in items]
    with concurrent.futures.ThreadPoolExecutor(max_workers=threads, thread_name_prefix="craft-restart") as pool_of:
        futures = [pool_of.submit(one, item) for item in items]
        try:
            return [future.result() for future in futures]
        finally:
            for future in futures:
                future.cancel()


def _thread_count(n_jobs) -> int:
    """Threads for ``n_jobs``: the number given, or with None one per core this process may run on."""
    if n_jobs is not None:
        return int(n_jobs)
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on every platform (macOS, Windows)
        return os.cpu_count() or 1


class _Abandoned(Exception):
    """Raised in a fit run ahead by the λ search once the search has gone the other way."""


class _FitsAhead:
    """The λ search's fits, each run once, the next ones started on spare threads before they are asked for.

    ``evaluate(lam, stop)`` runs the fit at ``lam``. ``plan(lam, following)``
    runs the fit at ``lam`` and, on the other threads, the first of the fits
    the search may ask for next; fits started earlier that are neither are
    stopped (each at its next pass: its callback raises once its ``stop`` is
    set). ``result(lam)`` waits for a planned fit. With one thread nothing is
    started ahead: ``result`` runs the fit where it is asked for. An error of
    a fit is raised only where the search asks for that fit, as the
    sequential search would meet it.
    """

    def __init__(self, evaluate: Callable, threads: int):
        self._evaluate = evaluate
        self._threads = threads
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=threads) if threads > 1 else None
        self._running: dict[float, tuple[concurrent.futures.Future, threading.Event]] = {}

    def __enter__(self) -> "_FitsAhead":
        return self

    def __exit__(self, *exc) -> None:
        for _, stop in self._running.values():
            stop.set()
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)

    def plan(self, lam: float, following: list[float]) -> None:
        if self._pool is None:
            return
        wanted = [lam, *following][: self._threads]
        for started, (future, stop) in list(self._running.items()):
            if started not in wanted:
                stop.set()
                future.cancel()
                del self._running[started]
        for value in wanted:
            if value not in self._running:
                stop = threading.Event()
                self._running[value] = (self._pool.submit(self._evaluate, value, stop), stop)

    def result(self, lam: float):
        planned = self._running.pop(lam, None)
        if planned is None:
            return self._evaluate(lam)
        return planned[0].result()
