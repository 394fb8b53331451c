"""The fit on screen: clusters that keep their numbers, and a slider's new value answered at once.

Two things happen between the fit a page is given (by :mod:`explorer.cache`)
and the fit it draws, both here and only here, so that every figure, card,
export and link reads the same numbering (one truth: no figure renumbers):

* **Numbers that follow the clusters.** Each new view of the same table is
  renumbered (:func:`craft.relabel.relabel_model`) to match the previous view
  shown in this session (:func:`craft.relabel.match_clusters`: the Hungarian
  method on the rows they share). The renumbering of a refined fit goes into
  the URL (``clusters=2.0.1``: the number each of the fit's clusters is shown
  as), so a link opened afresh shows the numbering of the view it was copied
  from. The store keeps the fits as fitted; a view's key
  (:attr:`explorer.context.AppContext.key`) names the fit and its numbering.
* **Provisional, then refined.** When a slider lands on a value whose fit is
  not known yet, the default fit of those settings (the one the link
  reproduces) runs in the background (:mod:`explorer.jobs`, cancelled by the
  next move), and meanwhile the page shows at once :func:`craft.warm_refit`
  of the fit on screen at the new settings: one run started from the clusters
  on screen, marked *provisional*. When the default fit ends it replaces the
  provisional one, marked *refined*, with one line on how they differ
  (:func:`difference_line`). Only Tune & see draws a provisional fit
  (:func:`explorer.context.require_model` with ``provisional=True``); every
  other page (Export, Score, cards, Evaluate) waits for the refined fit.

This module keeps no registry of its own: the running fits are
:data:`explorer.cache.JOBS`', the fits :data:`explorer.cache.STORE`'s; the
session holds only the view shown last (:data:`SHOWN`).
"""

from __future__ import annotations

import hashlib
import time
import warnings
from dataclasses import dataclass, replace

import numpy as np
import streamlit as st

import craft
from craft import CraftInputError
from craft.relabel import changed_share, check_permutation, match_clusters, relabel_model

from .services.fitting import FitOutcome, fitted_X
from .ui import number, warning

#: The URL's parameter that carries the refined fit's renumbering.
PERM_PARAM = "clusters"
#: Session key of the view shown last (:class:`Shown`).
SHOWN = "_shown_view"
#: Session key of the numbering each fit was shown with (fit key → renumbering), the latest :data:`SEEN_FITS`.
SEEN = "_shown_numbers"
SEEN_FITS = 256


@dataclass
class Shown:
    """The view a session showed last.

    Attributes
    ----------
    data : tuple
        The table and roles (data key, numeric, categorical): views of another table are not matched.
    fit_key : str
        The digest of the fit's settings (:func:`explorer.cache.fit_key`).
    key : str
        The view's key: the fit, its numbering and whether it is provisional.
    provisional : bool
    outcome : FitOutcome
        As shown (renumbered).
    perm : ndarray
        The number each of the fit's own clusters is shown as.
    line : str or None
        What a refined view says about the provisional one it replaced.
    left : str or None
        A provisional view shown while another value's refinement ran: that value's fit key.
    """

    data: tuple
    fit_key: str
    key: str
    provisional: bool
    outcome: FitOutcome
    perm: np.ndarray
    line: str | None = None
    left: str | None = None


def perm_text(perm) -> str:
    """A renumbering as the URL writes it: ``2.0.1``."""
    return ".".join(str(int(p)) for p in perm)


def _identity(perm: np.ndarray) -> bool:
    return bool(np.array_equal(perm, np.arange(perm.size)))


def _view_key(fit_key: str, perm: np.ndarray, provisional: str | None = None) -> str:
    """The fit's digest when it is shown as fitted; else the digest, its numbering and its provisional source."""
    if provisional is None and _identity(perm):
        return fit_key
    parts = [fit_key, perm_text(perm)] + ([] if provisional is None else ["provisional", provisional])
    return "~".join(parts)


def _previous(data: tuple) -> Shown | None:
    """The view shown last, if it shows the same table and roles."""
    shown = st.session_state.get(SHOWN)
    return shown if shown is not None and shown.data == data else None


def _linked_perm(n_clusters: int) -> np.ndarray | None:
    """The renumbering the URL carries, on a session's first view; an unusable one is reported as ignored."""
    text = st.query_params.get(PERM_PARAM)
    if not text:
        return None
    try:
        return check_permutation([int(part) for part in str(text).split(".")], n_clusters)
    except (ValueError, CraftInputError) as problem:
        reason = str(problem) if isinstance(problem, CraftInputError) else "not whole numbers separated by dots"
        if st.session_state.get("_url_checked"):
            # The link's other values were reported in the first run; this fit came later (in the background).
            warning(f"Ignored in the link: {PERM_PARAM}={text!r} ({reason}). The clusters keep the fit's numbers.")
        else:
            st.session_state.setdefault("_url_ignored", []).append((PERM_PARAM, text, reason))
        return None


def _renumbered(outcome: FitOutcome, perm: np.ndarray) -> FitOutcome:
    return outcome if _identity(perm) else replace(outcome, model=relabel_model(outcome.model, perm))


def _match(model, previous: Shown | None) -> np.ndarray:
    """The renumbering that keeps the most rows of ``previous`` on their number (the identity without one)."""
    identity = np.arange(model.n_clusters_)
    if previous is None or previous.outcome.model is None:
        return identity
    before = previous.outcome.model.labels_
    if before.shape != model.labels_.shape:
        return identity
    return match_clusters(model.labels_, before, model.n_clusters_, previous.outcome.model.n_clusters_)


def refined(ctx, outcome: FitOutcome) -> FitOutcome:
    """``outcome`` (the fit of ``ctx``'s settings, as fitted) renumbered to follow the view shown before.

    Sets ``ctx.key`` to the view's key and, when it replaces a provisional
    view of the same settings, ``ctx.refined_line``. A fit this session
    showed before keeps the numbering it had (so Back, or a slider moved
    back, shows the same view); a session's first view takes the link's.
    """
    if outcome.model is None:
        return outcome
    data = ctx.view_data
    previous = _previous(data)
    line = None
    perm: np.ndarray
    seen = st.session_state.setdefault(SEEN, {})
    if previous is not None and previous.fit_key == ctx.fit_key and not previous.provisional:
        perm, line = previous.perm, previous.line
    elif ctx.fit_key in seen and len(seen[ctx.fit_key]) == outcome.model.n_clusters_:
        # A fit this session showed before (a slider moved back, the browser's Back) keeps the numbers it had.
        perm = seen[ctx.fit_key]
    else:
        linked = _linked_perm(outcome.model.n_clusters_) if st.session_state.get(SHOWN) is None else None
        perm = linked if linked is not None else _match(outcome.model, previous)
    seen[ctx.fit_key] = perm
    while len(seen) > SEEN_FITS:
        seen.pop(next(iter(seen)))
    shown = _renumbered(outcome, perm)
    if previous is not None and previous.provisional and previous.fit_key == ctx.fit_key:
        line = difference_line(previous.outcome.model, shown.model)
    ctx.key = _view_key(ctx.fit_key, perm)
    ctx.refined_line = line
    st.session_state[SHOWN] = Shown(data, ctx.fit_key, ctx.key, False, shown, perm, line)
    _write_url(perm)
    return shown


def _write_url(perm: np.ndarray | None) -> None:
    """The refined view's numbering in the URL (nothing when it is the fit's own)."""
    params = st.query_params
    if perm is None or _identity(perm):
        if PERM_PARAM in params:
            del params[PERM_PARAM]
    elif params.get(PERM_PARAM) != perm_text(perm):
        params[PERM_PARAM] = perm_text(perm)


def provisional(ctx) -> bool:
    """Show at once the warm refit of the view on screen at ``ctx``'s settings, while their fit runs.

    Sets ``ctx.outcome`` (renumbered to follow the view on screen), ``ctx.key``
    and ``ctx.provisional``; the job in ``ctx.job`` goes on. False (nothing
    set) where there is no view of this table on screen, or the warm refit
    fails (the page then waits for the fit, as before).
    """
    data = ctx.view_data
    previous = _previous(data)
    if previous is None or previous.outcome.model is None or ctx.data is None:
        return False
    if previous.fit_key == ctx.fit_key and previous.provisional:
        found = previous  # a rerun while the same refinement runs: the same provisional view
    else:
        source = hashlib.sha256(previous.key.encode()).hexdigest()[:10]
        model = previous.outcome.model
        start = time.perf_counter()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the refined fit says what the settings warn about
                warm = craft.warm_refit(model, fitted_X(model, ctx.data.table), **ctx.params.estimator_kwargs())
        except CraftInputError:
            return False
        seconds = time.perf_counter() - start
        perm = _match(warm, previous)
        outcome = _renumbered(FitOutcome(warm, seconds=seconds), perm)
        key = _view_key(ctx.fit_key, perm, provisional=source)
        # The move left a value whose refinement was running: asking for this fit releases it (explorer.cache),
        # and a job nobody waits for any more stops at its next iteration (explorer.context.refining says so).
        found = Shown(data, ctx.fit_key, key, True, outcome, perm, left=previous.fit_key if previous.provisional else None)
        st.session_state[SHOWN] = found
    ctx.outcome = found.outcome
    ctx.key = found.key
    ctx.provisional = True
    ctx.left_key = found.left
    ctx.problem = None
    return True


def difference_line(provisional_model, refined_model) -> str:
    """How the refined fit differs from the provisional one it replaced: objective, rows moved, masks.

    Rows moved are those whose shown cluster number differs (both views are
    numbered to follow one another); features changed are the cells of the
    mask (cluster × feature) that differ, over the clusters both have.
    """
    before, after = float(provisional_model.objective_), float(refined_model.objective_)
    change = (after - before) / abs(before) if before else 0.0
    moved = changed_share(refined_model.labels_, provisional_model.labels_)
    n_moved = int(round(moved * refined_model.labels_.size))
    k = min(provisional_model.n_clusters_, refined_model.n_clusters_)
    cells = int(np.sum(provisional_model.feature_mask_[:k] != refined_model.feature_mask_[:k]))
    sizes = ("" if provisional_model.n_clusters_ == refined_model.n_clusters_
             else f"; K {provisional_model.n_clusters_} → {refined_model.n_clusters_}")
    return (f"Refined: objective {number(after)} against the provisional {number(before)} ({change:+.1%}); "
            f"{n_moved:,} rows ({moved:.1%}) changed cluster; {cells} mask cell(s) changed{sizes}.")
