"""Fits that run in background threads, shared by every session of the server: one job class, one registry.

A fit that a page waits for in the script thread blocks that session: while
it runs, no other page, tab or control of the session can be drawn. The app
therefore runs each fit in a :class:`FitJob`, a thread of its own named by
the fit's digest. A page that needs the fit waits for it, showing its
progress; a page that does not (the Data page) is drawn at once; a second
session asking for the same fit joins the running job instead of starting
another.

Sessions *hold* the job they wait for. When a session asks for another fit
(a parameter changed) it releases the previous one, and a job that no
session holds any more is cancelled at its next iteration; so is a job whose
holders have all gone (their browser tabs closed). A long fit never keeps
running for parameters nobody looks at.

A job runs below the page's priority (:data:`BACKGROUND_NICENESS`): the
page that asked for it is drawn first, and the job (its restart threads
too, which inherit its priority) takes what the page leaves of the cores.

This module does not import Streamlit: the app's cache layer
(:mod:`explorer.cache`) connects it to the pages, and it is tested on its own.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Callable, Hashable, cast

from craft import IterationRecord

from .services.fitting import FitOutcome


#: How many nice levels a background job runs below the thread that started the server (Linux, where each thread
#: has its own; a thread it starts inherits it). A provisional picture was drawn while the refined fit of the same
#: settings used both cores: 2.6x a bare slider's step in Chromium instead of the 1.7x of a fitted value.
BACKGROUND_NICENESS = 10


def lower_priority() -> None:
    """Run the calling thread :data:`BACKGROUND_NICENESS` nice levels lower (at most 19); nothing where the
    platform has no per-thread priority or refuses (the job then runs at the page's priority)."""
    try:
        thread = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, thread, min(19, os.getpriority(os.PRIO_PROCESS, thread) + BACKGROUND_NICENESS))
    except (AttributeError, OSError):
        pass


class FitCancelled(Exception):
    """Raised inside a fit's callback to stop a job nobody holds any more."""


class FitJob:
    """One computation of fits running (or finished) in its own thread, with its progress.

    The app's three kinds of background work are jobs of this one class:
    a fit (:mod:`explorer.cache`), an evidence computation of
    :mod:`craft.stability` (:mod:`explorer.evidence`) and a mask path
    (:mod:`explorer.mask_path`). They differ only in what their callback
    reports, and the job takes either:

    * ``callback(record)``, an :class:`IterationRecord` after every
      iteration of a fit: no total is known in advance (the λ search), so
      :attr:`fraction` creeps towards 95 % and :meth:`summary` counts
      iterations and runs;
    * ``callback(fraction, text)``, a known share done and what is being
      done (:mod:`craft.stability`'s callbacks, the mask path's grid):
      :attr:`fraction` is that share and :meth:`summary` that text.

    Parameters
    ----------
    key : str
        The computation's digest (for a fit: data, roles, parameters).
    compute : callable
        ``compute(callback)`` runs the computation, calling ``callback``
        as above, and returns its result (for a fit, its
        :class:`FitOutcome`).
    on_done : callable
        Called with the job from its thread once it has finished, however
        it ended (the registry forgets it then).
    alive : callable
        ``alive(holder)``: whether that holder (a browser session) still
        exists. Asked at most every :attr:`CHECK_SECONDS` during the fit.
    delay : float, default 0
        Seconds the thread waits at most before the fit starts: :meth:`go`
        starts it earlier, a cancellation ends it.

    Attributes
    ----------
    iterations : int
        Iterations done so far, λ-search fits and restarts included.
    runs : int
        Distinct runs (λ value, restart) seen so far.
    share : float or None
        The last share reported as ``(fraction, text)``; None while none was.
    step : str
        The text reported with it.
    outcome : FitOutcome or None
        The result, once the job has finished and was not cancelled.
    error : BaseException or None
        What the fit raised other than a cancellation (re-raised to waiters).
    """

    #: Seconds between two checks that some holder still exists.
    CHECK_SECONDS = 1.0

    def __init__(self, key: str, compute: Callable[[Callable], FitOutcome], on_done: Callable[["FitJob"], None],
                 alive: Callable[[Hashable], bool], delay: float = 0.0):
        self.key = key
        self.delay = delay
        self.iterations = 0
        self.share: float | None = None
        self.step = "starting"
        self.outcome: FitOutcome | None = None
        self.error: BaseException | None = None
        self.started = time.monotonic()
        self.ended: float | None = None
        self._runs: set = set()
        self._holders: set[Hashable] = set()
        self._cancel = threading.Event()
        self._done = threading.Event()
        self._go_at = float("inf")
        self._compute = compute
        self._on_done = on_done
        self._alive = alive
        self._checked = self.started
        self._thread = threading.Thread(target=self._work, name=f"craft-fit-{key[:8]}", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def go(self, after: float = 0.0) -> None:
        """Start a delayed fit ``after`` seconds from now (the page that asked for it is drawn), or at the end
        of its delay if that comes first; nothing once it has started."""
        self._go_at = min(self._go_at, time.monotonic() + after)

    def _check(self) -> None:
        """Raise :class:`FitCancelled` if the job was cancelled or none of its holders exists any more."""
        now = time.monotonic()
        if now - self._checked >= self.CHECK_SECONDS:
            self._checked = now
            if not any(self._alive(holder) for holder in list(self._holders)):
                self._cancel.set()
        if self._cancel.is_set():
            raise FitCancelled(self.key)

    def _record(self, progress: IterationRecord | float, text: str | None = None) -> None:
        """The computation's callback: ``(record)`` after an iteration, or ``(fraction, text)`` (see the class)."""
        self._check()
        if text is None:
            record = cast(IterationRecord, progress)
            self.iterations += 1
            self._runs.add((record.lam, record.restart))
        else:
            self.share = float(cast(float, progress))
            self.step = text

    def _work(self) -> None:
        lower_priority()
        try:
            # A delayed job leaves the cores to the page that asked for it first (a provisional fit drawn) until
            # the page says it is drawn (go) or the delay ends; a cancellation meanwhile ends it before it starts.
            while time.monotonic() < min(self.started + self.delay, self._go_at):
                if self._cancel.wait(0.005):
                    raise FitCancelled(self.key)
            if self._cancel.is_set():
                raise FitCancelled(self.key)
            self.outcome = self._compute(self._record)
        except FitCancelled:
            pass
        except BaseException as error:  # handed to whoever waits, as a fit in the script thread would raise it
            self.error = error
        finally:
            self.ended = time.monotonic()
            try:
                self._on_done(self)  # before waking waiters: they find the outcome where on_done put it
            finally:
                self._done.set()

    @property
    def runs(self) -> int:
        return len(self._runs)

    @property
    def fraction(self) -> float:
        """A share for a progress bar: the share reported, else (a fit: no total is known in advance, the λ
        search) one that creeps towards 95 % with the iterations."""
        if self.share is not None:
            return min(max(self.share, 0.0), 1.0)
        return 0.95 * (1.0 - 1.0 / (1.0 + self.iterations / 40.0))

    def summary(self) -> str:
        """How far the computation is, in words."""
        if self.share is not None:
            return f"{self.step}, {self.seconds:.0f} s"
        return f"{self.iterations:,} iterations in {self.runs} run(s), {self.seconds:.0f} s"

    @property
    def seconds(self) -> float:
        """Wall time so far (or in all, once finished)."""
        return (self.ended if self.ended is not None else time.monotonic()) - self.started

    @property
    def done(self) -> bool:
        return self._done.is_set()

    @property
    def cancelled(self) -> bool:
        """Whether the job was asked to stop (it may still be finishing its iteration)."""
        return self._cancel.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the job has finished or ``timeout`` seconds passed; whether it has finished."""
        return self._done.wait(timeout)

    def result(self) -> FitOutcome | None:
        """The outcome of a finished job: None if it was cancelled; re-raises what the fit raised."""
        if self.error is not None:
            raise self.error
        return self.outcome

    def cancel(self) -> None:
        """Stop the fit at its next iteration, whoever holds it; a finished job stays as it is."""
        if not self._done.is_set():
            self._cancel.set()


class FitJobs:
    """The running fits of a server, by digest.

    Parameters
    ----------
    on_result : callable
        ``on_result(key, outcome)``, called from a job's thread when its fit
        has finished (e.g. to keep the outcome in the app's cache before the
        job is forgotten, so a waiter that rerun meanwhile finds it).
    alive : callable, default: every holder lives
        ``alive(holder)``: whether a holder still exists (see :class:`FitJob`).
    """

    def __init__(self, on_result: Callable[[str, FitOutcome], None], alive: Callable[[Hashable], bool] = lambda holder: True):
        self._jobs: dict[str, FitJob] = {}
        self._lock = threading.Lock()
        self._on_result = on_result
        self._alive = alive

    def submit(self, key: str, holder: Hashable, compute: Callable[[Callable], FitOutcome], delay: float = 0.0) -> FitJob:
        """The running job for ``key`` (``holder`` now holds it), started with ``compute`` if there is none.

        A job cancelled but still finishing its iteration is replaced by a
        new one: the holder wants the fit after all. ``delay``: seconds a
        new job waits before it computes (:class:`FitJob`).
        """
        with self._lock:
            job = self._jobs.get(key)
            if job is None or job.cancelled:
                job = FitJob(key, compute, self._finished, self._alive, delay=delay)
                self._jobs[key] = job
                job._holders.add(holder)
                job.start()
            else:
                job._holders.add(holder)
            return job

    def release(self, key: str, holder: Hashable) -> None:
        """``holder`` no longer waits for ``key``; the job is cancelled if nobody else does."""
        with self._lock:
            job = self._jobs.get(key)
            if job is None:
                return
            job._holders.discard(holder)
            if not job._holders:
                job.cancel()

    def cancel(self, key: str) -> None:
        """Stop ``key``'s job whoever holds it (a user's Cancel button)."""
        with self._lock:
            job = self._jobs.get(key)
        if job is not None:
            job.cancel()

    def cancel_all(self) -> list[FitJob]:
        """Stop every job whoever holds it (a page's background work that must not outlive its app); the jobs."""
        with self._lock:
            jobs = list(self._jobs.values())
        for job in jobs:
            job.cancel()
        return jobs

    def running(self, key: str) -> FitJob | None:
        """The job computing ``key``, if one runs and is not cancelled."""
        with self._lock:
            job = self._jobs.get(key)
        return job if job is not None and not job.cancelled else None

    def __len__(self) -> int:
        with self._lock:
            return len(self._jobs)

    def _finished(self, job: FitJob) -> None:
        if job.outcome is not None:
            self._on_result(job.key, job.outcome)
        with self._lock:
            if self._jobs.get(job.key) is job:
                del self._jobs[job.key]
