"""What every page needs, computed once per run by ``app.py``.

:func:`build` loads the chosen data (kept in the session while its key does
not change), applies the user's roles, fits CRAFT through the cache and
stores an :class:`AppContext` in ``st.session_state["ctx"]``. Pages read it
with :func:`explorer.frame.current` (which renders the frame first when a page
runs without ``app.py``; the frame builds the context here, so this module
does not import it).

The fit runs in a background thread (:mod:`explorer.jobs`) and nothing here
waits for it: a page that needs it calls :func:`require_model`, which waits
with a progress bar and a Cancel button (or stops with a specific message
when there is no fit); a page that does not (the Data page) calls
:func:`show_background_fit` and is usable while the fit runs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Hashable

import pandas as pd
import streamlit as st

from craft import CraftInputError
from craft.schema import Schema

from . import cache, distributed_table, view
from .jobs import FitJob
from .services.fitting import FitOutcome, fitted_X
from .services.loading import LoadedData, upload_key
from .services.params import FitParams
from .services.roles import fit_schema, labels_for_evaluation
from .state import CLUSTER_TABLE, CONTINUED, NO_LABEL, UPLOAD
from .ui import error, note

if TYPE_CHECKING:
    from .steering import Steered


@dataclass
class AppContext:
    """The data, roles, parameters and fit of the current run.

    Attributes
    ----------
    data : LoadedData or None
        None when nothing could be loaded (``problem`` says why).
    schema : Schema or None
        Roles used for fitting (label excluded).
    label : str or None
        Label column (evaluation only).
    params : FitParams
    outcome : FitOutcome or None
    key : str
        Names the fit (data, roles, parameters) for derived caches.
    data_key : str
        Names the data and roles (Compare / What-if caches).
    problem : str or None
        Why there is no fit: data or roles that cannot be clustered.
    notes : list of str
        Remarks on the roles (skipped saved roles...).
    job : FitJob or None
        The background fit computing ``outcome``, until a page has waited
        for it (:func:`require_model`, :func:`show_background_fit`).
    cancelled : bool
        The user cancelled this fit and has not asked for it again.
    fit_key : str
        The digest of the fit's settings; ``key`` names the view (the fit, its
        cluster numbering and whether it is provisional: :mod:`explorer.view`).
    provisional : bool
        ``outcome`` is the warm refit shown while ``job`` computes the fit of
        these settings (only Tune & see draws it; other pages wait).
    refined_line : str or None
        How the refined fit differs from the provisional one it replaced.
    left_key : str or None
        The fit key of the value this provisional fit's move left while it was being refined.
    """

    data: LoadedData | None
    schema: Schema | None
    label: str | None
    params: FitParams
    outcome: FitOutcome | None = None
    key: str = ""
    data_key: str = ""
    problem: str | None = None
    notes: list = field(default_factory=list)
    job: FitJob | None = None
    cancelled: bool = False
    fit_key: str = ""
    provisional: bool = False
    refined_line: str | None = None
    left_key: str | None = None
    steered: Steered | None = None  # once the view's steering is applied (explorer.steering.apply)

    @property
    def view_data(self) -> tuple:
        """The table and roles this view shows (views of the same ones are matched: :mod:`explorer.view`)."""
        assert self.data is not None and self.schema is not None
        return (self.data.key, tuple(self.schema.numeric), tuple(self.schema.categorical))

    @property
    def model(self):
        return None if self.outcome is None else self.outcome.model

    @property
    def X(self) -> pd.DataFrame:
        """The fitted columns of the table (a page reads it after :func:`require_model`)."""
        assert self.data is not None and self.model is not None
        return fitted_X(self.model, self.data.table)

    @property
    def y(self):
        """Labels for evaluation (strings, missing allowed) or None (a page reads it after :func:`require_model`)."""
        assert self.data is not None
        return labels_for_evaluation(self.data.table, self.label)[0]

    @property
    def shareable(self) -> bool:
        return self.data is not None and self.data.kind != "upload"


def _loaded_data(source: str) -> LoadedData:
    """The table for ``source``; kept in this session until the source changes."""
    if source == CLUSTER_TABLE:
        return distributed_table.session_data()
    if source == UPLOAD:
        upload = st.session_state.get("upload")
        if upload is None and st.session_state.get("upload_link"):
            raise CraftInputError(
                "This link opens a view of an uploaded table. Uploaded tables never travel in a link, so the "
                "table has to be uploaded again: upload it on the Data page (the link's parameters are kept), "
                "or pick a bundled dataset."
            )
        if upload is None:
            raise CraftInputError("No uploaded file: upload one on the Data page, or pick an example.")
        key: Hashable = upload_key(upload["sha"], tokens_in_text=upload.get("tokens_in_text", False), sheet=upload.get("sheet"))
    else:
        n = int(st.session_state.get("syn_n", 300))
        seed = int(st.session_state.get("syn_seed", 0))
        key = (source, n, seed)
    held = st.session_state.get("_data")
    if held is not None and held[0] == key:
        return held[1]
    if source == UPLOAD:
        assert upload is not None  # refused above
        data = cache.load_upload(upload["sha"], upload["name"], upload["data"], upload.get("tokens_in_text", False),
                                 upload.get("sheet"))
    else:
        data = cache.load_example(source, n, seed)
    st.session_state["_data"] = (key, data)
    return data


#: The pages that draw a provisional fit while the fit of the settings runs (their ``url_path``); every other page
#: waits for the fit itself, so a provisional fit is never exported, saved, scored, shared or summarised as final.
PROVISIONAL_PAGES = frozenset({"clusters"})


def build(params: FitParams, page: str | None = None) -> AppContext:
    """Load, apply roles and fit; the result goes to ``st.session_state["ctx"]``.

    ``page``: the ``url_path`` of the page this run shows; one of :data:`PROVISIONAL_PAGES` gets a provisional
    fit at once where the fit of ``params`` is not known yet (:mod:`explorer.view`).
    """
    source = st.session_state.get("dataset")
    try:
        if source is None:  # a run without the sidebar's state: app.py run as a plain script (bare mode)
            raise CraftInputError("No dataset chosen: pick one in the sidebar.")
        data = _loaded_data(source)
    except CraftInputError as error:
        ctx = AppContext(None, None, None, params, problem=str(error))
        st.session_state["ctx"] = ctx
        return ctx
    choice = st.session_state.get("label_choice")
    label = data.label if choice is None else (None if choice == NO_LABEL else choice)
    try:
        schema, notes = fit_schema(data, st.session_state.get("role_overrides") or {}, label)
    except CraftInputError as error:
        ctx = AppContext(data, None, label, params, problem=str(error))
        st.session_state["ctx"] = ctx
        return ctx
    if label is not None and label not in data.table.columns:
        label = None
    data_key = cache.fit_key(data.key, schema, FitParams())
    key = cache.fit_key(data.key, schema, params)
    cancelled = cache.cancelled_fit()
    if cancelled is not None and cancelled[0] == key:
        ctx = AppContext(data, schema, label, params, None, key, data_key,
                         f"you cancelled this fit after {cancelled[1]:,} iterations.", notes, cancelled=True)
        st.session_state["ctx"] = ctx
        return ctx
    if cancelled is not None:  # another fit is asked for: the cancelled one is behind the user
        cache.clear_cancelled()
    ctx = AppContext(data, schema, label, params, None, key, data_key, None, notes, fit_key=key)
    # A value not fitted yet: the fit on screen, warm-started at the new settings, answers at once (computed
    # first, and the default fit of the settings starts once the page showing the provisional fit is drawn,
    # :func:`drawn`, so that the page has the cores first); that fit refines it in the background.
    # Not for a cluster table: a warm refit in memory would fit the sample and show it as the table's fit.
    provisional = (page in PROVISIONAL_PAGES and data.kind != distributed_table.KIND and key not in cache.STORE
                   and view.provisional(ctx))
    found = cache.request_fit(data.key, tuple(schema.numeric), tuple(schema.categorical), params, data.table, schema,
                              delay=REFINE_DELAY_S if provisional else 0.0)
    if isinstance(found, FitJob):
        ctx.job = found
        if not provisional:
            ctx.outcome = None
    else:
        _settle(ctx, found)
    st.session_state["ctx"] = ctx
    return ctx


#: Seconds the refinement of a provisional fit waits at most before it starts: the page drawing the provisional
#: fit starts it once drawn (:func:`drawn`), so that the two do not share the cores (and Python's lock); this bounds
#: the wait where the page stops before its end.
REFINE_DELAY_S = 0.5
#: How often Tune & see asks whether the refinement has ended (it then reruns to show it).
REFINE_POLL_SECONDS = 0.05


def _settle(ctx: AppContext, outcome: FitOutcome | None) -> None:
    """Put a finished fit's outcome (None: cancelled) into ``ctx``."""
    ctx.job = None
    ctx.provisional = False
    ctx.key = ctx.fit_key or ctx.key
    if outcome is None:
        ctx.outcome = None
        ctx.cancelled = True
        ctx.problem = "the fit was cancelled."
        return
    # Renumbered to follow the view shown before (explorer.view): every page reads this one numbering.
    ctx.outcome = view.refined(ctx, outcome) if ctx.schema is not None and ctx.data is not None else outcome
    ctx.problem = None if outcome.model else outcome.error


def require_model(ctx: AppContext, *, provisional: bool = False):
    """The fitted model (waited for, with its progress), or a specific message and the end of the page.

    ``provisional=True`` (Tune & see): a provisional fit shown while the fit of these settings runs is
    returned at once (:func:`refining` follows the run). Every other page waits for the fit itself, so a
    provisional fit is never exported, saved, scored or shared.
    """
    if ctx.job is not None and ctx.job.done:
        _settle(ctx, cache.finished(ctx.job))
    elif ctx.job is not None and not (provisional and ctx.provisional):
        _settle(ctx, cache.wait_for(ctx.job, cancellable=True))
    if ctx.model is not None:
        from . import steering

        steering.apply(ctx)  # the person's pins, links, merges and splits (explorer.steering)
        return ctx.model
    if ctx.cancelled:
        offer_refit(ctx)
        st.stop()
    if ctx.data is None:
        error(ctx.problem or "No data.")
    else:
        error(f"No clustering for {ctx.data.name!r}: {ctx.problem}")
    st.page_link("pages/data.py", label="Go to the Data page to change the data or the column roles", icon=":material/table_view:")
    st.stop()


def offer_refit(ctx: AppContext) -> None:
    """Say that the fit was cancelled, with a button that asks for it again."""
    note(f"No clustering: {ctx.problem} Change a parameter in the sidebar, or fit again.")
    st.button("Fit again", key="fit_again", on_click=cache.clear_cancelled, icon=":material/replay:")


def refining(ctx: AppContext) -> None:
    """One line above the figures: provisional (and how far its refinement is) or refined.

    While the fit of these settings runs, a fragment polls it and reruns the page when it ends, which then
    shows the refined fit and how it differs from the provisional one. The line keeps its place and height,
    so nothing below it moves when the mark changes.
    """
    job = ctx.job
    if ctx.provisional and job is not None and ctx.outcome is not None:
        seconds = ctx.outcome.seconds
        _follow(job, REFINE_POLL_SECONDS, lambda: st.container(key="fit_status_provisional").markdown(
            ":orange-badge[:material/hourglass_top: provisional] "
            f"One run warm-started from the fit shown before ({seconds * 1000:.0f} ms); the default "
            f"fit of these settings, the one the link reproduces, is running ({job.summary()})."
            + (" The refinement of the value left was stopped." if left_stopped(ctx) else "")))
        return
    if ctx.model is None:
        return
    text = ctx.refined_line or "The default fit of these settings: the one the link reproduces."
    st.container(key="fit_status_refined").markdown(f":green-badge[:material/check: refined] {text}")


def drawn(ctx: AppContext) -> None:
    """The page's script has ended: the refinement of the provisional fit it shows starts once the browser has
    drawn it (:data:`REFINE_AFTER_DRAWN_S`), not after :data:`REFINE_DELAY_S` (see :func:`build`)."""
    if ctx.provisional and ctx.job is not None:
        ctx.job.go(after=REFINE_AFTER_DRAWN_S)


#: Seconds from the end of the page's script to the start of the refinement: about what Chromium takes to draw the
#: provisional page of a 10,000-row table once its script has ended (40-60 ms measured), so that the refinement's
#: threads do not take the cores from the browser. The refined picture comes that much later (its target, 8x a
#: bare slider's step, leaves room; the provisional one's, 2x, does not).
REFINE_AFTER_DRAWN_S = 0.06


def left_stopped(ctx: AppContext) -> bool:
    """Whether the move to this provisional fit stopped the refinement of the value it left (nobody else waits
    for it)."""
    return ctx.left_key is not None and cache.JOBS.running(ctx.left_key) is None


#: How long a page that does not need the fit waits for it before drawing its progress instead.
GRACE_SECONDS = 0.3
#: How often that progress is polled; the fit shows this long after its end at most (each poll is a small run).
POLL_SECONDS = 0.2


def show_background_fit(ctx: AppContext) -> None:
    """For a page that does not need the fit: its progress while it runs, then a rerun that shows it.

    A fit that ends within :data:`GRACE_SECONDS` of its start is simply there
    (no bar, no second run). A longer one is followed by a fragment that polls its
    progress, so the page stays usable meanwhile.
    """
    job = ctx.job
    if job is None:
        return
    # The grace counts from the fit's start: a fit already running for longer shows its progress at once.
    if job.wait(max(0.0, GRACE_SECONDS - job.seconds)):
        _settle(ctx, cache.finished(job))
        return
    _follow(job, POLL_SECONDS, lambda: st.container(key="background_fit").progress(
        job.fraction, text=f"Fitting CRAFT in the background: {job.summary()}. This page is usable meanwhile; "
                           "the other pages show the fit when it is done."))


def _follow(job: FitJob, every: float, draw: Callable[[], object]) -> None:
    """A fragment that redraws ``draw()`` (the job's progress) every ``every`` seconds while ``job`` runs, and
    reruns the whole page once it has ended or was cancelled, so that the page shows its outcome; that rerun
    continues the view the user was reading (:data:`~explorer.state.CONTINUED`)."""

    @st.fragment(run_every=every)
    def follow() -> None:
        if job.done or job.cancelled:
            st.session_state[CONTINUED] = True
            st.rerun()
        draw()

    follow()
