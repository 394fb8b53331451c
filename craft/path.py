"""The mask path: which features each cluster selects as one parameter moves, clusters followed along it.

As the lasso path shows each coefficient against the penalty, the mask path
shows, for each cluster and feature, the values of a knob (``m``, ``rho``,
``k``, ``lam``...) at which the feature is selected, so a user sees which
selections hold whatever the knob and where the structure changes.

:func:`fit_path` fits one model per value; :func:`mask_path` is a pure
function of fitted models. Nothing of the engine is re-derived here: a
track's selection at a value is that fit's ``feature_mask_`` row, its size
that fit's ``cluster_sizes_``, and clusters are matched by their rows
(``labels_``).

Choices the paper leaves open, made here (also in ``docs/numerics.md``):

* **Matching.** Clusters of two neighbouring values are matched by the
  Jaccard similarity of their rows, with
  :func:`craft.stability.best_match_jaccard` (the one matching of the
  library, clusterboot's). Each cluster of the later value has a best
  match among the earlier ones (its *source*) and each cluster of the
  earlier value a best match among the later ones (its *target*). A pair
  that is each other's best match continues one *track*. A later cluster
  that is not its source's target starts a new track split off from its
  source's (a **split**); an earlier cluster that is not its target's
  source ends its track, merged into its target's (a **merge**). Ties go to
  the lower cluster number (``argmax``).
* **Order.** The path runs over the values in increasing order, whatever
  order the models are given in; a value given twice is refused.
* **No warm start.** :class:`craft.CRAFT` has no warm start, so
  :func:`fit_path` fits every value from scratch with the estimator's own
  ``random_state``: each point of the path is exactly the fit a user gets
  by asking for that value (the app shows these fits when a slider lands on
  a value of the path).
"""

from __future__ import annotations

import numbers

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import pandas as pd
from sklearn.base import clone

from ._tables import as_table
from .estimator import CRAFT
from .exceptions import CraftInputError
from .stability import best_match_jaccard

#: Most values on one path: each one is a whole fit.
MAX_VALUES = 200


@dataclass(frozen=True)
class PathEvent:
    """A change of structure between two neighbouring values of the path.

    Attributes
    ----------
    kind : {"split", "merge"}
        ``"split"``: ``target`` is a new track, split off from ``source``;
        ``"merge"``: ``source`` ends, merged into ``target``.
    step : int
        Position (in :attr:`MaskPath.values`) of the value where the new
        structure is first seen; the link runs from ``step - 1`` to ``step``.
    source, target : int
        Tracks at ``step - 1`` and at ``step``.
    jaccard : float
        Jaccard similarity of the rows of the two clusters linked.
    """

    kind: str
    step: int
    source: int
    target: int
    jaccard: float


@dataclass(frozen=True)
class MaskPath:
    """Masks of a list of fits along one knob, with their clusters matched into tracks (:func:`mask_path`).

    Attributes
    ----------
    knob : str
        The parameter that moves (a name for the axis).
    values : ndarray of float, shape (S,)
        Its values, increasing.
    features : list of str
        The fits' ``feature_names_in_``.
    clusters : ndarray of int, shape (T, S)
        Each track's cluster number in the fit at each value (-1 where the
        track does not exist).
    selected : ndarray of bool, shape (T, S, D)
        Whether the track's cluster selects each feature at each value: that
        fit's ``feature_mask_`` row (False where the track does not exist).
    sizes : ndarray of int, shape (T, S)
        Rows of the track's cluster at each value (``cluster_sizes_``; 0
        where the track does not exist).
    jaccard : ndarray of float, shape (T, S)
        Jaccard similarity of the rows of the track's cluster with its
        cluster at the previous value (NaN at the track's first value).
    events : tuple of PathEvent
        Splits and merges, in order of ``step``.
    n_clusters : ndarray of int, shape (S,)
        Each fit's ``n_clusters_``.
    objective, lam, rho : ndarray of float, shape (S,)
        Each fit's ``objective_``, ``lam_`` and ``rho_``.
    n_iter : ndarray of int, shape (S,)
        Each fit's ``n_iter_`` (passes of its kept restart).
    """

    knob: str
    values: np.ndarray
    features: list[str]
    clusters: np.ndarray
    selected: np.ndarray
    sizes: np.ndarray
    jaccard: np.ndarray
    events: tuple[PathEvent, ...]
    n_clusters: np.ndarray
    objective: np.ndarray
    lam: np.ndarray
    rho: np.ndarray
    n_iter: np.ndarray

    @property
    def n_tracks(self) -> int:
        return int(self.clusters.shape[0])

    @property
    def present(self) -> np.ndarray:
        """(T, S) bool: whether the track exists at each value."""
        return self.clusters >= 0

    def track_label(self, track: int) -> str:
        """A track named by its first cluster: ``"track 2: cluster 1 at m = 0.3"``."""
        first = int(np.argmax(self.present[track]))
        return f"track {track}: cluster {self.clusters[track, first]} at {self.knob} = {self.values[first]:g}"

    def selected_ranges(self) -> pd.DataFrame:
        """Every run of consecutive values at which a track selects a feature.

        Returns
        -------
        DataFrame
            One row per run: ``track``, ``feature``, ``start`` and ``stop``
            (the first and last value of the run), ``n_values`` (values in
            the run) and ``whole_track`` (the run covers every value at which
            the track exists: a selection robust to the knob).
        """
        rows = []
        for track in range(self.n_tracks):
            alive = self.present[track]
            for d, feature in enumerate(self.features):
                flags = self.selected[track, :, d]
                for start, stop in _runs(flags):
                    rows.append(dict(track=track, feature=feature, start=float(self.values[start]),
                                     stop=float(self.values[stop]), n_values=stop - start + 1,
                                     whole_track=bool(flags[alive].all())))
        return pd.DataFrame(rows, columns=["track", "feature", "start", "stop", "n_values", "whole_track"])

    def frame(self) -> pd.DataFrame:
        """The path as a long table: one row per track, value and feature where the track exists."""
        tracks, steps = np.nonzero(self.present)
        rows = [dict(track=int(t), value=float(self.values[s]), cluster=int(self.clusters[t, s]),
                     size=int(self.sizes[t, s]), feature=feature, selected=bool(self.selected[t, s, d]))
                for t, s in zip(tracks, steps, strict=True) for d, feature in enumerate(self.features)]
        return pd.DataFrame(rows, columns=["track", "value", "cluster", "size", "feature", "selected"])


def _runs(flags: np.ndarray) -> list[tuple[int, int]]:
    """(first, last) positions of every run of True in ``flags``."""
    padded = np.concatenate([[False], flags, [False]]).astype(np.int8)
    edges = np.diff(padded)
    return list(zip(np.flatnonzero(edges == 1).tolist(), (np.flatnonzero(edges == -1) - 1).tolist(), strict=True))


def _checked_models(models: Sequence, values: Sequence) -> tuple[list, np.ndarray]:
    models = list(models)
    values_array = np.asarray(values, dtype=np.float64)
    if not models or len(models) != len(values_array):
        raise CraftInputError(f"mask_path needs one value per model: got {len(models)} model(s) and "
                              f"{len(values_array)} value(s).")
    if not np.isfinite(values_array).all():
        raise CraftInputError("The path's values must be finite numbers.")
    if len(np.unique(values_array)) != len(values_array):
        raise CraftInputError("A value appears twice on the path: give each value of the knob once.")
    for position, model in enumerate(models):
        if not hasattr(model, "labels_"):
            raise CraftInputError(f"Model {position} of the path is not fitted: fit every model first.")
    first = models[0]
    for position, model in enumerate(models[1:], start=1):
        if len(model.labels_) != len(first.labels_) or list(model.feature_names_in_) != list(first.feature_names_in_):
            raise CraftInputError(
                f"Model {position} of the path was fitted on another table ({len(model.labels_):,} rows, "
                f"{len(model.feature_names_in_)} features; model 0 has {len(first.labels_):,} and "
                f"{len(first.feature_names_in_)}): fit every value on the same table, rows matched.")
    order = np.argsort(values_array, kind="stable")
    return [models[i] for i in order], values_array[order]


def _link(earlier: np.ndarray, later: np.ndarray, k_earlier: int, k_later: int):
    """Best matches both ways between the clusters of two fits of the same rows."""
    rows = np.arange(len(earlier))
    source_jaccard, source, _ = best_match_jaccard(later, rows, earlier, k_later, k_earlier)
    target_jaccard, target, _ = best_match_jaccard(earlier, rows, later, k_earlier, k_later)
    return source, target, source_jaccard, target_jaccard


def mask_path(models: Sequence[CRAFT], values: Sequence[float], *, knob: str = "m") -> MaskPath:
    """Follow the clusters and their feature masks of fits along one knob.

    Parameters
    ----------
    models : sequence of fitted CRAFT
        One fit per value, all on the same table (same rows, same columns).
    values : sequence of float
        The knob's value of each model (any order; the path is increasing).
    knob : str, default="m"
        The parameter's name, for labels.

    Returns
    -------
    MaskPath

    Raises
    ------
    CraftInputError
        If the models and values do not pair up, a value repeats, a model is
        not fitted, or the models were fitted on different tables.

    Examples
    --------
    >>> from craft import CRAFT
    >>> from craft.datasets import load
    >>> X, _ = load("zoo")
    >>> fits = [CRAFT(m=m, k=3, random_state=0).fit(X) for m in (0.3, 0.5)]
    >>> path = mask_path(fits, [0.3, 0.5])
    >>> path.selected.shape[1:], bool((path.selected[:, 1].sum(axis=0) > 0).any())
    ((2, 16), True)
    """
    models, values_array = _checked_models(models, values)
    labels = [np.asarray(model.labels_, dtype=np.int64) for model in models]
    ks = [int(model.n_clusters_) for model in models]
    # Track of every cluster of the current fit; tracks grow as lists, stacked at the end.
    current = list(range(ks[0]))
    members: list[dict[int, int]] = [{0: c} for c in range(ks[0])]
    links: list[dict[int, float]] = [{} for _ in range(ks[0])]
    events: list[PathEvent] = []
    for step in range(1, len(models)):
        source, target, jaccard, target_jaccard = _link(labels[step - 1], labels[step], ks[step - 1], ks[step])
        following: list[int] = []
        for c in range(ks[step]):
            parent = current[source[c]]
            if target[source[c]] == c:
                track = parent
            else:
                track = len(members)
                members.append({})
                links.append({})
                events.append(PathEvent("split", step, parent, track, float(jaccard[c])))
            members[track][step] = c
            links[track][step] = float(jaccard[c])
            following.append(track)
        for c in range(ks[step - 1]):
            if source[target[c]] != c:
                events.append(PathEvent("merge", step, current[c], following[target[c]], float(target_jaccard[c])))
        current = following
    return _assembled(knob, values_array, models, members, links, events)


def _assembled(knob: str, values: np.ndarray, models: list, members: list[dict[int, int]],
               links: list[dict[int, float]], events: list[PathEvent]) -> MaskPath:
    n_tracks, n_steps = len(members), len(models)
    features = [str(name) for name in models[0].feature_names_in_]
    clusters = np.full((n_tracks, n_steps), -1, dtype=np.int64)
    selected = np.zeros((n_tracks, n_steps, len(features)), dtype=bool)
    sizes = np.zeros((n_tracks, n_steps), dtype=np.int64)
    jaccard = np.full((n_tracks, n_steps), np.nan)
    for track, steps in enumerate(members):
        for step, cluster in steps.items():
            clusters[track, step] = cluster
            selected[track, step] = np.asarray(models[step].feature_mask_, dtype=bool)[cluster]
            sizes[track, step] = int(models[step].cluster_sizes_[cluster])
        for step, similarity in links[track].items():
            jaccard[track, step] = similarity
    return MaskPath(knob=knob, values=values, features=features, clusters=clusters, selected=selected, sizes=sizes,
                    jaccard=jaccard, events=tuple(sorted(events, key=lambda e: (e.step, e.kind, e.source, e.target))),
                    n_clusters=np.array([int(model.n_clusters_) for model in models], dtype=np.int64),
                    objective=np.array([float(model.objective_) for model in models]),
                    lam=np.array([float(model.lam_) for model in models]),
                    rho=np.array([float(model.rho_) for model in models]),
                    n_iter=np.array([int(model.n_iter_) for model in models], dtype=np.int64))


def _path_values(knob: str, values) -> list:
    """The path's values, increasing: 1 to :data:`MAX_VALUES` finite numbers.

    A path orders its fits along the knob and draws them on a numeric axis, so
    a knob that takes text or True/False (``missing``, ``standardize``) is
    refused, not sorted alphabetically.
    """
    if hasattr(values, "__len__") and not isinstance(values, (str, bytes)) and len(values) > MAX_VALUES:
        raise CraftInputError(f"A path needs 1 to {MAX_VALUES} values (each one is a whole fit); got {len(values):,}.")
    if isinstance(values, (str, bytes)):
        raise CraftInputError(f"values={values!r} must be a sequence of numbers, the values of {knob!r} to fit at.")
    try:
        values = list(values)
    except TypeError:
        raise CraftInputError(f"values={values!r} must be a sequence of numbers, the values of {knob!r} to fit at.") from None
    if not 1 <= len(values) <= MAX_VALUES:
        raise CraftInputError(f"A path needs 1 to {MAX_VALUES} values (each one is a whole fit); got {len(values):,}.")
    odd = [v for v in values if isinstance(v, (bool, np.bool_)) or not isinstance(v, (numbers.Real, np.number))
           or not np.isfinite(float(v))]
    if odd:
        raise CraftInputError(
            f"A path follows a numeric knob along a numeric axis; {knob}={odd[0]!r} is not a finite number. "
            f"For a knob that takes text or True/False ({knob!r} here), fit each value on its own and compare the fits."
        )
    return sorted(values)


def fit_path(estimator: CRAFT, X, knob: str, values: Sequence, *,
             callback: Callable[[float, str], object] | None = None) -> tuple[list[CRAFT], MaskPath]:
    """Fit ``estimator`` at every value of ``knob`` and follow its masks (:func:`mask_path`).

    Each value is a fit from scratch of a clone of ``estimator`` with
    ``knob`` set (CRAFT has no warm start; with the estimator's
    ``random_state`` every point is the fit that value gives on its own).
    Setting ``k`` drops ``lam`` and setting ``lam`` drops ``k``, so the knob
    sizes the fit.

    Parameters
    ----------
    estimator : CRAFT
        Its parameters other than ``knob`` are kept.
    X : DataFrame
    knob : str
        A parameter of the estimator (``"m"``, ``"rho"``, ``"k"``, ``"lam"``...).
    values : sequence
        Its values (at most :data:`MAX_VALUES`).
    callback : callable or None
        ``callback(fraction, text)`` after every iteration of every fit; an
        exception it raises stops the path (it propagates).

    Returns
    -------
    models : list of CRAFT
        The fits, in the path's (increasing) order.
    path : MaskPath
    """
    params = estimator.get_params()
    if knob not in params:
        raise CraftInputError(f"knob={knob!r} is not a parameter of {type(estimator).__name__}; choose one of "
                              f"{', '.join(sorted(params))}.")
    values = _path_values(knob, values)
    table = as_table(X).reset_index(drop=True)
    sizing = {"k": {"lam": None}, "lam": {"k": None}}.get(knob, {})
    models = []
    for position, value in enumerate(values):
        share, text = position / len(values), f"{knob} = {value:g}"
        model = clone(estimator).set_params(**{knob: value, **sizing})
        model.fit(table, callback=None if callback is None else
                  lambda record, share=share, text=text: callback(share, text))
        models.append(model)
    if callback is not None:
        callback(1.0, "done")
    return models, mask_path(models, values, knob=knob)
