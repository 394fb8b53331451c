"""Figures of the feature mask: which features each cluster selects, as a clusters x features heatmap.

:func:`mask_frame` prepares what :func:`fig_feature_masks` draws (ordered by
:func:`subspace_order`, so that each cluster's subspace is a block), beside the
planted subspaces when they are known; :func:`fig_mask_panels` sets the masks
of several fits side by side.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ._style import (
    SELECTED_COLOR,
    UNSELECTED_COLOR,
    _all_ticks,
    _binary_heatmap,
    _cluster_label,
    _finish,
    _mask_height,
    _matched_rows,
    _name_axis,
    _selection_legend,
    _spacing,
    _y_room,
    escape_labels,
)

__all__ = ["subspace_order", "mask_frame", "PIN_MARKS", "fig_feature_masks", "fig_mask_panels"]


def _mask_and_names(result, features=None) -> tuple[np.ndarray, list[str]]:
    if hasattr(result, "feature_mask_"):
        mask = np.asarray(result.feature_mask_, dtype=bool)
        names = [str(c) for c in result.feature_names_in_]
    else:
        mask = np.asarray(result, dtype=bool)
        if mask.ndim != 2:
            raise ValueError(f"a mask must be 2-D (clusters x features); got shape {mask.shape}")
        names = [str(c) for c in features] if features is not None else [f"x{j}" for j in range(mask.shape[1])]
    if len(names) != mask.shape[1]:
        raise ValueError(f"{len(names)} feature names for a mask with {mask.shape[1]} columns")
    return mask, names


def subspace_order(mask: np.ndarray, sizes=None) -> tuple[np.ndarray, np.ndarray]:
    """Row and column orders that make each cluster's subspace a block.

    Clusters are ordered by size (largest first; by index without sizes).
    Features are grouped by the first cluster (in that order) that selects
    them; within a group, features also selected by the next clusters come
    last, so that overlapping subspaces meet like a staircase; features no
    cluster selects come at the end. Ties keep the natural order.

    Parameters
    ----------
    mask : array-like of bool, shape (n_clusters, n_features)
    sizes : array-like of shape (n_clusters,) or None

    Returns
    -------
    rows, columns : ndarray of int
        Permutations of the clusters and of the features.

    Examples
    --------
    >>> rows, cols = subspace_order([[0, 1, 0, 1], [1, 0, 1, 0]])
    >>> rows.tolist(), cols.tolist()
    ([0, 1], [1, 3, 0, 2])
    """
    mask = np.asarray(mask, dtype=bool)
    k, d = mask.shape
    if sizes is None:
        rows = np.arange(k)
    else:
        sizes = np.asarray(sizes)
        rows = np.array(sorted(range(k), key=lambda i: (-sizes[i], i)), dtype=np.int64)
    ordered = mask[rows]
    keys = []
    for j in range(d):
        column = ordered[:, j]
        first = int(np.argmax(column)) if column.any() else k
        later = tuple(int(v) for v in column[first + 1 :]) if first < k else ()
        keys.append((first, later, j))
    columns = np.array([key[2] for key in sorted(keys)], dtype=np.int64)
    return rows.astype(np.int64), columns


def mask_frame(result, *, features=None, order: str = "subspace", sizes=None) -> pd.DataFrame:
    """The feature mask as a clusters x features table of booleans, ordered for display.

    Parameters
    ----------
    result : craft.CRAFT or array-like of bool (n_clusters, n_features)
        A fitted model (its ``feature_mask_``) or a mask.
    features : list of str, optional
        Column names for a mask given as an array.
    order : {"subspace", "natural", "count"}
        ``"subspace"``: :func:`subspace_order` (clusters by size when the
        model gives sizes); ``"natural"``: table order; ``"count"``: features
        selected by most clusters first.
    sizes : array-like, optional
        Cluster sizes for ``"subspace"`` when ``result`` is an array.

    Returns
    -------
    DataFrame
        Index ``cluster`` (cluster numbers), columns the feature names.

    Examples
    --------
    >>> mask_frame([[True, False], [False, True]], features=["a", "b"], order="natural").values.tolist()
    [[True, False], [False, True]]
    """
    mask, names = _mask_and_names(result, features)
    if sizes is None and hasattr(result, "cluster_sizes_"):
        sizes = result.cluster_sizes_
    rows = np.arange(mask.shape[0])
    if order == "subspace":
        rows, columns = subspace_order(mask, sizes)
    elif order == "natural":
        columns = np.arange(mask.shape[1])
    elif order == "count":
        columns = np.array(sorted(range(mask.shape[1]), key=lambda j: (-mask[:, j].sum(), j)), dtype=np.int64)
    else:
        raise ValueError(f"order={order!r} must be 'subspace', 'natural' or 'count'")
    return pd.DataFrame(
        mask[np.ix_(rows, columns)],
        index=pd.Index(rows, name="cluster"),
        columns=[names[j] for j in columns],
    )


#: Marks of pinned mask cells (``CRAFT(pins=...)``, read from ``pins_``): a white star on a pinned-on cell (always
#: selected), a black cross on a pinned-off one (never selected); free cells carry no mark.
PIN_MARKS = {1: ("pinned on", "star", "white"), -1: ("pinned off", "x", "black")}


def _pin_marks(fig: go.Figure, result, frame: pd.DataFrame, row_labels: dict, **where) -> None:
    """Mark the pinned cells of ``frame`` (clusters x features as drawn) from ``result.pins_``, if it has any."""
    pins = getattr(result, "pins_", None)
    if pins is None or not np.any(pins):
        return
    names = [str(c) for c in result.feature_names_in_]
    for value, (name, symbol, color) in PIN_MARKS.items():
        cells = [(k, feature) for k in frame.index for feature in frame.columns
                 if int(k) < pins.shape[0] and pins[int(k), names.index(str(feature))] == value]
        if not cells:
            continue
        fig.add_trace(go.Scatter(
            x=escape_labels([feature for _, feature in cells]), y=[row_labels[k] for k, _ in cells], mode="markers",
            name=f"{name} ({len(cells)})", showlegend=True, hoverinfo="skip",
            marker=dict(symbol=symbol, size=12, color=color, line=dict(color="black", width=1.5)),
        ), **where)


def fig_feature_masks(
    result,
    *,
    features=None,
    order: str = "subspace",
    sizes=None,
    true_mask=None,
    true_features=None,
    cluster_match=None,
    title: str | None = None,
) -> go.Figure:
    """Heatmap of the selected features per cluster (clusters x features).

    Parameters
    ----------
    result : craft.CRAFT or array-like of bool
        See :func:`mask_frame`.
    features, order, sizes
        See :func:`mask_frame`.
    true_mask : array-like of bool (n_true, n_true_features), optional
        Planted subspaces, drawn on the left ("Dataset | CRAFT").
    true_features : list of str, optional
        Names of ``true_mask``'s columns (default: the same as the result's).
        Only features present in the result are drawn.
    cluster_match : array-like of int, optional
        For each found cluster, the true cluster it matches (or -1); found
        clusters are then drawn in the true clusters' order and the feature
        order follows the true mask.
    title : str, optional

    Returns
    -------
    plotly.graph_objects.Figure
        One heatmap (or two side by side) with z = 1 where a feature is
        selected; rows are labelled ``"cluster k (n)"`` when sizes are known.
    """
    mask, names = _mask_and_names(result, features)
    if sizes is None and hasattr(result, "cluster_sizes_"):
        sizes = np.asarray(result.cluster_sizes_)
    if true_mask is None:
        frame = mask_frame(mask, features=names, order=order, sizes=sizes)
        labels = [_cluster_label(k, sizes) for k in frame.index]
        fig = go.Figure(_binary_heatmap(frame, labels, "CRAFT"))
        _pin_marks(fig, result, frame, dict(zip(frame.index, labels, strict=True)))
        x_axis, room = _name_axis(escape_labels(frame.columns))
        fig.update_yaxes(autorange="reversed", **_all_ticks("y", labels))
        fig.update_xaxes(**x_axis)
        _selection_legend(fig, SELECTED_COLOR, UNSELECTED_COLOR)
        _finish(fig, title or f"Selected features per cluster ({frame.shape[0]} clusters × {frame.shape[1]} features)",
                height=_mask_height(frame.shape[0]) + int(room), left=_y_room(labels), bottom=room)
        return fig

    true_mask = np.asarray(true_mask, dtype=bool)
    true_features = list(true_features) if true_features is not None else names
    present = [true_features.index(n) for n in names if n in true_features]
    truth = true_mask[:, present]
    truth_names = [true_features[j] for j in present]
    # Column order from the planted subspaces (so the dataset shows its blocks).
    if order == "subspace":
        _, columns = subspace_order(truth)
    else:
        columns = np.arange(len(truth_names))
    ordered_names = [truth_names[j] for j in columns]
    positions = [names.index(n) for n in ordered_names] + [j for j, n in enumerate(names) if n not in ordered_names]
    all_names = [names[j] for j in positions]
    truth_frame = pd.DataFrame(truth[:, columns], columns=ordered_names).reindex(columns=all_names, fill_value=False)
    rows = _matched_rows(mask.shape[0], cluster_match, sizes)
    found_frame = pd.DataFrame(mask[np.ix_(rows, np.asarray(positions, dtype=np.intp))], index=rows, columns=all_names)
    truth_labels = [f"planted {t}" for t in range(truth_frame.shape[0])]
    found_labels = [_cluster_label(k, sizes) for k in rows]
    # Room between the panels for the right panel's cluster labels ("cluster 12 (1,234)").
    fig = make_subplots(
        rows=1, cols=2, horizontal_spacing=_spacing(found_labels),
        subplot_titles=("Dataset: planted subspaces", "CRAFT: selected features"),
    )
    fig.add_trace(_binary_heatmap(truth_frame, truth_labels, "planted"), row=1, col=1)
    fig.add_trace(_binary_heatmap(found_frame, found_labels, "CRAFT"), row=1, col=2)
    _pin_marks(fig, result, found_frame, dict(zip(rows, found_labels, strict=True)), row=1, col=2)
    x_axis, room = _name_axis(escape_labels(all_names))
    fig.update_yaxes(autorange="reversed", **_all_ticks("y", truth_labels), row=1, col=1)
    fig.update_yaxes(autorange="reversed", **_all_ticks("y", found_labels), row=1, col=2)
    fig.update_xaxes(**x_axis)
    _selection_legend(fig, SELECTED_COLOR, UNSELECTED_COLOR)
    height = _mask_height(max(truth_frame.shape[0], found_frame.shape[0])) + int(room)
    _finish(fig, title or "Planted subspaces | CRAFT's selected features", height=height,
            left=_y_room(truth_labels), bottom=room)
    return fig


def fig_mask_panels(masks, titles, *, features, title: str) -> go.Figure:
    """Masks of several fits side by side, one panel each (e.g. the same data at several ρ).

    Parameters
    ----------
    masks : list of array-like of bool, each (n_clusters, n_features)
        Rows already in the order to show (e.g. matched to a reference fit).
    titles : list of str
        One per panel.
    features : list of str
        Column names, shared by every panel.
    title : str
    """
    fig = make_subplots(rows=1, cols=len(masks), subplot_titles=list(titles), horizontal_spacing=0.03)
    first_rows: list[str] = []
    for column, mask in enumerate(masks, start=1):
        mask = np.asarray(mask, dtype=bool)
        rows = [f"cluster {k}" for k in range(mask.shape[0])]
        first_rows = first_rows or rows
        frame = pd.DataFrame(mask, columns=list(features))
        fig.add_trace(_binary_heatmap(frame, rows, f"panel {column}"), row=1, col=column)
        fig.update_yaxes(showticklabels=column == 1, autorange="reversed", row=1, col=column)
    x_axis, room = _name_axis(escape_labels(features))
    fig.update_xaxes(title=None, **x_axis)
    fig.update_yaxes(automargin=False)
    tallest = max(np.asarray(mask).shape[0] for mask in masks)
    return _finish(fig, title, height=_mask_height(tallest) + int(room), left=_y_room(first_rows), bottom=room)
