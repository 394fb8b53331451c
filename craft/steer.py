"""Steer a fitted model by hand and see what each change costs.

An analyst knows things the data cannot say: a column must describe a
segment, two rows are one customer, two clusters are the same thing. CRAFT's
objective prices every such change, because each is a constraint on a step
the objective already minimises:

* a **pin** constrains a cluster's feature selection (``CRAFT(pins=...)``);
* a **link** constrains the assignment (``must_link``, ``cannot_link``);
* a **merge** or a **split** changes the partition a warm fit starts from.

:func:`steer` makes the change as a warm refit of the model on screen
(:func:`craft.warm_refit`: one run from its partition) and fits the same
warm start without the change, so that :class:`Steering` can say what the
change cost: the objective against the unsteered fit's, the rows that moved,
the features that entered or left each mask, and, for each pin and link
(up to :data:`MAX_PRICED`), its own price, the objective with every change
less the objective without that one.

A merge or a split holds λ at the model's ``lam_`` (``k`` is dropped):
with ``k`` the λ search would look for the old number of clusters and
undo the change at once. At that λ a pass may still open a cluster for rows
beyond λ + D F0 from every cluster (a merged cluster too wide for its rows)
or empty one (half of a split that no row prefers); :attr:`Steering.undone`
says so when the fit does not end with the number of clusters asked for.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ._warm_start import warm_refit
from .estimator import CRAFT
from .exceptions import CraftInputError
from .relabel import overlap_table

#: Most pins and links priced one by one (each is one more warm fit).
MAX_PRICED = 20


@dataclasses.dataclass(frozen=True)
class Steering:
    """A steered fit and its price against the unsteered warm fit from the same start.

    Attributes
    ----------
    model : CRAFT
        The steered fit.
    unsteered : CRAFT
        The warm fit from the same start with no pin, link, merge or split.
    objective_change : float
        ``model.objective_ - unsteered.objective_``: what the steering cost
        (>= 0 up to the heuristics of a warm run: a constraint never
        lowers the optimum it constrains, but each fit is one local optimum).
    rows_moved : ndarray of int64
        Positions of the rows whose cluster differs from the unsteered
        fit's, once each steered cluster is paired with an unsteered one so
        that the most rows share their pair (the Hungarian method on the
        overlap table; a cluster left unpaired moves all its rows).
    entered, left : dict of int to list of str
        Per steered cluster (its own number), the columns its mask has and
        its matched unsteered cluster's lacks, and the other way round.
    prices : dict of str to float
        For each pin and link (at most :data:`MAX_PRICED`), the objective
        with every change minus the objective without that one.
    undone : str or None
        What the fit undid at once (a merged cluster reopened, a split
        half emptied), or None.
    """

    model: CRAFT
    unsteered: CRAFT
    objective_change: float
    rows_moved: np.ndarray
    entered: dict[int, list[str]]
    left: dict[int, list[str]]
    prices: dict[str, float]
    undone: str | None

    @property
    def summary(self) -> str:
        """One line: what changed and what it cost."""
        changed = sum(len(columns) for columns in self.entered.values()) + sum(len(c) for c in self.left.values())
        text = (f"objective {self.objective_change:+,.4g} against the unsteered fit, {self.rows_moved.size:,} row(s) "
                f"moved, {changed} mask cell(s) changed")
        return text + (f"; {self.undone}" if self.undone else "")


def steer(model: CRAFT, X, *, pins=None, must_link=None, cannot_link=None, merge=None, split=None,
          random_state=0, **params) -> Steering:
    """Refit ``model`` warm with a change a person made, and price it.

    Parameters
    ----------
    model : CRAFT
        A fitted in-memory model (the view on screen).
    X : DataFrame
        The table ``model`` was fitted on.
    pins, must_link, cannot_link
        As in :class:`craft.CRAFT` (cluster numbers in ``pins`` are
        ``model``'s, or after a merge or split the new start's: see below).
    merge : (int, int), optional
        Two clusters of ``model`` to pool: the start holds their rows as one
        cluster, numbered as the lower of the two; the clusters after the
        higher one move down by one.
    split : int, optional
        A cluster of ``model`` to split in two by a 2-means on its selected
        features (standardized numbers, one-hot levels): one half keeps its
        number, the other becomes cluster ``n_clusters_``.
    random_state : int, default=0
        Seed of the split's 2-means.
    **params
        Other parameters to change, as :func:`craft.warm_refit` takes them.

    Returns
    -------
    Steering
    """
    if not isinstance(model, CRAFT) or not hasattr(model, "statistics_"):
        raise CraftInputError("steer needs a fitted CRAFT model (it refits warm from the model's partition).")
    if merge is not None and split is not None:
        raise CraftInputError("Give merge or split, not both: each is the start of one refit.")
    start, intended = model, None
    if merge is not None or split is not None:
        params = {**params, "lam": float(model.lam_), "k": None}
        start, intended = (_merged(model, merge) if merge is not None else _split(model, X, split, random_state))
    constraints = {"pins": pins, "must_link": must_link, "cannot_link": cannot_link}
    steered = warm_refit(start, X, **params, **constraints)
    unsteered = warm_refit(model, X, **params, pins=None, must_link=None, cannot_link=None)
    partner = _partners(steered.labels_, unsteered.labels_, steered.n_clusters_, unsteered.n_clusters_)
    labels = np.asarray(steered.labels_)
    shown = np.where(labels >= 0, partner[np.maximum(labels, 0)], -1)
    rows_moved = np.flatnonzero(shown != unsteered.labels_).astype(np.int64)
    entered, left = _mask_changes(steered, unsteered, partner)
    undone = None
    if intended is not None and steered.n_clusters_ != intended:
        undone = (f"the fit ended with {steered.n_clusters_} clusters, not the {intended} asked for: at λ = "
                  f"{model.lam_:.4g} a pass {'opened' if steered.n_clusters_ > intended else 'emptied'} a cluster")
    prices = _prices(start, X, params, constraints, steered.objective_)
    return Steering(steered, unsteered, float(steered.objective_ - unsteered.objective_), rows_moved, entered, left,
                    prices, undone)


def _partners(steered, unsteered, n_steered: int, n_unsteered: int) -> np.ndarray:
    """The unsteered cluster each steered cluster is (-2 for none), pairing clusters one to one so that the most
    rows share their pair (the Hungarian method on the overlap table); unlike the app's renumbering
    (:func:`craft.relabel.match_clusters`) the two fits may have different numbers of clusters."""
    from scipy.optimize import linear_sum_assignment

    table = overlap_table(steered, unsteered, n_steered, n_unsteered)
    rows, columns = linear_sum_assignment(table, maximize=True)
    partner = np.full(n_steered, -2, dtype=np.int64)
    partner[rows] = columns
    return partner


def _mask_changes(steered: CRAFT, unsteered: CRAFT, partner: np.ndarray) -> tuple[dict, dict]:
    """Columns each steered cluster's mask gained and lost against the unsteered cluster paired with it."""
    names = [str(name) for name in steered.feature_names_in_]
    entered: dict[int, list[str]] = {}
    left: dict[int, list[str]] = {}
    for k in range(steered.n_clusters_):
        matched = int(partner[k])
        if matched < 0:
            continue  # a cluster the unsteered fit does not have: all of its mask is new
        gained = steered.feature_mask_[k] & ~unsteered.feature_mask_[matched]
        lost = unsteered.feature_mask_[matched] & ~steered.feature_mask_[k]
        if gained.any():
            entered[k] = [names[j] for j in np.flatnonzero(gained)]
        if lost.any():
            left[k] = [names[j] for j in np.flatnonzero(lost)]
    return entered, left


def _prices(start: CRAFT, X, params: dict, constraints: dict, objective: float) -> dict[str, float]:
    """Each pin's and link's own price: the objective with every change less that without this one."""
    items = [("pins", key) for key in (constraints["pins"] or {})]
    items += [(kind, pair) for kind in ("must_link", "cannot_link") for pair in (constraints[kind] or [])]
    if len(items) <= 1:
        # One change: its price is the whole change's (no other fit needed).
        return {}
    prices = {}
    for kind, item in items[:MAX_PRICED]:
        without = dict(constraints)
        if kind == "pins":
            without["pins"] = {key: value for key, value in constraints["pins"].items() if key != item}
            label = f"pin {item[1]!r} {'on' if constraints['pins'][item] else 'off'} in " + (
                "every cluster" if item[0] is None else f"cluster {item[0]}")
        else:
            without[kind] = [pair for pair in constraints[kind] if pair != item]
            label = f"{'must-link' if kind == 'must_link' else 'cannot-link'} {tuple(item)}"
        prices[label] = float(objective - warm_refit(start, X, **params, **without).objective_)
    return prices


def _merged(model: CRAFT, pair) -> tuple[CRAFT, int]:
    """A start model whose partition pools clusters ``pair`` (statistics are sums, so pooling adds them)."""
    a, b = sorted(_cluster(model, value) for value in _two(pair))
    if a == b:
        raise CraftInputError(f"merge=({a}, {b}) names one cluster twice: give two different clusters.")
    from . import _engine

    return _start(model, _engine.merged_statistics(model.statistics_, a, b)), model.n_clusters_ - 1


def _split(model: CRAFT, X, cluster, random_state) -> tuple[CRAFT, int]:
    """A start model whose partition splits ``cluster`` in two by a 2-means on its selected features."""
    from sklearn.cluster import KMeans

    from . import _engine

    k = _cluster(model, cluster)
    labels = np.asarray(model.labels_)
    rows = np.flatnonzero(labels == k)
    if rows.size < 2:
        raise CraftInputError(f"split={k}: cluster {k} holds {rows.size} row(s); a split needs at least 2.")
    data = model._encoded(X)
    if data.n_samples != labels.size:
        raise CraftInputError(f"X has {data.n_samples} rows; the fit had {labels.size}: pass the fitted table.")
    points = _selected_points(model, data.take(rows), k)
    halves = KMeans(n_clusters=2, n_init=10, random_state=random_state).fit_predict(points)
    if np.unique(halves).size < 2:
        raise CraftInputError(f"split={k}: the rows of cluster {k} are alike on its selected features, so no "
                              "2-means parts them.")
    new_labels = labels.copy()
    new_labels[rows[halves == 1]] = model.n_clusters_
    stats = _engine.statistics(data, new_labels, model.n_clusters_ + 1)
    return _start(model, stats), model.n_clusters_ + 1


def _selected_points(model: CRAFT, data, k: int) -> np.ndarray:
    """The rows as points for the split's 2-means: cluster ``k``'s selected numbers (missing at the cluster's
    mean) and one-hot levels of its selected categorical features; every feature where it selects none."""
    weights = model.clusters_.weights[k] > 0.5
    if not weights.any():
        weights = np.ones_like(weights)
    n_numeric = data.n_numeric
    parts = []
    if n_numeric and weights[:n_numeric].any():
        numeric = data.numeric
        if data.observed is not None:
            numeric = np.where(data.observed, numeric, model.clusters_.means[k][None, :])
        parts.append(numeric[:, weights[:n_numeric]])
    if data.n_categorical and weights[n_numeric:].any():
        onehot = data.onehot().toarray()
        columns = np.repeat(weights[n_numeric:], data.n_levels)
        parts.append(onehot[:, columns])
    return np.hstack(parts)


def _start(model: CRAFT, stats) -> CRAFT:
    """A copy of ``model`` whose partition, for a warm fit, is ``stats`` (the fitted attributes are shared, not changed)."""
    start = CRAFT.__new__(type(model))
    start.__dict__.update(vars(model))
    start.statistics_ = stats
    start.n_clusters_ = int(stats.counts.shape[0])
    return start


def _two(pair) -> tuple:
    try:
        a, b = pair
    except (TypeError, ValueError):
        raise CraftInputError(f"merge={pair!r} must be two cluster numbers, e.g. (0, 2).") from None
    return a, b


def _cluster(model: CRAFT, value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise CraftInputError(f"{value!r} is not a cluster number: clusters are 0..{model.n_clusters_ - 1}.")
    if not 0 <= int(value) < model.n_clusters_:
        raise CraftInputError(f"Cluster {value} does not exist: the model has clusters 0..{model.n_clusters_ - 1}.")
    return int(value)
