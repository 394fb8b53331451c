"""Steering by hand in the app: pins, links, merges and splits, their price, undo and redo, and their link.

The steering of a view is an ordered list of *actions* (:class:`Action`),
written in the URL as one parameter (:data:`PARAM`, e.g.
``steer=p0.3.1,m12.40,M1.2``) and kept in the session (:data:`ACTIONS`) so
that it follows the person from page to page:

* ``p{k}.{j}.{v}`` pin column ``j`` (its position in ``feature_names_in_``)
  of cluster ``k`` (``*``: every cluster) on (``1``), off (``0``) or free
  again (``x``);
* ``m{a}.{b}`` / ``c{a}.{b}`` must-link / cannot-link rows ``a`` and ``b``
  (positions in the fitted table);
* ``M{a}.{b}`` merge clusters ``a`` and ``b``; ``S{k}`` split cluster ``k``.

The steered fit is a pure function of the fit on screen (the settings'
fit, renumbered as shown: :mod:`explorer.view`) and the actions, so a link
reproduces it: fold the actions in order, each a warm refit of the
previous steered fit with every pin and link so far (and the merge or
split), one run from the previous partition. The last step is a
:func:`craft.steer.steer` (its price is the one shown); the steps before
it are the same steered fit without the price's extra fits. A pin's
cluster is a number of the fit it is applied to; a merge drops the higher
cluster's pins and renumbers the later clusters' pins down one, since the
library refuses a pin on a cluster that does not exist. A cell pinned
again replaces its earlier pin in the list (:func:`add`); Undo goes back
to the list before each change.

The steered fit *is* a warm refit (about 0.15 s on a 50,000-row table,
docs/RESULTS.md), so it is shown at once and is final: there is no cold
"refined" fit of a per-cluster pin, whose clusters only exist from a warm
start. Each step is kept per session (:data:`CACHE`), so undo, redo and a
page change refit nothing. Another table (or other roles) starts
unsteered.

A link's actions are checked one by one: text that is not an action, more
than :data:`MAX_ACTIONS` actions, or an action the library refuses (a
cluster or row that does not exist, a pair both linked and kept apart) is
dropped with a message naming it, and the page goes on with the rest.
"""

from __future__ import annotations

import hashlib
import re
import warnings
from dataclasses import dataclass

import numpy as np
import streamlit as st

from craft import CRAFT, CraftInputError, warm_refit
from craft.steer import Steering, steer

#: The URL's parameter of the steering.
PARAM = "steer"
#: Session keys: the actions applied (list of str), the actions undone (redo stack), rows picked for a link,
#: the steps' fits, and the messages about refused actions (shown once).
ACTIONS = "_steer_actions"
REDO = "_steer_redo"
HISTORY = "_steer_history"
DATA = "_steer_data"
PICKED = "steer_rows"
CACHE = "_steer_cache"
REFUSED = "_steer_refused"
#: Set by a change made from inside a fragment (a click on a chart): the whole page reruns (:func:`rerun_if_changed`).
CHANGED = "_steer_changed"
#: Most actions a view holds (each is one warm refit when a link is opened): a link with more is refused beyond it.
MAX_ACTIONS = 40
#: Longest URL text read (a hostile link of megabytes is refused before it is split).
MAX_TEXT = 2000
#: Rows picked at most for one link.
MAX_PICKED = 10
#: Fits kept per session (steps of the folds shown).
CACHE_SIZE = 64

_PATTERN = re.compile(r"^(?:p(\*|\d{1,6})\.(\d{1,7})\.([01x])|([mc])(\d{1,12})\.(\d{1,12})|M(\d{1,6})\.(\d{1,6})|S(\d{1,6}))$")


@dataclass(frozen=True)
class Action:
    """One steering action as the URL writes it (``text``) and what it asks."""

    text: str
    kind: str  # "pin", "must", "cannot", "merge", "split"
    a: int | None = None
    b: int | None = None
    value: str | None = None

    def describe(self, names) -> str:
        """The action in words, with column names from ``names``."""
        if self.kind == "pin":
            where = "every cluster" if self.a is None else f"cluster {self.a}"
            column = names[self.b] if self.b is not None and self.b < len(names) else f"column {self.b}"
            state = {"1": "pinned on", "0": "pinned off", "x": "free again"}[str(self.value)]
            return f"{column!s} {state} in {where}"
        if self.kind in ("must", "cannot"):
            return f"rows {self.a} and {self.b} " + ("together" if self.kind == "must" else "kept apart")
        if self.kind == "merge":
            return f"clusters {self.a} and {self.b} merged"
        return f"cluster {self.a} split in two"


def parse(text: str) -> Action:
    """One action from its text; ``ValueError`` naming the text when it is not one."""
    match = _PATTERN.match(text)
    if match is None:
        raise ValueError(f"{text[:40]!r} is not a steering action")
    pin_k, pin_j, pin_v, link, la, lb, ma, mb, sk = match.groups()
    if pin_j is not None:
        return Action(text, "pin", None if pin_k == "*" else int(pin_k), int(pin_j), pin_v)
    if link is not None:
        return Action(text, "must" if link == "m" else "cannot", int(la), int(lb))
    if ma is not None:
        return Action(text, "merge", int(ma), int(mb))
    return Action(text, "split", int(sk))


def read_link(text) -> tuple[list[str], list[str]]:
    """The actions of a link's ``steer`` text, and the messages for what was refused in it (not yet fitted)."""
    if not text:
        return [], []
    text = str(text)
    problems = []
    if len(text) > MAX_TEXT:
        problems.append(f"Ignored in the link: steer (longer than {MAX_TEXT:,} characters).")
        return [], problems
    actions, bad = [], []
    for part in text.split(","):
        try:
            actions.append(parse(part).text)
        except ValueError:
            bad.append(part)
    if bad:
        # One message, however many parts: a link of 1,000 commas says so once.
        named = ", ".join(repr(part[:40]) for part in bad[:5]) + (f" and {len(bad) - 5:,} more" if len(bad) > 5 else "")
        problems.append(f"Ignored in the link: {named} {'is not a steering action' if len(bad) == 1 else 'are not steering actions'} "
                        "(p<cluster>.<column>.<1|0|x>, m<row>.<row>, c<row>.<row>, M<cluster>.<cluster>, S<cluster>).")
    if len(actions) > MAX_ACTIONS:
        problems.append(f"Ignored in the link: {len(actions) - MAX_ACTIONS} steering action(s) beyond the "
                        f"{MAX_ACTIONS} a view holds.")
        actions = actions[:MAX_ACTIONS]
    return actions, problems


def actions() -> list[str]:
    """The session's actions; on the session's first call, the link's."""
    from .state import history_navigation

    # Back or Forward: the entry's link holds the steering of the view it showed (explorer.history).
    if ACTIONS not in st.session_state or history_navigation():
        found, problems = read_link(st.query_params.get(PARAM))
        st.session_state[ACTIONS] = found
        st.session_state[REDO] = []
        st.session_state[REFUSED] = problems
    return list(st.session_state[ACTIONS])


def _write_url(texts: list[str]) -> None:
    text = ",".join(texts)
    if text:
        if st.query_params.get(PARAM) != text:
            st.query_params[PARAM] = text
    elif PARAM in st.query_params:
        del st.query_params[PARAM]


def set_actions(texts: list[str], *, by_person: bool = True, undoable: bool = True) -> None:
    """Make ``texts`` the session's actions (at most :data:`MAX_ACTIONS`), in the URL too.

    A change the person makes (``by_person``) replaces the messages about what was refused before and, when
    ``undoable``, keeps the list it replaces for Undo (and forgets what Redo held).
    """
    if by_person and undoable:
        st.session_state[HISTORY] = (st.session_state.get(HISTORY, []) + [actions()])[-MAX_ACTIONS:]
        st.session_state[REDO] = []
    st.session_state[ACTIONS] = list(texts)[:MAX_ACTIONS]
    if by_person:
        st.session_state[CHANGED] = True
        st.session_state[REFUSED] = []
    _write_url(st.session_state[ACTIONS])


def _compacted(current: list[str], action: Action) -> list[str]:
    """``current`` with pin ``action`` in place of the earlier pins of its cell (since the last merge or split,
    which renumber the clusters): the list holds each cell's pin once, and a cell made free again leaves it."""
    since = max((i + 1 for i, text in enumerate(current) if text[0] in "MS"), default=0)
    kept = [text for i, text in enumerate(current)
            if i < since or not (text.startswith("p") and parse(text).a == action.a and parse(text).b == action.b)]
    return kept + ([] if action.value == "x" and len(kept) < len(current) else [action.text])


def add(text: str) -> None:
    """Add one action (a callback: the rerun shows its fit); beyond :data:`MAX_ACTIONS` it is refused.

    A pin replaces the earlier pin of its cell (:func:`_compacted`); Undo goes back to the list before.
    """
    current = actions()
    action = parse(text)
    wanted = _compacted(current, action) if action.kind == "pin" else current + [action.text]
    if len(wanted) > MAX_ACTIONS:
        st.session_state[REFUSED] = [f"Not applied: a view holds at most {MAX_ACTIONS} steering actions; remove "
                                     "some first."]
        return
    set_actions(wanted)


def remove(index: int) -> None:
    current = actions()
    if 0 <= index < len(current):
        set_actions(current[:index] + current[index + 1:])


def can_undo() -> bool:
    return bool(st.session_state.get(HISTORY)) or bool(actions())


def undo() -> None:
    """Back to the list before the last change (on a view opened from a link: its last action removed)."""
    history = list(st.session_state.get(HISTORY, []))
    current = actions()
    previous = history.pop() if history else current[:-1]
    st.session_state[HISTORY] = history
    st.session_state[REDO] = st.session_state.get(REDO, []) + [current]
    set_actions(previous, undoable=False)


def redo() -> None:
    stack = list(st.session_state.get(REDO, []))
    if stack:
        st.session_state[REDO] = stack[:-1]
        st.session_state[HISTORY] = st.session_state.get(HISTORY, []) + [actions()]
        set_actions(stack[-1], undoable=False)


def clear() -> None:
    set_actions([])


def pin_cycle(model, cluster: int, column: int) -> str:
    """The action a click on a mask cell makes: free → pinned on → pinned off → free (from ``model.pins_``)."""
    state = int(np.asarray(getattr(model, "pins_", np.zeros((0, 0))))[cluster, column]) if hasattr(model, "pins_") else 0
    value = {0: "1", 1: "0", -1: "x"}[state]
    return f"p{int(cluster)}.{int(column)}.{value}"


@dataclass
class Steered:
    """The fold of a view's actions: the steered fit, the last step's price, and what was refused."""

    model: CRAFT
    last: Steering | None
    applied: list[str]
    refused: list[str]
    pins: dict
    must: list
    cannot: list


def _renumber_pins(pins: dict, merged: tuple[int, int]) -> dict:
    """The pins after clusters ``merged`` become one (numbered as the lower): the higher's are dropped."""
    low, high = sorted(merged)
    out = {}
    for (k, name), value in pins.items():
        if k is None or k < high:
            out[(k, name)] = value
        elif k > high:
            out[(k - 1, name)] = value
    return out


def fold(base, X, texts: list[str], base_key: str, cache: dict | None = None) -> Steered:
    """Apply ``texts`` in order to ``base`` (fitted on ``X``); an action the library refuses is skipped.

    ``cache`` (a dict) keeps each step's :class:`Steering` under the base's key and the actions so far.
    """
    names = [str(c) for c in base.feature_names_in_]
    model, last = base, None
    pins: dict = {}
    must: list = []
    cannot: list = []
    applied: list[str] = []
    refused: list[str] = []
    last_step: tuple = ()
    for index, text in enumerate(texts):
        action = parse(text)
        new_pins, new_must, new_cannot = dict(pins), list(must), list(cannot)
        extra: dict = {}
        try:
            if action.kind == "pin":
                if action.b is None or action.b >= len(names):
                    raise CraftInputError(f"column {action.b} does not exist: the table has {len(names)} columns.")
                if action.a is not None and action.a >= model.n_clusters_:
                    raise CraftInputError(f"cluster {action.a} does not exist: the fit has clusters "
                                          f"0..{model.n_clusters_ - 1}.")
                key = (action.a, names[action.b])
                new_pins.pop(key, None)
                if action.value != "x":
                    new_pins[key] = action.value == "1"
            elif action.kind in ("must", "cannot"):
                pair = (int(action.a), int(action.b))  # type: ignore[arg-type]
                (new_must if action.kind == "must" else new_cannot).append(pair)
            elif action.kind == "merge":
                extra["merge"] = (action.a, action.b)
                new_pins = _renumber_pins(new_pins, (int(action.a), int(action.b)))  # type: ignore[arg-type]
            else:
                extra["split"] = action.a
            step_key = hashlib.sha256(repr((base_key, applied + [text])).encode()).hexdigest()
            constraints = dict(pins=new_pins or None, must_link=new_must or None, cannot_link=new_cannot or None)
            # Only the last step's price is shown: the steps before it (a link opened, an action added) are
            # the steered warm refit alone (the same fit steer makes, without its unsteered fit and prices,
            # which cost one warm refit per pin and link so far). A merge or split is steer's own start.
            priced = bool(extra) or index == len(texts) - 1
            found = _step(cache, step_key, priced, model, X, constraints, extra)
        except CraftInputError as problem:
            refused.append(f"Not applied: {action.describe(names)} ({text}): {problem}")
            continue
        last_step = (step_key, model, constraints, extra)
        model, last = (found.model, found) if isinstance(found, Steering) else (found, None)
        pins, must, cannot = new_pins, new_must, new_cannot
        applied.append(text)
    if applied and last is None:
        # The last action was refused: the price shown is that of the last one applied.
        step_key, start, constraints, extra = last_step
        last = _step(cache, step_key, True, start, X, constraints, extra)
        model = last.model
    return Steered(model, last, applied, refused, pins, must, cannot)


def _step(cache: dict | None, key: str, priced: bool, start, X, constraints: dict, extra: dict):
    """One step of a fold: :func:`craft.steer.steer` (``priced``) or the steered warm refit alone, kept in ``cache``.

    Both give the same fit (``steer``'s own is ``warm_refit(start, X, **constraints)`` without a merge or split).
    """
    found = None if cache is None else (cache.get(key + "+price") or (None if priced else cache.get(key)))
    if found is not None:
        return found
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the steered fit's notes are the unsteered fit's
        found = steer(start, X, **constraints, **extra) if priced else warm_refit(start, X, **constraints)
    if cache is not None:
        while len(cache) >= CACHE_SIZE:
            cache.pop(next(iter(cache)))
        cache[key + ("+price" if priced else "")] = found
    return found


def apply(ctx) -> None:
    """Replace ``ctx``'s fit by its steered fit (once per run; nothing when the view has no actions).

    Sets ``ctx.steered`` (:class:`Steered`) and gives ``ctx.key`` the actions' digest, so that every figure and
    card cached under the key is the steered fit's.
    """
    # A whole run shows the change already: only a fragment's own rerun needs another (rerun_if_changed).
    st.session_state.pop(CHANGED, None)
    if getattr(ctx, "steered", None) is not None or ctx.model is None or ctx.data is None:
        return
    # Steering names rows, columns and clusters of one table and roles: another table starts unsteered.
    if st.session_state.get(DATA) not in (None, ctx.view_data):
        for key in (HISTORY, REDO, PICKED):
            st.session_state[key] = []
        st.session_state[ACTIONS] = []
    st.session_state[DATA] = ctx.view_data
    texts = actions()
    if not texts:
        _write_url([])
        return
    from dataclasses import replace

    from .services.fitting import fitted_X

    cache = st.session_state.setdefault(CACHE, {})
    X = fitted_X(ctx.model, ctx.data.table)
    result = fold(ctx.model, X, texts, ctx.key, cache)
    if result.refused:
        # Refused actions leave the list (and the link): the list shows what the fit honours.
        st.session_state[REFUSED] = list(st.session_state.get(REFUSED, [])) + result.refused
        set_actions(result.applied, by_person=False)
    else:
        _write_url(result.applied)
    ctx.steered = result
    if result.applied:
        ctx.outcome = replace(ctx.outcome, model=result.model)
        ctx.key = f"{ctx.key}~steer~{hashlib.sha256(','.join(result.applied).encode()).hexdigest()[:12]}"


def price_lines(steering: Steering) -> list[str]:
    """The last action's price in lines: what changed, the objective, rows moved, masks changed, each pin's price."""
    lines = [f"What changed: {steering.summary}."]
    lines.append(f"Objective {steering.model.objective_:,.6g} steered against {steering.unsteered.objective_:,.6g} "
                 f"unsteered ({steering.objective_change:+,.4g}).")
    if steering.rows_moved.size:
        shown = ", ".join(str(int(r)) for r in steering.rows_moved[:20])
        more = f" and {steering.rows_moved.size - 20:,} more" if steering.rows_moved.size > 20 else ""
        lines.append(f"Rows moved ({steering.rows_moved.size:,}): {shown}{more}.")
    for k in sorted(set(steering.entered) | set(steering.left)):
        parts = []
        if steering.entered.get(k):
            parts.append("entered " + ", ".join(steering.entered[k]))
        if steering.left.get(k):
            parts.append("left " + ", ".join(steering.left[k]))
        lines.append(f"Cluster {k}'s mask: " + "; ".join(parts) + ".")
    for label, price in steering.prices.items():
        lines.append(f"Price of {label}: {price:+,.4g}.")
    if steering.undone:
        lines.append(f"Note: {steering.undone}.")
    return lines


# ---------------------------------------------------------------------------
# The page's controls


_CLUSTER_LABEL = re.compile(r"^cluster (\d+)")


def on_mask_click(model, point) -> None:
    """A click on the mask heatmap: cycle the clicked cell's pin (free → on → off → free)."""
    from craft.plots import escape_labels

    if not isinstance(point, dict):
        return
    found = _CLUSTER_LABEL.match(str(point.get("y") or ""))
    names = escape_labels([str(c) for c in model.feature_names_in_])
    x = str(point.get("x") or "")
    if found is None or x not in names or int(found.group(1)) >= model.n_clusters_:
        return  # a click on the planted panel, a legend mark or a gap
    add(pin_cycle(model, int(found.group(1)), names.index(x)))


def pick_row(row) -> None:
    """Add ``row`` (a position) to the rows picked for a link (the oldest leave beyond :data:`MAX_PICKED`)."""
    try:
        row = int(row)
    except (TypeError, ValueError):
        return
    picked = [r for r in st.session_state.get(PICKED, []) if r != row] + [row]
    st.session_state[PICKED] = picked[-MAX_PICKED:]
    st.session_state[CHANGED] = True


def on_projection_click(point) -> None:
    """A click on a point of the projection picks its row (``customdata``)."""
    if isinstance(point, dict) and point.get("customdata") is not None:
        pick_row(point["customdata"])


def _link_picked(kind: str) -> None:
    """Link the picked rows: must-link each to the first (a chain), or cannot-link every pair."""
    picked = list(st.session_state.get(PICKED, []))
    if len(picked) < 2:
        return
    if kind == "m":
        pairs = [(picked[0], other) for other in picked[1:]]
    else:
        pairs = [(a, b) for i, a in enumerate(picked) for b in picked[i + 1:]]
    current = actions()
    room = MAX_ACTIONS - len(current)
    if len(pairs) > room:
        st.session_state[REFUSED] = [f"Not applied: {len(pairs)} link(s) would pass the {MAX_ACTIONS} steering "
                                     "actions a view holds."]
        return
    set_actions(current + [f"{kind}{a}.{b}" for a, b in pairs])
    st.session_state[PICKED] = []


def rerun_if_changed() -> None:
    """Rerun the whole page after a click in a fragment changed the steering (a fragment's callback reruns only
    the fragment, and the fit is the page's)."""
    if st.session_state.pop(CHANGED, False):
        st.rerun()


def show_refused() -> None:
    """Say what was not applied (a link's hostile values, a refused action), until the person's next change."""
    from .ui import warning

    for message in st.session_state.get(REFUSED) or []:
        warning(message)


def panel(ctx) -> None:
    """The steering panel: the last action's price, the rows picked, the actions (each removable), undo, redo."""
    from .ui import esc

    show_refused()
    steered = getattr(ctx, "steered", None)
    texts = actions()
    names = [str(c) for c in ctx.model.feature_names_in_]
    with st.container(key="steer_panel", border=True):
        st.markdown("**Steer it** · click a cell of the mask heatmap to pin it (on → off → free); pick rows on "
                    "the Projection (click a point) or by number, then put them together or keep them apart; "
                    "merge or split clusters on their cards.")
        if steered is not None and steered.last is not None:
            st.container(key="steer_price").markdown("\n".join(f"- {esc(line)}" for line in price_lines(steered.last)))
        left, middle, right = st.columns([2, 2, 3])
        with left:
            row = st.number_input("Row to pick", min_value=0, max_value=max(len(ctx.model.labels_) - 1, 0), value=None,
                                  step=1, key="steer_row_input", placeholder="row number")
            st.button("Pick this row", key="steer_pick", disabled=row is None,
                      on_click=lambda: pick_row(st.session_state.get("steer_row_input")))
        with middle:
            link_controls(ctx, key="steer")
        with right:
            undo_col, redo_col, clear_col = st.columns(3)
            undo_col.button("Undo", key="steer_undo", on_click=undo, disabled=not can_undo(), icon=":material/undo:")
            redo_col.button("Redo", key="steer_redo", on_click=redo, disabled=not st.session_state.get(REDO),
                            icon=":material/redo:")
            clear_col.button("Clear", key="steer_clear", on_click=clear, disabled=not texts)
            st.markdown(f"**Steering ({len(texts)} of at most {MAX_ACTIONS})**" if texts else "No steering yet.")
            labels = ctx.model.labels_
            for i, text in enumerate(texts):
                words, button = st.columns([5, 1])
                action = parse(text)
                said = action.describe(names)
                if action.kind in ("must", "cannot") and max(action.a or 0, action.b or 0) < len(labels):
                    said += f" (now in clusters {int(labels[action.a])} and {int(labels[action.b])})"
                words.markdown(esc(said))
                button.button("✕", key=f"steer_remove_{i}_{text}", on_click=remove, args=(i,),
                              help="Remove this action (the fit is redone without it)")


def _pick_ticked(widget: str) -> None:
    for row in st.session_state.get(widget) or []:
        pick_row(row)
    st.session_state[widget] = []


def link_controls(ctx, rows=None, *, key: str) -> None:
    """The rows picked for a link, with the buttons that put them together or keep them apart.

    ``rows`` (positions in the fitted table, with their names), where given, are offered to be ticked and
    picked (a card's paragon and border rows).
    """
    labels = ctx.model.labels_
    if rows:
        names = dict(rows)
        ticked = st.multiselect("Tick rows to link", list(names), key=f"{key}_ticked",
                                format_func=lambda r: f"{names[r]} (cluster {int(labels[r])})")
        st.button("Pick the ticked rows", key=f"{key}_pick", disabled=not ticked, on_click=_pick_ticked,
                  args=(f"{key}_ticked",))
    picked = st.session_state.get(PICKED, [])
    st.container(key=f"{key}_picked").markdown(
        "Rows picked: " + (", ".join(f"{r} (cluster {int(labels[r])})" for r in picked if r < len(labels))
                           if picked else "none"))
    # One under the other: side by side in Tune & see's middle column their labels were cut ("Put th…").
    st.button("Put them together", key=f"{key}_must", disabled=len(picked) < 2, on_click=_link_picked,
              args=("m",), icon=":material/link:")
    st.button("Keep them apart", key=f"{key}_cannot", disabled=len(picked) < 2, on_click=_link_picked,
              args=("c",), icon=":material/link_off:")


def cluster_buttons(ctx, cluster: int) -> None:
    """Merge and split buttons for ``cluster`` (on its card)."""
    from .ui import esc

    model = ctx.model
    others = [k for k in range(model.n_clusters_) if k != cluster]
    left, middle, right = st.columns([2, 1, 1], vertical_alignment="bottom")
    partner = left.selectbox("Merge with", others, key=f"steer_merge_with_{cluster}",
                             format_func=lambda k: f"cluster {k} ({int(model.cluster_sizes_[k]):,} rows)")
    middle.button("Merge", key="steer_merge", disabled=partner is None, icon=":material/merge:",
                  on_click=lambda: add(f"M{min(cluster, partner)}.{max(cluster, partner)}"))
    right.button("Split in two", key="steer_split", icon=":material/call_split:",
                 disabled=int(model.cluster_sizes_[cluster]) < 2, on_click=lambda: add(f"S{cluster}"))
    show_refused()
    steered = getattr(ctx, "steered", None)
    if steered is not None and steered.last is not None:
        with st.expander("What the last steering cost", expanded=True):
            st.markdown("\n".join(f"- {esc(line)}" for line in price_lines(steered.last)))


def show_explanation(model, rows, *, key: str, name: str, what: str = "row") -> None:
    """Pick one of ``rows`` (a table with the model's columns) and draw why it sits in its cluster.

    Every bar is :meth:`craft.CRAFT.explain`'s (:func:`craft.plots.fig_explanation`): a feature's part of the
    row's cost in its cluster and of its margin over the runner-up; the bars of a row add up to
    :meth:`craft.CRAFT.assign`'s cost and margin.
    """
    from craft.plots import fig_explanation

    from .figure_export import chart
    from .ui import error

    if rows is None or len(rows) == 0:
        return
    labels = [str(label) for label in rows.index]
    choice = st.selectbox(f"Explain a {what}", range(len(rows)), key=f"{key}_pick",
                          format_func=lambda i: f"row {labels[i]}")
    if choice is None:
        return
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the table's notes are said where it is read
            explanation = model.explain(rows.iloc[[int(choice)]])
    except CraftInputError as problem:
        error(f"This row cannot be explained: {problem}")
        return
    chart(fig_explanation(explanation, 0, title=f"Row {labels[int(choice)]}: each feature's part of its cost "
                                                 f"and margin"), key=f"{key}_figure", name=name)
    st.caption("Left: each feature's part of the row's cost in its cluster (the bars add up to the cost). Right: "
               "its part of the margin over the next-nearest cluster (blue holds the row in its cluster, red pulls "
               "it towards the other; they add up to the margin). CRAFT.explain: exact, the cost is a sum over "
               "features.")
