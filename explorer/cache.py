"""Cached engine calls of the app.

Every function here is a thin cached wrapper around a pure function of
:mod:`explorer.services`, :mod:`craft.profiles`, :mod:`craft.plots` or
:mod:`craft.report`. Cache keys are explicit and hashable: the data's
fingerprint (``LoadedData.key``: the SHA-256 of uploaded bytes or the name,
rows and seed of an example), the column roles and the parameters. Tables and
models are passed as ``_``-prefixed arguments, which are not part of the key
(as in Streamlit's caches): they are determined by it.

Every cache of the app is bounded by bytes as well as by entries, so that a
server's memory levels off however many different tables its sessions fit
(Streamlit's own caches are bounded only by entries: 64 data heatmaps of
large tables, a few reports and uploads held hundreds of megabytes).
Results are kept in :data:`STORE`, an LRU of pickled results bounded by bytes
(a share of the machine's memory), with the copy-per-caller semantics of
``st.cache_data``: fits and per-fit tables (the app's fits keep every
iteration's labels for Teach, up to ``services.fitting.TEACH_ROWS`` rows), tables read, Compare, What-if, stability and the
report, the Cluster cards' cost matrices and cards (:mod:`explorer.cards`). Figures (the cards' too) and
the SVG/PNG images made for downloads (:func:`explorer.figure_export.static_image`) are kept in :data:`FIGURES` (a quarter of that share), one
object shared by every session and never mutated (drawing it only reads
it: ``explorer.plotly_view``), because an unpickled copy of a Plotly figure re-validates every
property (70 ms for the mask heatmap, most of a view-only rerun); their bytes
are estimated from the arrays and text they hold (:func:`object_bytes`).
``benchmarks/bench_cache.py`` shows a server's memory level off over many
fits; ``tests/app/test_cache.py`` checks it in-process.

CRAFT fits run in background threads (:mod:`explorer.jobs`), one per fit
digest for the whole server: a page that needs the fit waits for it with a
progress bar and a Cancel button, a page that does not is drawn at once, and
a changed parameter cancels the fit that nobody waits for any more. The
other long computations (Compare, What-if, stability) run in the script
thread, with a progress bar created inside the cached function (a cache hit
draws none). Every bar appears only after a short delay.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import inspect
import os
import pickle
import sys
import threading
import time
import uuid
from collections import OrderedDict
from typing import Any, Callable, Hashable, cast

import numpy as np
import pandas as pd
import streamlit as st
from plotly.basedatatypes import BaseFigure
from streamlit import runtime
from streamlit.runtime.scriptrunner import get_script_run_ctx

from craft import plots, profiles, report
from craft import stability as stability_lib
from craft.metrics import align_clusters

from . import distributed_table, jobs
from .services import compare as compare_services
from .services import fitting, loading, whatif
from .services import scoring as scoring_services
from .services.fitting import FitOutcome
from .services.params import FitParams

_FIT_ENTRIES = 64
_DERIVED_ENTRIES = 64


def _budget_bytes() -> int:
    """Bytes for :data:`STORE`: a sixteenth of the memory available at start, within 64-512 MiB.

    ``CRAFT_APP_CACHE_MB`` overrides it (a server that wants another bound).
    """
    if os.environ.get("CRAFT_APP_CACHE_MB"):
        return int(float(os.environ["CRAFT_APP_CACHE_MB"]) * 2**20)
    try:
        available = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):  # not every platform says
        available = 4 * 2**30
    return int(min(512 * 2**20, max(64 * 2**20, available // 16)))


class SizedStore:
    """An LRU of results bounded by their total bytes and their number.

    By default results are kept pickled and each hit unpickles a fresh copy
    (as ``st.cache_data`` does), so callers never share a mutable object;
    the bytes counted are the pickle's. With ``shared=True`` the objects
    themselves are kept and handed to every caller (as ``st.cache_resource``
    does: figures, never mutated), counted by :func:`object_bytes`. A result
    larger than the whole budget is returned but not kept.
    """

    def __init__(self, max_bytes: int, max_entries: int, *, shared: bool = False):
        self.max_bytes = max_bytes
        self.max_entries = max_entries
        self.shared = shared
        self._entries: OrderedDict[str, tuple[object, int]] = OrderedDict()
        self._lock = threading.Lock()
        self.n_bytes = 0

    def get(self, key: str):
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            self._entries.move_to_end(key)
        return entry[0] if self.shared else pickle.loads(entry[0])  # type: ignore[arg-type]

    def put(self, key: str, value) -> None:
        if self.shared:
            item, size = value, object_bytes(value)
        else:
            item = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
            size = len(item)
        with self._lock:
            if key in self._entries:
                self.n_bytes -= self._entries.pop(key)[1]
            if size > self.max_bytes:
                return
            self._entries[key] = (item, size)
            self.n_bytes += size
            while self.n_bytes > self.max_bytes or len(self._entries) > self.max_entries:
                _, (_, oldest) = self._entries.popitem(last=False)
                self.n_bytes -= oldest

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: str) -> bool:
        """Whether ``key`` is kept (without unpickling it)."""
        with self._lock:
            return key in self._entries

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.n_bytes = 0


def object_bytes(value, depth: int = 0) -> int:
    """Bytes an object holds, estimated from its arrays, strings and containers (figures included).

    A Plotly figure is counted by its traces' and layout's property values (the arrays it draws and their
    hover text), read without serializing it; pandas objects by their deep memory usage. A long sequence
    of Python objects (a heatmap's hover text) is counted from a sample of its items, so that the estimate
    costs little beside building the figure.
    """
    if depth > 12:
        return sys.getsizeof(value)
    if isinstance(value, BaseFigure):
        # The stored properties themselves: to_plotly_json() deep-copies them (seconds for a wide heatmap).
        parts = [getattr(part, "_props", None) or part.to_plotly_json() for part in (*value.data, value.layout)]
        return object_bytes(parts, depth + 1)
    if isinstance(value, np.ndarray):
        return int(value.nbytes) + (_items_bytes(value.ravel(), depth) if value.dtype == object else 0)
    if isinstance(value, (pd.DataFrame, pd.Series)):
        return int(np.sum(value.memory_usage(deep=True)))
    if isinstance(value, (str, bytes, bytearray)):
        return sys.getsizeof(value)
    if isinstance(value, dict):
        return sys.getsizeof(value) + _items_bytes(list(value.values()), depth)
    if isinstance(value, (list, tuple, set, frozenset)):
        return sys.getsizeof(value) + _items_bytes(list(value) if isinstance(value, (set, frozenset)) else value, depth)
    return sys.getsizeof(value)


def _items_bytes(items, depth: int, sample: int = 64) -> int:
    """Bytes of a sequence's items: all of them when few, else a spread sample scaled to their number."""
    n = len(items)
    if n <= sample:
        return sum(object_bytes(item, depth + 1) for item in items)
    picked = np.linspace(0, n - 1, sample).astype(np.intp)
    return int(sum(object_bytes(items[i], depth + 1) for i in picked) * n / sample)


#: The fits, per-fit tables, tables read and pages' computations of every session of this server.
STORE = SizedStore(_budget_bytes(), max_entries=_FIT_ENTRIES + 3 * _DERIVED_ENTRIES)
#: The figures, shared by every session (never mutated): a quarter of :data:`STORE`'s bytes.
FIGURES = SizedStore(_budget_bytes() // 4, max_entries=4 * _DERIVED_ENTRIES, shared=True)


def kept_in(store: SizedStore, *, spinner: str | None = None):
    """Memoize a function in ``store`` by its arguments not prefixed with ``_`` (as Streamlit's caches).

    Every cache of the app is made with it (here, :mod:`explorer.cards`, :mod:`explorer.figure_export`):
    ``kept_in(STORE)`` for results handed out as copies (``st.cache_data``'s semantics), ``kept_in(FIGURES)``
    for objects shared and never mutated (``st.cache_resource``'s), so that all are bounded by bytes.

    ``spinner``: the text shown while a result not kept yet is computed (``st.cache_data``'s
    ``show_spinner``).
    """
    def decorate(function):
        signature = inspect.signature(function)

        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            bound = signature.bind(*args, **kwargs)
            named = tuple((name, value) for name, value in bound.arguments.items() if not name.startswith("_"))
            key = hashlib.sha256(repr((function.__module__, function.__qualname__, named)).encode()).hexdigest()
            found = store.get(key)
            if found is not None:
                return found
            with st.spinner(spinner) if spinner else contextlib.nullcontext():
                value = function(*args, **kwargs)
            store.put(key, value)
            return value

        return wrapper

    return decorate


_stored = kept_in(STORE)
_shared = kept_in(FIGURES)


class _Progress:
    """A progress bar, shown once a computation has lasted ``delay`` seconds."""

    def __init__(self, label: str, *, delay: float = 0.25, every: float = 0.1):
        self.label = label
        self.delay = delay
        self.every = every
        self.start = time.monotonic()
        self.last = 0.0
        self.bar: Any = None
        self.holder: Any = None

    def _show(self, fraction: float, text: str, cancel=None) -> None:
        """Draw or move the bar; ``cancel`` (a callable) puts a Cancel button beside it when it appears."""
        now = time.monotonic()
        if now - self.start < self.delay or now - self.last < self.every:
            return
        self.last = now
        fraction = min(max(float(fraction), 0.0), 1.0)
        if self.bar is not None:
            self.bar.progress(fraction, text=text)
            return
        if cancel is None:
            self.bar = st.progress(fraction, text=text)
            return
        # The bar and its button share one placeholder, so that closing the bar takes the button with it:
        # a Cancel button left beside a finished fit would throw the fit away.
        self.holder = st.empty()
        slot = self.holder.container(key="fit_progress")
        self.bar = slot.progress(fraction, text=text)
        slot.button("Cancel the fit", key="cancel_fit", on_click=cancel, icon=":material/stop_circle:",
                    help="Stop this fit; the page then says so and offers to fit again.")

    def job(self, job: jobs.FitJob, cancel=None) -> None:
        """Show a background fit's progress (λ-search fits included)."""
        self._show(job.fraction, f"{self.label}: {job.summary()}…", cancel)

    def step(self, fraction: float, text: str) -> None:
        """Callback of the sweeps: a known share done."""
        self._show(fraction, f"{self.label}: {text}")

    def close(self) -> None:
        """Remove the bar (and its Cancel button)."""
        if self.holder is not None:
            self.holder.empty()
        elif self.bar is not None:
            self.bar.empty()


def fit_key(data_key: str, schema, params: FitParams) -> str:
    """A short digest that names one fit (data, roles, parameters)."""
    return _fit_digest(data_key, tuple(schema.numeric), tuple(schema.categorical), params)


def _fit_digest(data_key: str, numeric: tuple, categorical: tuple, params: FitParams) -> str:
    text = repr((data_key, numeric, categorical, params))
    return hashlib.sha256(text.encode()).hexdigest()[:20]


@kept_in(STORE, spinner="Loading the example…")
def load_example(name: str, n_samples: int, seed: int) -> loading.LoadedData:
    """A bundled example (see :func:`explorer.services.loading.load_example`)."""
    return loading.load_example(name, n_samples=n_samples, seed=seed)


@kept_in(STORE, spinner="Reading the file…")
def load_upload(sha: str, file_name: str, _data: bytes, tokens_in_text: bool = False,
                sheet: str | None = None) -> loading.LoadedData:
    """An uploaded table, keyed by the SHA-256 of its bytes and the reading options."""
    return loading.load_upload(_data, file_name, tokens_in_text=tokens_in_text, sheet=sheet)


@kept_in(STORE, spinner="Reading the original cells…")
def original_cells(key: str, _data: loading.LoadedData, _content: bytes | None):
    """The cells of an upload as the file holds them (for the labels CSV), keyed by the data key."""
    return loading.original_cells(_data, _content)


def session_alive(holder: Hashable) -> bool:
    """Whether the browser session of ``holder`` (a :func:`session_token`) is still connected (always, outside a server)."""
    session_id = cast(tuple[str, str], holder)[0]
    return not runtime.exists() or bool(runtime.get_instance().is_active_session(session_id))


def background_jobs() -> jobs.FitJobs:
    """A registry of background jobs held by browser sessions, whose results go to :data:`STORE`.

    The app keeps three, one per kind of work (its fits here, :mod:`explorer.evidence`'s computations,
    :mod:`explorer.mask_path`'s paths), so that one kind's Cancel-all or count leaves the others alone.
    """
    return jobs.FitJobs(on_result=STORE.put, alive=session_alive)


#: The fits running in background threads; a finished one goes to :data:`STORE` before it is forgotten.
JOBS = background_jobs()

#: How often a job's progress shown by :func:`background_progress` is polled (seconds).
BACKGROUND_POLL_SECONDS = 0.5


def background_progress(job: jobs.FitJob, *, key: str, text: str, on_cancel: Callable[..., None],
                        args: tuple = ()) -> None:
    """A running job's progress and its Cancel button, polled in a fragment; the page reruns when it has finished.

    For work a page does not wait for (the evidence of Evaluate, the mask path); a page that waits for its fit
    shows it with :func:`wait_for`.

    Parameters
    ----------
    job : explorer.jobs.FitJob
        The job shown.
    key : str
        Names the bar's container (``<key>_progress``) and the button (``cancel_<key>``).
    text : str
        What the job computes, followed by its summary on the bar.
    on_cancel, args : callable and its arguments
        What the Cancel button calls.
    """

    @st.fragment(run_every=BACKGROUND_POLL_SECONDS)
    def poll() -> None:
        if job.done or job.cancelled:
            st.rerun()
        box = st.container(key=f"{key}_progress")
        box.progress(job.fraction, text=f"{text} in the background: {job.summary()}. "
                                        "The rest of the app is usable meanwhile.")
        box.button("Cancel", key=f"cancel_{key}", on_click=on_cancel, args=args, icon=":material/stop_circle:")

    poll()


def session_token() -> tuple[str, str]:
    """Names this browser session as the holder of the fits it waits for.

    Streamlit's session id (to ask whether the session is still connected)
    and a token kept in the session's state (distinct even where ids are
    not: AppTest gives every session the same id).
    """
    run = get_script_run_ctx()
    own = st.session_state.setdefault("_session_token", uuid.uuid4().hex)
    return (run.session_id if run is not None else own, own)


def _job_of(key: str, numeric: tuple, categorical: tuple, params: FitParams, table, schema,
            delay: float = 0.0) -> jobs.FitJob:
    opened = distributed_table.table_of_frame(table)
    if opened is not None:  # a table on a Dask cluster: DaskCRAFT on every row (explorer/distributed_table.py)
        return JOBS.submit(key, session_token(), lambda callback: distributed_table.fit(opened, schema, params, callback),
                           delay=delay)
    return JOBS.submit(key, session_token(), lambda callback: fitting.fit_craft(table, schema, params, callback=callback),
                       delay=delay)


def request_fit(data_key: str, numeric: tuple, categorical: tuple, params: FitParams, table, schema,
                delay: float = 0.0) -> FitOutcome | jobs.FitJob:
    """This session's main fit: its outcome if known, else the job computing it (not waited for).

    The session holds the job until it asks for another fit, which releases
    it (and cancels it unless another session waits for it). A finished job
    of this session answers too, so an outcome too large for :data:`STORE`
    is not recomputed at every rerun. ``delay``: seconds a new job waits
    before it starts (the page draws a provisional fit meanwhile).
    """
    key = _fit_digest(data_key, numeric, categorical, params)
    held = st.session_state.get("_fit_job")
    if held is not None and held.key != key:
        JOBS.release(held.key, session_token())
        del st.session_state["_fit_job"]
        held = None
    found = STORE.get(key)
    if found is not None:
        return found
    if held is not None and held.done and held.outcome is not None:
        outcome = finished(held)
        if outcome is not None:
            return outcome
    job = _job_of(key, numeric, categorical, params, table, schema, delay=delay)
    st.session_state["_fit_job"] = job
    return job


def cancelled_fit() -> tuple[str, int] | None:
    """The key and iteration count of the fit this session cancelled, while it still asks for it.

    A Cancel that reached the fit after its last iteration stopped nothing: the fit finished and is
    kept, so it is shown, not reported as cancelled.
    """
    cancelled = st.session_state.get("_fit_cancelled")
    if cancelled is not None and _known(cancelled[0]):
        clear_cancelled()
        return None
    return cancelled


def _known(key: str) -> bool:
    """Whether the fit named ``key`` finished with an outcome (kept in :data:`STORE` or by this session's job)."""
    held = st.session_state.get("_fit_job")
    if held is not None and held.key == key and held.done:
        return held.outcome is not None
    return STORE.get(key) is not None


def clear_cancelled() -> None:
    """Ask for the cancelled fit again (the "Fit again" button)."""
    st.session_state.pop("_fit_cancelled", None)


def _cancel(job: jobs.FitJob) -> None:
    """The Cancel button's callback: stop ``job`` unless it has finished (then it does nothing)."""
    if job.done:
        return
    st.session_state["_fit_cancelled"] = (job.key, job.iterations)
    JOBS.cancel(job.key)


def wait_for(job: jobs.FitJob, label: str = "Fitting CRAFT", *, cancellable: bool = False) -> FitOutcome | None:
    """Wait for ``job`` with a progress bar; its outcome, or None if it was cancelled.

    A rerun (a parameter changed, another page chosen) interrupts the wait
    at the bar's next update; the job goes on in its thread. ``cancellable``
    puts a Cancel button beside the bar (this session's main fit: one per
    run).
    """
    # The bar's delay counts from the fit's start: a page opened on a fit already running shows it at once.
    progress = _Progress(label, delay=max(0.0, 0.25 - job.seconds))
    cancel = (lambda: _cancel(job)) if cancellable else None
    try:
        while not job.wait(progress.every / 2):
            progress.job(job, cancel)
    finally:
        progress.close()
    return finished(job)


def finished(job: jobs.FitJob) -> FitOutcome | None:
    """A finished job's outcome for this caller (its own copy), or None if it was cancelled."""
    outcome = job.result()
    found = STORE.get(job.key)
    return found if found is not None or outcome is None else _own_copy(outcome)


def _own_copy(outcome: FitOutcome) -> FitOutcome:
    """A copy for one caller, as :data:`STORE` hands out (an outcome larger than the whole store is not kept)."""
    return pickle.loads(pickle.dumps(outcome, protocol=pickle.HIGHEST_PROTOCOL))


def fit(data_key: str, numeric: tuple, categorical: tuple, params: FitParams, _table, _schema) -> FitOutcome | None:
    """One CRAFT fit, waited for; the key is the data fingerprint, the roles and the parameters.

    None when the fit was cancelled (by this session's Cancel button, or by
    every session that waited for it moving on).
    """
    key = _fit_digest(data_key, numeric, categorical, params)
    found = STORE.get(key)
    return found if found is not None else wait_for(_job_of(key, numeric, categorical, params, _table, _schema))


@_stored
def cluster_profiles(key: str, _model):
    """Per-cluster profiles of the fit named ``key`` (read from its inspection surface)."""
    return profiles.cluster_profiles(_model)


@_shared
def profile_figures(key: str, cluster: int, feature: str | None, _model, _X, _profiles):
    """Sizes, profile overview and one feature's detail for the fit named ``key``."""
    sizes = plots.fig_cluster_sizes(_model)
    overview = plots.fig_profile_overview(_profiles, cluster, budget=_model.budget)
    detail = None if feature is None else plots.fig_feature_detail(_model, _X, cluster, feature)
    return sizes, overview, detail


@_stored
def projection(key: str, max_points: int, _model, _X):
    """PCA projection of the fit named ``key``."""
    return plots.projection_frame(_model, _X, max_points=max_points)


def default_order(data) -> str:
    """The feature order Tune & see opens with: table order where the planted subspaces are known (they are blocks
    in it), else the subspaces as blocks."""
    return "natural" if data.true_mask is not None else "subspace"


@_shared
def masks_figure(key: str, order: str, with_truth: bool, _model, _data):
    """The mask heatmap of the fit named ``key`` (beside the planted mask when asked)."""
    if with_truth and _data.true_mask is not None:
        match = align_clusters(_data.true_labels, _model.labels_)
        return plots.fig_feature_masks(_model, order=order, true_mask=_data.true_mask,
                                       true_features=_data.mask_features, cluster_match=match)
    return plots.fig_feature_masks(_model, order=order)


@_shared
def data_heatmap(key: str, order: str, max_rows: int, with_truth: bool, _model, _X, _data):
    """The data heatmap of the fit named ``key``."""
    if with_truth and _data.true_mask is not None:
        return plots.fig_data_heatmap(_model, _X, max_rows=max_rows, order=order, y_true=_data.true_labels,
                                      true_mask=_data.true_mask, true_features=_data.mask_features)
    return plots.fig_data_heatmap(_model, _X, max_rows=max_rows, order=order)


@_stored
def compare(key: str, label, methods: tuple, k: int, seed: int, params: FitParams, _table, _schema, _y):
    """The Compare page's table for data/roles ``key`` scored against ``label``."""
    progress = _Progress("Comparing methods", delay=0.0)
    try:
        return compare_services.compare_methods(_table, _schema, params, methods=methods, k=k, seed=seed, y=_y,
                                                progress=progress.step)
    finally:
        progress.close()


@_stored
def sweep(key: str, label, param: str, values: tuple, seeds: tuple, params: FitParams, _table, _schema, _y):
    """The What-if sweep for data/roles ``key`` scored against ``label``."""
    progress = _Progress("Sweeping", delay=0.0)
    try:
        return whatif.sweep(_table, _schema, params, param, list(values), seeds=seeds, y=_y,
                            progress=progress.step)
    finally:
        progress.close()


@_stored
def stability(key: str, n_refits: int, seed: int, _model, _X):
    """What-if's mask stability of the fit named ``key``: ``n_refits`` refits on every row, only the seed changing
    (:func:`craft.stability.bootstrap_stability` with ``method="seed"``, its seeds drawn from ``seed``)."""
    progress = _Progress("Refitting with other seeds", delay=0.0)
    try:
        return stability_lib.bootstrap_stability(_model, _X, n_resamples=n_refits, method="seed", random_state=seed,
                                                 callback=progress.step)
    finally:
        progress.close()


@kept_in(STORE, spinner="Building the report…")
def html_report(key: str, label, dataset_name: str, _model, _X, _params: dict, _y, _data, _notes: tuple) -> str:
    """The self-contained HTML report of the fit named ``key``, scored against ``label``."""
    return report.craft_report(
        _model, _X, dataset_name=dataset_name, params=_params, y=_y, true_labels=_data.true_labels,
        true_mask=_data.true_mask, true_features=_data.mask_features, notes=_notes,
    )


@_shared
def figure(key: str, name: str, _build):
    """The figure ``_build()`` makes, kept under the fit named ``key`` and ``name``.

    For figures a page draws itself (Teach's per-iteration views): ``name``
    must say everything the figure depends on besides the fit, e.g. the
    iteration. Building a Plotly figure costs 30-60 ms of validation; a
    step back to an iteration already seen then costs nothing.
    """
    return _build()


@_stored
def encoded(key: str, _model, _X):
    """The fitted columns encoded by the fit named ``key`` (a wide table costs per column: once)."""
    return _model.encoder_.transform(_X)


@_stored
def iteration_inspection(key: str, iteration: int, _model, _data):
    """Clusters, selection and objective terms after one iteration of the fit named ``key``."""
    return _model.inspect_iteration(_data, iteration)


@kept_in(STORE, spinner="Reading the rows to score…")
def rows_to_score(sha: str, file_name: str, _data: bytes):
    """A table of new rows to score, keyed by the SHA-256 of its bytes (:func:`explorer.services.loading.read_upload`)."""
    return loading.read_upload(_data, file_name)


@kept_in(STORE, spinner="Reading the original cells…")
def cells_as_written(sha: str, file_name: str, _table, _data: bytes):
    """The cells of an uploaded table as its file writes them, keyed by the SHA-256 of its bytes."""
    return loading.cells_as_written(_table, _data, file_name)


@kept_in(STORE, spinner="Scoring the rows…")
def scoring(model_key: str, sha: str, _model, _table) -> scoring_services.Scoring:
    """The rows of the table ``sha`` scored by the model named ``model_key`` (a fit's key or a file's SHA-256)."""
    return scoring_services.score_rows(_model, _table)


@_stored
def model_file(key: str, _model) -> bytes:
    """The fit named ``key`` as a model file (:func:`explorer.services.scoring.model_file`)."""
    return scoring_services.model_file(_model)


@kept_in(STORE, spinner="Fitting from the paper's start…")
def paper_start(key: str, _model, _X) -> FitOutcome:
    """The fit named ``key`` refitted from the paper's start (``init="random"``), for Teach; same parameters and seed.

    Its iterations show Algorithm 1 as the paper states it: one cluster at a random point, then the passes open
    the others. A problem comes back as :attr:`FitOutcome.error`, as from :func:`explorer.services.fitting.fit_craft`.
    """
    from sklearn.base import clone

    from craft import CraftInputError

    model = clone(_model).set_params(init="random")
    try:
        model.fit(_X)
    except CraftInputError as error:
        return FitOutcome(None, error=str(error))
    return FitOutcome(model)
