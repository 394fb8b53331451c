"""The mask path in the app: the fits over a grid of m, k or ρ, computed in the background and drawn.

One :class:`PathJob` per digest of the data, the roles, the other
parameters, the knob and its grid, for the whole server (as every fit:
:mod:`explorer.jobs`), held by the sessions that look at it, cancellable, its
result kept in the fit store (:data:`explorer.cache.STORE`).

Each value of the grid is fitted by :func:`explorer.services.fitting.fit_craft` with
the sidebar's parameters and the knob set to that value, and the outcome is
stored under that fit's own digest (:func:`explorer.cache.fit_key`): when a
slider of the sidebar lands on a value of the grid, the page finds the fit
already made and shows it at once. The grid's fits and the path picture are
one computation; a fit already in the store (the one on screen) is not made
again.

A table of more than :data:`PATH_ROWS` rows is not fitted over the whole
grid: the path is fitted on a fixed sample of that many rows (the page says
so), its fits are not the sliders', and they are not stored as such.

Tune & see starts the m path as soon as its fit is shown (:func:`prefetch`),
so the grid is being fitted while the user looks at the first fit; the
"Mask path" tab and Teach draw it, and start the k or ρ path when asked.
Where a path would take longer than :data:`PREFETCH_BUDGET_S`, neither
Tune & see's prefetch nor Teach (whose section sits below the lecture)
starts it unasked: Teach offers a button with the estimate instead, and
the tab, opened on purpose, fits it.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import streamlit as st

from craft import CraftInputError, plots
from craft.path import MaskPath, mask_path
from craft.plots import fig_mask_path, fig_path_scrubber

from . import cache, jobs
from .figure_export import chart
from .services import fitting
from .services.loading import LoadedData
from .services.params import FitParams, share_of_rho
from .services.whatif import swept
from .ui import error, esc, note

#: Above this many rows the path is fitted on a fixed sample of this many rows.
PATH_ROWS = 20_000
#: Values of m on the path: steps of the sidebar's m slider (0.05 to 0.95 by 0.01).
M_GRID = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
#: Largest k on the path (and at most a tenth of the rows).
K_MAX = 8
#: Shares of m(1-m) on the ρ path: steps of the sidebar's ρ slider (0.001 to 0.999 by 0.001).
RHO_GRID = (0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.999)
#: The knobs, in the app's words.
KNOBS = {"m": "m", "k": "k", "rho": "ρ share"}
#: The feature orders of Tune & see's mask heatmap (its "Feature order" control), offered for the path too.
ORDERS = {"subspace": "subspaces as blocks", "natural": "table order", "count": "most selected first"}
#: Seconds the m path started by Tune & see waits before its first fit (a parameter moved meanwhile cancels it).
PREFETCH_DELAY_S = 1.0
#: Most seconds of fitting Tune & see starts unasked: the m path is prefetched only where its grid, at about
#: the time of the fit on screen per value, fits within this (a 4-row table of 10,000 columns takes about 3 s a
#: fit, so its path would hold a core for half a minute while the user reads other pages).
PREFETCH_BUDGET_S = 10.0


@dataclass(frozen=True)
class PathResult:
    """A mask path of the app: the path, and the rows it was fitted on."""

    path: MaskPath
    n_rows: int
    sampled: bool


#: The paths being fitted; a finished one goes to the fit store.
JOBS = cache.background_jobs()


def knobs(params: FitParams) -> list[str]:
    """The knobs offered: ρ only under the "shrink" rule, where it changes the selection."""
    return [knob for knob in KNOBS if knob != "rho" or params.rho_selection == "shrink"]


def grid(knob: str, n_rows: int) -> tuple:
    """The values of ``knob`` the path fits (k from 2 to :data:`K_MAX`, and at most a tenth of the rows)."""
    if knob == "m":
        return M_GRID
    if knob == "rho":
        return RHO_GRID
    return tuple(range(2, max(3, min(K_MAX, n_rows // 10)) + 1))


def path_key(data_key: str, schema, params: FitParams, knob: str, values: tuple) -> str:
    """The digest of one path: the data, the roles, the parameters other than the knob, the grid."""
    base = swept(params, knob, values[0])
    text = repr(("mask-path", cache.fit_key(data_key, schema, base), knob, values, PATH_ROWS))
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def compute(data: LoadedData, schema, params: FitParams, knob: str, values: tuple, report, *,
            delay: float = 0.0) -> PathResult:
    """Fit every value of the grid (the fits in the store are reused, new ones stored with their mask heatmap)
    and follow the masks, after ``delay`` seconds in which a cancellation stops it before any fit."""
    deadline = time.monotonic() + delay
    while time.monotonic() < deadline:
        report(0.0, "waiting for the parameters to rest")  # raises once the job is cancelled
        time.sleep(0.05)
    table = data.table
    sampled = len(table) > PATH_ROWS
    rows = table.sample(n=PATH_ROWS, random_state=0).sort_index() if sampled else table
    models = []
    for position, value in enumerate(values):
        share, text = position / len(values), f"{KNOBS[knob]} = {value:g} ({position + 1} of {len(values)})"
        report(share, text)
        current = swept(params, knob, value)
        key = cache.fit_key(data.key, schema, current)
        outcome = None if sampled else cache.STORE.get(key)
        if outcome is None:
            outcome = fitting.fit_craft(rows, schema, current,
                                         callback=lambda record, share=share, text=text: report(share, text))
            if not sampled and outcome.model is not None:
                cache.STORE.put(key, outcome)
                # The mask heatmap Tune & see opens with, built here too: a slider landing here only draws it.
                has_truth = data.true_mask is not None
                cache.masks_figure(key, cache.default_order(data), has_truth, outcome.model, data)
        if outcome.model is None:
            raise CraftInputError(f"{text}: {outcome.error}")
        models.append(outcome.model)
    report(1.0, "done")
    return PathResult(mask_path(models, values, knob=knob), len(rows), sampled)


def _held() -> dict:
    return st.session_state.setdefault("_path_jobs", {})


def request(ctx, knob: str, *, delay: float = 0.0,
            start: bool = True) -> tuple[str, PathResult | None, jobs.FitJob | None]:
    """This session's path over ``knob``: its key, and its result if known, else the job fitting it.

    A job started here waits ``delay`` seconds before its first fit (:func:`compute`). With ``start=False``
    none is started: a path neither known nor held by this session gives no result and no job.
    """
    assert ctx.data is not None and ctx.schema is not None
    values = grid(knob, len(ctx.data.table))
    key = path_key(ctx.data.key, ctx.schema, ctx.params, knob, values)
    held = _held()
    previous = held.get(knob)
    if previous is not None and previous.key != key:
        JOBS.release(previous.key, cache.session_token())
        del held[knob]
    found = cache.STORE.get(key)
    if found is not None:
        return key, found, None
    job = held.get(knob)
    if job is not None and job.done and not job.cancelled:
        return key, job.result(), None
    if job is None and not start:
        return key, None, None
    data, schema, params = ctx.data, ctx.schema, ctx.params
    # The job's result is a PathResult where FitJobs speaks of fits: typed Any, as explorer.evidence's results.
    def fitting(report: Callable) -> Any:
        return compute(data, schema, params, knob, values, report, delay=delay)

    job = JOBS.submit(key, cache.session_token(), fitting)
    held[knob] = job
    return key, None, job


def release_others(ctx) -> None:
    """Release this session's path jobs made for other settings than ``ctx``'s (a moved slider), starting none.

    Tune & see calls it instead of :func:`prefetch` while a provisional fit is refined: the path of the settings
    left stops, and the new settings' path waits for their fit (it would take a core from it).
    """
    if ctx.data is None or ctx.schema is None:
        return
    held = _held()
    for knob, job in list(held.items()):
        if job.key != path_key(ctx.data.key, ctx.schema, ctx.params, knob, grid(knob, len(ctx.data.table))):
            JOBS.release(job.key, cache.session_token())
            del held[knob]


def prefetch(ctx) -> None:
    """Start fitting the m path of this session's table in the background, without waiting (Tune & see calls it).

    Only where its fits are the sliders' (at most :data:`PATH_ROWS` rows): then a move of m to a value of the
    grid finds its fit made; and only where the grid, at the on-screen fit's time per value, costs at most
    :data:`PREFETCH_BUDGET_S` (the Mask path tab still fits a longer path when it is opened). A path already
    known or running is left as it is. It waits :data:`PREFETCH_DELAY_S` before its first fit: a user moving k
    or another parameter releases it (and so cancels it) before it takes a core from the fits and redraws the
    user asked for.
    """
    if ctx.data is None or ctx.schema is None or len(ctx.data.table) > PATH_ROWS:
        return
    if within_budget(ctx, "m"):
        request(ctx, "m", delay=PREFETCH_DELAY_S)


def estimated_seconds(ctx, knob: str) -> float | None:
    """About how long the path over ``knob`` takes: the fit on screen's time for each value of its grid."""
    if ctx.outcome is None or ctx.data is None:
        return None
    return ctx.outcome.seconds * len(grid(knob, len(ctx.data.table)))


def within_budget(ctx, knob: str) -> bool:
    """Whether the path over ``knob`` may start unasked: its estimate is at most :data:`PREFETCH_BUDGET_S`."""
    estimate = estimated_seconds(ctx, knob)
    return estimate is not None and estimate <= PREFETCH_BUDGET_S


def sidebar_value(params: FitParams, knob: str) -> float | None:
    """The sidebar's value of ``knob`` (None where it sets none: k while λ sizes the fit, ρ left to its default)."""
    if knob == "m":
        return params.m
    if knob == "k":
        return float(params.k) if params.size_by == "k" else None
    return None if params.rho is None else share_of_rho(params.m, params.rho)


def _progress(job: jobs.FitJob, knob: str) -> None:
    cache.background_progress(job, key=f"path_{knob}", text=f"Fitting the mask path over {KNOBS[knob]}",
                        on_cancel=JOBS.cancel, args=(job.key,))


def feature_order_of(model, path: MaskPath, order: str) -> list[int]:
    """Indices into ``path.features`` in the order the masks tab draws ``model``'s mask with ``order``."""
    shown = list(plots.mask_frame(model, order=order).columns)
    where = {name: i for i, name in enumerate(path.features)}
    return [where[name] for name in shown]


def section(ctx, *, where: str, ask_above_budget: bool = False) -> None:
    """The mask path of this session's data and parameters, over a knob the user picks (``where`` keys the widgets).

    With ``ask_above_budget`` (a page where the section is not opened on purpose, as Teach's), a path not yet
    fitted whose estimate exceeds :data:`PREFETCH_BUDGET_S` starts only when its button is clicked.
    """
    options = knobs(ctx.params)
    knob = st.segmented_control("Along", options, default="m", format_func=KNOBS.__getitem__, required=True,
                                key=f"path_knob_{where}")
    if knob not in options:
        knob = "m"
    ask = ask_above_budget and not within_budget(ctx, knob)
    try:
        key, found, job = request(ctx, knob, start=not ask)
        if found is None and job is None:
            estimate = estimated_seconds(ctx, knob)
            st.caption(f"The path fits {len(grid(knob, len(ctx.data.table)))} values of {KNOBS[knob]}, about "
                       f"{estimate:.0f} s at the time of the fit on screen, so it starts when you ask.")
            if not st.button(f"Fit the mask path over {KNOBS[knob]}", key=f"path_start_{where}_{knob}"):
                return
            key, found, job = request(ctx, knob)
    except CraftInputError as problem:
        _held().pop(knob, None)
        error(f"The mask path could not be fitted: {problem}")
        return
    if job is not None:
        if job.cancelled:
            note("You cancelled the mask path. Change a parameter or open the page again to fit it.")
            return
        _progress(job, knob)
        return
    assert found is not None
    result: PathResult = found
    path = result.path
    # The features in the order of the masks tab (the same control, opening on the masks tab's choice): the
    # order of the fit on screen's mask, so that its blocks (the paper's Figure 1) show along the path too.
    default = st.session_state.get("mask_order") or cache.default_order(ctx.data)
    order_name = st.segmented_control("Feature order", list(ORDERS), default=default, format_func=ORDERS.__getitem__,
                                      key=f"path_order_{where}", required=True) or default
    order = feature_order_of(ctx.model, path, order_name)
    chart(cache.figure(key, f"mask_path_{order_name}", lambda: fig_mask_path(path, order=order)),
          key=f"fig_path_{where}", name=f"craft_mask_path_{knob}")
    robust = path.selected_ranges()
    robust = robust[robust["whole_track"] & (robust["n_values"] == len(path.values))]
    st.caption(esc(
        f"Each point is the fit with every other parameter as in the sidebar and {KNOBS[knob]} at that value; "
        "clusters of neighbouring values are matched by the Jaccard similarity of their rows (a track). A feature "
        "blue across its whole panel is selected whatever the value; green links are splits, dashed red ones merges. "
        f"{len(robust)} (track, feature) selections hold over the whole path."))
    if result.sampled:
        note(f"The path was fitted on a fixed sample of {result.n_rows:,} of the {len(ctx.data.table):,} rows, "
             "to bound its time and memory; the fit on screen uses every row.")
    else:
        st.caption("Moving the sidebar's slider to a value of the path shows its fit at once: it is already made.")
    at = sidebar_value(ctx.params, knob)
    start = path.values[0 if at is None else int(np.argmin(np.abs(path.values - at)))]
    # The buttons save a picture the server can make: the fit the scrubber opens on (the sidebar's), slider left
    # out; the toolbar's camera saves the frame on screen (plotly_view).
    chart(cache.figure(key, f"path_scrubber_{at}_{order_name}", lambda: fig_path_scrubber(path, at=at, order=order)),
          key=f"fig_scrub_{where}",
          name=f"craft_path_fit_{knob}_{start:g}", camera_name=f"craft_path_fit_{knob}_on_screen",
          export=lambda: cache.figure(key, f"path_still_{at}_{order_name}",
                                              lambda: fig_path_scrubber(path, at=at, slider=False, order=order)))
    st.caption(esc(f"The SVG and PNG buttons save the fit at {KNOBS[knob]} = {start:g} (the sidebar's value); the "
                   "camera of the figure's toolbar saves the frame on screen, without the slider."))
    st.caption(esc(
        f"Drag the slider under this figure through the {len(path.values)} fits of the path: each step shows that "
        "fit's masks, its clusters' rows and its metrics, drawn by your browser from the stored fits, while you drag "
        "and without running the page again. The sidebar's sliders run the page once they are released (that is "
        "how Streamlit's sliders work), so they are the way to values between the path's"
        + (" and to the fit on every row." if result.sampled else ".")))
    if np.any(path.n_clusters != path.n_clusters[0]) and knob != "k":
        st.caption(esc(f"The number of clusters changes along the path: {', '.join(map(str, path.n_clusters))}."))
