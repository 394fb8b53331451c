"""Background fits (``explorer.jobs``): shared by digest, cancelled when nobody holds them, exact results."""

from __future__ import annotations

import os
import threading
import warnings

import numpy as np
import pytest

from explorer import jobs, services
from explorer.services import FitParams


class Results:
    """What the registry handed to ``on_result``, by key."""

    def __init__(self):
        self.by_key = {}

    def __call__(self, key, outcome):
        self.by_key[key] = outcome


def record(iteration=1, lam=1.0, restart=0):
    return type("Record", (), {"iteration": iteration, "lam": lam, "restart": restart})()


def blocked_fit(gate: threading.Event, started: threading.Event | None = None, iterations: int = 1000):
    """A compute that reports iterations until ``gate`` opens, then returns an outcome."""

    def compute(callback):
        if started is not None:
            started.set()
        for iteration in range(iterations):
            callback(record(iteration, restart=iteration % 3))
            if gate.wait(0.01):
                callback(record(iteration + 1))  # a last iteration, as a fit ends with one after its change
                return services.FitOutcome(None, error=f"done after {iteration + 2}")
        return services.FitOutcome(None, error="ran out")

    return compute


def test_a_job_hands_its_outcome_to_the_registry_before_waking_waiters_and_is_then_forgotten():
    results = Results()
    registry = jobs.FitJobs(results)
    gate = threading.Event()
    job = registry.submit("a", "session-1", blocked_fit(gate))
    assert not job.wait(0.05) and registry.running("a") is job and len(registry) == 1
    gate.set()
    assert job.wait(10)
    # Waking after on_result: a waiter that looks in the store finds the outcome.
    assert results.by_key["a"] is job.result() and job.result().error.startswith("done after")
    assert job.iterations >= 1 and job.runs == min(job.iterations, 3)
    assert registry.running("a") is None and len(registry) == 0


def test_two_sessions_asking_the_same_fit_share_one_job():
    calls = []
    gate = threading.Event()

    def compute(callback):
        calls.append(1)
        return blocked_fit(gate)(callback)

    registry = jobs.FitJobs(Results())
    first = registry.submit("a", "session-1", compute)
    second = registry.submit("a", "session-2", compute)
    assert first is second
    gate.set()
    assert first.wait(10)
    assert calls == [1]


def test_releasing_the_only_holder_cancels_at_the_next_iteration():
    results = Results()
    registry = jobs.FitJobs(results)
    gate, started = threading.Event(), threading.Event()
    job = registry.submit("a", "session-1", blocked_fit(gate, started))
    assert started.wait(10)
    registry.release("a", "session-1")
    assert job.cancelled
    assert job.wait(10)
    assert job.result() is None and "a" not in results.by_key
    assert registry.running("a") is None


def test_a_job_another_session_holds_goes_on():
    registry = jobs.FitJobs(Results())
    gate = threading.Event()
    job = registry.submit("a", "session-1", blocked_fit(gate))
    registry.submit("a", "session-2", blocked_fit(gate))
    registry.release("a", "session-1")
    assert not job.cancelled and not job.wait(0.1)
    gate.set()
    assert job.wait(10) and job.result() is not None


def test_a_cancelled_job_asked_for_again_is_a_new_job():
    registry = jobs.FitJobs(Results())
    gate = threading.Event()
    job = registry.submit("a", "session-1", blocked_fit(gate))
    registry.cancel("a")
    again = registry.submit("a", "session-1", blocked_fit(gate))
    assert again is not job and not again.cancelled
    gate.set()
    assert job.wait(10) and again.wait(10)
    assert job.result() is None and again.result() is not None
    # The cancelled job finishing later does not forget its successor.
    assert registry.running("a") is None and len(registry) == 0


def test_what_a_fit_raises_reaches_the_waiter():
    def compute(callback):
        raise ValueError("broken")

    job = jobs.FitJobs(Results()).submit("a", "session-1", compute)
    assert job.wait(10)
    with pytest.raises(ValueError, match="broken"):
        job.result()


@pytest.fixture(scope="module")
def wine():
    data = services.load_example("wine")
    schema, _ = services.fit_schema(data, {}, data.label)
    return data, schema


def _fit(wine, params, callback=None):
    data, schema = wine
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return services.fit_craft(data.table, schema, params, callback=callback)


def test_a_background_fit_equals_the_same_fit_in_the_calling_thread(wine):
    params = FitParams(k=3, n_init=3, seed=4)
    job = jobs.FitJobs(Results()).submit("wine", "session-1", lambda callback: _fit(wine, params, callback))
    assert job.wait(120)
    background, direct = job.result().model, _fit(wine, params).model
    np.testing.assert_array_equal(background.labels_, direct.labels_)
    np.testing.assert_array_equal(background.feature_mask_, direct.feature_mask_)
    assert background.objective_ == direct.objective_
    # Every iteration of every run was counted (λ search included).
    assert job.iterations >= sum(1 for _ in direct.history_) and job.runs >= 3


def test_a_real_fit_stops_within_one_iteration_of_its_cancellation(wine):
    counted = []
    reached = threading.Event()

    def callback(record):
        counted.append(record)
        if len(counted) >= 3:
            reached.set()
            # Hold the fit here until the test has cancelled it (every thread of it: restarts run on threads).
            assert cancelled.wait(10)

    cancelled = threading.Event()
    registry = jobs.FitJobs(Results())
    params = FitParams(k=3, n_init=10, max_iter=100, seed=0)

    def compute(job_callback):
        def both(record):
            job_callback(record)
            callback(record)
        return _fit(wine, params, both)

    job = registry.submit("wine", "session-1", compute)
    assert reached.wait(60)
    registry.release("wine", "session-1")
    cancelled.set()
    assert job.wait(60)
    assert job.result() is None
    # Each thread's iteration after the cancellation raised before counting: besides the third, at most one
    # iteration per other thread (each restart of a fit runs on its own thread, CRAFT(n_jobs=None)).
    threads = len(os.sched_getaffinity(0))
    assert job.iterations == len(counted)
    assert 3 <= len(counted) <= 3 + threads - 1


def test_a_job_whose_holders_all_left_is_cancelled(monkeypatch):
    monkeypatch.setattr(jobs.FitJob, "CHECK_SECONDS", 0.05)
    gone = set()
    registry = jobs.FitJobs(Results(), alive=lambda holder: holder not in gone)
    gate, started = threading.Event(), threading.Event()
    job = registry.submit("a", "session-1", blocked_fit(gate, started))
    registry.submit("a", "session-2", blocked_fit(gate))
    assert started.wait(10)
    gone.add("session-1")
    assert not job.wait(0.3) and not job.cancelled  # session-2 still there
    gone.add("session-2")  # its tab closed too: nobody will look at this fit
    assert job.wait(10) and job.cancelled and job.result() is None


def test_cancel_all_stops_every_job_whoever_holds_it():
    results = Results()
    registry = jobs.FitJobs(results)
    gate = threading.Event()
    running = [registry.submit(key, holder, blocked_fit(gate)) for key, holder in (("a", "s1"), ("b", "s2"))]
    assert sorted(job.key for job in registry.cancel_all()) == ["a", "b"]
    assert all(job.wait(10) and job.cancelled and job.result() is None for job in running)
    assert results.by_key == {} and len(registry) == 0


def test_one_job_class_reports_a_fits_iterations_and_a_known_share_with_its_step():
    """The fit, evidence and mask-path jobs are one class (issue 33): a ``(fraction, text)`` callback (craft.stability's,
    the path's grid) shows that share and text; an iteration record the creeping share and the iteration count."""
    registry = jobs.FitJobs(Results())
    gate, reported = threading.Event(), threading.Event()

    def shares(callback):
        callback(0.25, "refit 5 of 20")
        reported.set()
        gate.wait(10)
        callback(1.0, "done")
        return services.FitOutcome(None, error="evidence")

    job = registry.submit("evidence", "session-1", shares)
    assert reported.wait(10)
    assert job.fraction == 0.25 and job.summary().startswith("refit 5 of 20, ") and job.iterations == 0
    gate.set()
    assert job.wait(10) and job.fraction == 1.0
    fit = registry.submit("fit", "session-1", blocked_fit(threading.Event(), iterations=3))
    assert fit.wait(10) and fit.share is None and 0 < fit.fraction < 0.95
    assert fit.summary().startswith("3 iterations in ")


@pytest.mark.skipif(not hasattr(os, "setpriority") or not hasattr(threading, "get_native_id"),
                    reason="no per-thread priority on this platform")
def test_a_job_and_the_threads_it_starts_run_below_the_page():
    """The page that asked for a fit is drawn first: the job's thread, and a thread it starts (a restart), run
    BACKGROUND_NICENESS nice levels lower than the thread that started it (up to the lowest, 19)."""
    page = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    seen = {}

    def compute(callback):
        seen["job"] = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
        restart = threading.Thread(target=lambda: seen.update(restart=os.getpriority(os.PRIO_PROCESS, threading.get_native_id())))
        restart.start()
        restart.join()
        return services.FitOutcome(None, error="done")

    job = jobs.FitJobs(Results()).submit("nice", "session-1", compute)
    assert job.wait(10)
    expected = min(19, page + jobs.BACKGROUND_NICENESS)
    assert seen == {"job": expected, "restart": expected}
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == page  # the page's own thread untouched


def test_a_delayed_job_starts_when_told_to_and_a_cancellation_ends_it_before_it_starts():
    """The refinement of a provisional fit waits for its page to be drawn (go), at most its delay."""
    registry = jobs.FitJobs(Results())
    started = threading.Event()
    job = registry.submit("delayed", "session-1", blocked_fit(threading.Event(), started, iterations=1), delay=30.0)
    assert not started.wait(0.2)
    job.go()
    assert started.wait(5) and job.wait(5)
    untold = registry.submit("untold", "session-1", blocked_fit(threading.Event(), threading.Event()), delay=30.0)
    registry.release("untold", "session-1")
    assert untold.wait(5) and untold.result() is None  # cancelled while it waited: never computed
