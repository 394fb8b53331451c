"""The data heatmap: the table's rows sorted by cluster, the cells each cluster selects in blue.

:func:`heatmap_panel` prepares one panel (:class:`HeatmapPanel`: every
cell's class and display value), :func:`fig_data_heatmap` draws it, beside
the planted clusters and subspaces when they are known; large tables are
drawn from a sample stratified by cluster (:func:`sample_rows`), for display
only. :data:`HEATMAP_CAPTION` says what the colours mean.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ._style import (
    LABEL_GAP_PX,
    SELECTED_COLOR,
    SELECTED_NAME,
    SELECTED_SCALE,
    UNSELECTED_NAME,
    UNSELECTED_SCALE,
    _LEGEND_TOP,
    _esc,
    _finish,
    _matched_rows,
    _name_axis,
    _selection_legend,
    _spacing,
    _y_room,
    escape_labels,
)
from .masks import mask_frame, subspace_order

__all__ = ["MODAL_VALUE", "OTHER_LEVEL_VALUE", "MISSING_COLOR", "MISSING_NAME", "HEATMAP_CAPTION", "sample_rows", "HeatmapPanel",
           "modal_codes", "heatmap_panel", "spaced_labels", "fig_data_heatmap"]


#: Display value of a categorical cell: the row's level is its group's most
#: frequent level (dark), or another level (light). Level codes are not
#: shaded: their order means nothing for nominal data.
MODAL_VALUE, OTHER_LEVEL_VALUE = 1.0, 0.3


#: Colour of a missing cell in the data heatmap: orange, a hue of neither scale (no value is drawn in it).
MISSING_COLOR = "#e6550d"
MISSING_NAME = "missing value"


#: What the colours of the data heatmap mean (figure captions repeat it).
HEATMAP_CAPTION = (
    "Blue cells: features the row's cluster selects; grey cells: features it does not select (two separate "
    "colour scales, so no shade of one looks like the other). Within each colour, numbers are darker the higher "
    "they lie in their column (z-score, clipped at ±2.5 sd); for a categorical feature the cell is dark when the "
    "row's level is its cluster's most frequent level and light otherwise. Orange cells: missing values, selected "
    "or not (a colour of their own, never a shade of a value)."
)


def sample_rows(labels, max_rows: int, *, random_state=0) -> np.ndarray:
    """Rows to display: all of them, or a sample stratified by cluster.

    Each cluster keeps a share of ``max_rows`` proportional to its size
    (largest remainders), at least one row when there are no more clusters
    than ``max_rows``. The result is sorted by cluster, then by row; which
    rows of a cluster are kept is drawn with ``random_state``.

    Examples
    --------
    >>> sample_rows([0, 0, 1, 1, 1, 1], 3).tolist()  # one row of cluster 0, two of cluster 1
    [1, 3, 4]
    """
    labels = np.asarray(labels)
    n = labels.shape[0]
    order = np.lexsort((np.arange(n), labels))
    if n <= max_rows:
        return order
    rng = np.random.default_rng(random_state)
    groups, counts = np.unique(labels, return_counts=True)
    quota = counts * max_rows / n
    take = np.floor(quota).astype(int)
    if len(groups) <= max_rows:
        take = np.maximum(take, 1)
    while take.sum() > max_rows:  # the minimum of one row took rows from the others
        take[int(np.argmax(take))] -= 1
    order = np.argsort(-(quota - np.floor(quota)), kind="stable")
    while take.sum() < max_rows:
        room = [g for g in order if take[g] < counts[g]]
        for g in room[: max_rows - take.sum()]:
            take[g] += 1
    chosen = []
    for group, count in zip(groups, take, strict=True):
        members = np.flatnonzero(labels == group)
        if count >= members.size:
            chosen.append(members)
        else:
            picked = rng.choice(members.size, size=int(count), replace=False)
            chosen.append(np.sort(members[np.sort(picked)]))
    return np.concatenate(chosen) if chosen else np.array([], dtype=np.int64)


@dataclass
class HeatmapPanel:
    """What one panel of the data heatmap draws.

    Attributes
    ----------
    values : ndarray (n_shown, n_features)
        Display value of every cell in [0, 1]: numbers by their column's
        z-score clipped to ±2.5 (0 = 2.5 sd below the mean); levels
        :data:`MODAL_VALUE` where the row's level is its group's most
        frequent level, :data:`OTHER_LEVEL_VALUE` elsewhere; 0 for missing
        numbers and unused columns.
    selected : ndarray of bool (n_shown, n_features)
        Whether the row's group selects the cell's feature: which of the
        two traces (hue classes) draws the cell.
    rows : ndarray of int
        Table rows shown, in display order (sorted by group).
    groups : ndarray
        Group (cluster) of every shown row.
    features : list of str
    text : ndarray of str (n_shown, n_features)
        Original cell values, for hovering.
    n_total : int
        Rows in the table (all of them were used to fit).
    missing : ndarray of bool (n_shown, n_features)
        Cells missing in the table (numeric or categorical): drawn in
        :data:`MISSING_COLOR` by a trace of their own, whatever ``values``
        and ``selected`` say.
    """

    values: np.ndarray
    selected: np.ndarray
    rows: np.ndarray
    groups: np.ndarray
    features: list
    text: np.ndarray
    n_total: int
    missing: np.ndarray

    @property
    def sampled(self) -> bool:
        return len(self.rows) < self.n_total

    def caption(self) -> str:
        """A sentence on what is shown (and whether rows were sampled)."""
        if self.sampled:
            return (f"Showing {len(self.rows):,} of {self.n_total:,} rows: a sample stratified by cluster, for "
                    f"display only; the fit used all {self.n_total:,} rows.")
        return f"Showing all {self.n_total:,} rows."


def modal_codes(level_counts: np.ndarray, n_levels, offsets) -> np.ndarray:
    """Most frequent level of every categorical feature in every group, as level codes (G, Q).

    Parameters
    ----------
    level_counts : ndarray (G, T)
        Rows of each level per group (the engine's ``Statistics.level_counts``).
    n_levels, offsets : array-like of int (Q,)
        Levels per feature and where each feature starts on the level axis
        (the encoding's ``n_levels`` and ``offsets``).

    Examples
    --------
    >>> modal_codes(np.array([[1, 3, 2, 0], [5, 0, 0, 1]]), [3, 1], [0, 3]).tolist()
    [[1, 0], [0, 0]]
    """
    n_levels = np.asarray(n_levels, dtype=np.int64)
    out = np.zeros((level_counts.shape[0], n_levels.size), dtype=np.int64)
    for q, (start, width) in enumerate(zip(np.asarray(offsets, dtype=np.int64), n_levels, strict=True)):
        out[:, q] = np.argmax(level_counts[:, start : start + width], axis=1)
    return out


def heatmap_panel(model, X: pd.DataFrame, labels, mask, *, modal=None, features=None, rows=None,
                  group_order=None) -> HeatmapPanel:
    """Prepare one panel of the data heatmap: rows sorted by group, each cell's class and value.

    Parameters
    ----------
    model : craft.CRAFT
        Fitted; its encoder reads ``X``'s used columns.
    X : DataFrame
        The fitted columns (every row).
    labels : array-like of int, shape (n_samples,)
        Group (cluster) of every row: 0..G-1.
    mask : array-like of bool, shape (G, len(features))
        Selected features of each group.
    modal : ndarray of int (G, n_categorical), optional
        Most frequent level code of each categorical feature per group
        (:func:`modal_codes`); by default the model's clusters', read from
        ``model.statistics_``.
    features : list of str, optional
        Columns in display order (default: ``model.feature_names_in_``).
    rows : array-like of int, optional
        Rows to show (default: all); they are re-sorted by group.
    group_order : array-like of int, optional
        Order of the groups from top to bottom (default 0..G-1).

    Returns
    -------
    HeatmapPanel
    """
    features = [str(c) for c in model.feature_names_in_] if features is None else list(features)
    labels = np.asarray(labels)
    mask = np.asarray(mask, dtype=bool)
    rows = np.arange(len(X)) if rows is None else np.asarray(rows)
    n_groups = mask.shape[0]
    rank = np.empty(max(n_groups, int(labels.max()) + 1 if labels.size else 0), dtype=np.int64)
    order = np.arange(rank.size) if group_order is None else np.asarray(group_order)
    rank[:] = rank.size
    rank[order] = np.arange(order.size)
    rows = rows[np.lexsort((rows, rank[labels[rows]]))]
    groups = labels[rows]
    data = model.encoder_.transform(X)
    if modal is None:
        modal = modal_codes(model.statistics_.level_counts, data.n_levels, data.offsets)
    values = np.zeros((rows.size, len(features)))
    numeric = {name: p for p, name in enumerate(model.schema_.numeric)}
    categorical = {name: q for q, name in enumerate(model.schema_.categorical)}
    for j, name in enumerate(features):
        if name in numeric:
            p = numeric[name]
            # The column's mean and spread as the encoder holds them for the fit.
            spread = np.sqrt(data.global_var[p])
            z = (data.numeric[rows, p] - data.global_mean[p]) / spread if spread > 0 else np.zeros(rows.size)
            missing = X[name].iloc[rows].isna().to_numpy()
            values[:, j] = np.where(missing, 0.0, np.clip(z, -2.5, 2.5) / 5.0 + 0.5)
        elif name in categorical:
            q = categorical[name]
            values[:, j] = np.where(data.codes[rows, q] == modal[groups, q], MODAL_VALUE, OTHER_LEVEL_VALUE)
    shown = X.iloc[rows]
    absent = shown[features].isna().to_numpy(dtype=bool)
    text = shown[features].astype("string").fillna("missing").to_numpy(dtype=object)
    return HeatmapPanel(values=values, selected=mask[groups], rows=rows, groups=groups, features=features, text=text,
                        n_total=len(X), missing=absent)


def _panel_traces(panel: HeatmapPanel, group_name: str, offset: int = 0) -> list[go.Heatmap]:
    """Heatmap traces: selected cells (blues), the others (greys), missing cells (orange, when there are any).

    The hover says row, group, value and class.
    """
    n_shown = len(panel.rows)
    state = np.where(panel.selected, SELECTED_NAME, UNSELECTED_NAME)
    names = escape_labels(panel.features)
    heads = [f"row {r} · {group_name} {g + offset}" for r, g in zip(panel.rows.tolist(), panel.groups.tolist(), strict=True)]
    text = np.empty(panel.values.shape, dtype=object)
    for i, head in enumerate(heads):
        values, states = panel.text[i], state[i]
        text[i] = [f"{head}<br>{name} = {_esc(value)} ({chosen})" for name, value, chosen in zip(names, values, states, strict=True)]
    classes = [(SELECTED_NAME, SELECTED_SCALE, (panel.selected & ~panel.missing)),
               (UNSELECTED_NAME, UNSELECTED_SCALE, (~panel.selected & ~panel.missing))]
    if panel.missing.any():
        classes.append((MISSING_NAME, [[0.0, MISSING_COLOR], [1.0, MISSING_COLOR]], panel.missing))
    return [go.Heatmap(
        z=np.where(cells, panel.values, np.nan),
        x=names,
        y=np.arange(n_shown),
        zmin=0,
        zmax=1,
        colorscale=scale,
        showscale=False,
        text=text,
        hovertemplate="%{text}<extra></extra>",
        hoverongaps=False,
        name=name,
    ) for name, scale, cells in classes]


def _missing_legend(fig: go.Figure, panel) -> None:
    """A legend entry for missing cells, when the panel has any (see :data:`MISSING_COLOR`)."""
    if panel.missing.any():
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=MISSING_NAME, showlegend=True,
                                 hoverinfo="skip", marker=dict(symbol="square", size=13, color=MISSING_COLOR,
                                                               line=dict(color="#555", width=1))))


def spaced_labels(centres, sizes, min_gap: float) -> np.ndarray:
    """Which labels to draw so that no two drawn centres are closer than ``min_gap``.

    Larger groups are labelled first; a label goes where it keeps
    ``min_gap`` from every label already placed.

    Examples
    --------
    >>> spaced_labels([0, 5, 7, 30], [10, 3, 2, 40], min_gap=10).tolist()
    [True, False, False, True]
    """
    centres, sizes = np.asarray(centres, dtype=float), np.asarray(sizes)
    keep = np.zeros(centres.size, dtype=bool)
    for i in sorted(range(centres.size), key=lambda i: (-sizes[i], i)):
        keep[i] = not np.any(np.abs(centres[keep] - centres[i]) < min_gap)
    return keep


def _group_axis(fig: go.Figure, panel: HeatmapPanel, prefix: str, col: int, row_px: float) -> list[str]:
    """Tick labels at group centres and lines between groups; returns every group's label.

    Groups of a few rows lie closer than a line of text: the larger group
    keeps its label there (``row_px``, the height of a row, tells the
    distance), the hover names every row's group.
    """
    groups = panel.groups
    if groups.size == 0:
        return []
    starts = np.flatnonzero(np.r_[True, groups[1:] != groups[:-1]])
    ends = np.r_[starts[1:], groups.size]
    ticks = (starts + ends - 1) / 2.0
    labels = [f"{prefix} {groups[s]}" for s in starts]
    drawn = spaced_labels(ticks * row_px, ends - starts, LABEL_GAP_PX)
    fig.layout["yaxis" if col == 1 else f"yaxis{col}"].update(
        tickmode="array", tickvals=ticks[drawn].tolist(), ticktext=[t for t, d in zip(labels, drawn, strict=True) if d],
        autorange="reversed",
    )
    axis = "x" if col == 1 else f"x{col}"
    yaxis = "y" if col == 1 else f"y{col}"
    for s in starts[1:]:
        fig.add_shape(type="line", xref=f"{axis} domain", yref=yaxis, x0=0, x1=1, y0=s - 0.5, y1=s - 0.5,
                      line=dict(color="#d62728", width=1.5))
    return labels


def fig_data_heatmap(
    model,
    X: pd.DataFrame,
    *,
    max_rows: int = 400,
    order: str = "subspace",
    y_true=None,
    true_mask=None,
    true_features=None,
    random_state=0,
) -> go.Figure:
    """The data, rows sorted by cluster, selected cells in blue: the paper's figures, live.

    Every cell is drawn by one of two traces: blues where the row's cluster
    selects the feature (``feature_mask_``), greys where it does not, with a
    legend; see :data:`HEATMAP_CAPTION` for what the shades mean.

    Parameters
    ----------
    model : craft.CRAFT
    X : DataFrame
        The fitted columns.
    max_rows : int
        Rows drawn at most (a sample stratified by cluster beyond; the title
        says so). The fit is not affected.
    order : {"subspace", "natural", "count"}
        Feature order (see :func:`mask_frame`); with a true mask,
        "subspace" follows the planted subspaces.
    y_true : array-like of int, optional
        Planted cluster of every row (0..T-1); with ``true_mask`` a
        "Dataset" panel is drawn on the left.
    true_mask : array-like of bool (T, n_true_features), optional
    true_features : list of str, optional
        Columns of ``true_mask`` (default: ``X``'s).
    random_state : int
        Seed of the display sample.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    features = [str(c) for c in model.feature_names_in_]
    mask = np.asarray(model.feature_mask_, dtype=bool)
    labels = np.asarray(model.labels_)
    # Noise rows (-1) have no cluster, hence no selection to colour their cells by: they are not drawn.
    clustered = np.flatnonzero(labels >= 0)
    rows = clustered[sample_rows(labels[clustered], max_rows, random_state=random_state)]
    two = y_true is not None and true_mask is not None
    match = None
    if two:
        from .. import _engine
        from ..metrics import align_clusters

        y_codes = np.asarray(pd.Categorical(np.asarray(y_true)).codes, dtype=np.int64)
        truth = np.asarray(true_mask, dtype=bool)
        true_features = list(true_features) if true_features is not None else features
        present = [true_features.index(n) for n in features if n in true_features]
        truth_full = np.zeros((truth.shape[0], len(features)), dtype=bool)
        for j, name in enumerate(features):
            if name in true_features:
                truth_full[:, j] = truth[:, true_features.index(name)]
        if order == "subspace" and present:
            _, columns = subspace_order(truth_full)
        else:
            columns = np.arange(len(features))
        match = align_clusters(y_codes, labels)
        group_order = _matched_rows(mask.shape[0], match, model.cluster_sizes_)
        # The planted groups' most frequent levels, by the engine's own statistics of that labelling.
        data = model.encoder_.transform(X)
        planted_counts = _engine.statistics(data, y_codes, int(y_codes.max()) + 1).level_counts
        planted_modal = modal_codes(planted_counts, data.n_levels, data.offsets)
    else:
        if order == "subspace":
            group_order, columns = subspace_order(mask, model.cluster_sizes_)
        else:
            group_order = np.arange(mask.shape[0])
            columns = mask_frame(mask, features=features, order=order).columns
            columns = np.array([features.index(c) for c in columns])
    ordered = [features[j] for j in columns]
    found = heatmap_panel(model, X, labels, mask[:, columns], features=ordered, rows=rows, group_order=group_order)
    n_noise = labels.size - clustered.size
    sampled = ""
    if len(found.rows) < clustered.size:
        sampled = f" — {len(found.rows):,} of {found.n_total:,} rows shown (stratified sample)"
    if n_noise:
        sampled += f" — {n_noise:,} noise rows (fit no cluster) not drawn"
    x_axis, room = _name_axis(escape_labels(ordered))
    height = int(min(900, max(380, 1.4 * len(found.rows) + 160)) + room)
    row_px = (height - _LEGEND_TOP - 12 - room) / max(1, len(found.rows))
    if not two:
        fig = go.Figure(_panel_traces(found, "cluster"))
        y_labels = _group_axis(fig, found, "cluster", 1, row_px)
        fig.update_xaxes(**x_axis)
        _selection_legend(fig, SELECTED_COLOR, UNSELECTED_SCALE[-1][1], what="feature (blue)")
        _missing_legend(fig, found)
        return _finish(fig, f"Data sorted by CRAFT cluster{sampled}", height=height, left=_y_room(y_labels),
                       bottom=room)
    planted = heatmap_panel(model, X, y_codes, truth_full[:, columns], modal=planted_modal, features=ordered,
                            rows=rows)
    found_ticks = [f"cluster {k}" for k in range(mask.shape[0])]
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=_spacing(found_ticks),
                        subplot_titles=("Dataset: planted clusters and subspaces", "CRAFT: clusters and selected features"))
    for trace in _panel_traces(planted, "planted", 1):
        fig.add_trace(trace, row=1, col=1)
    for trace in _panel_traces(found, "cluster"):
        fig.add_trace(trace, row=1, col=2)
    left_labels = _group_axis(fig, planted, "planted", 1, row_px)
    _group_axis(fig, found, "cluster", 2, row_px)
    fig.update_xaxes(**x_axis)
    _selection_legend(fig, SELECTED_COLOR, UNSELECTED_SCALE[-1][1], what="(planted) feature (blue)")
    _missing_legend(fig, found)
    return _finish(fig, f"Dataset | CRAFT{sampled}", height=height, left=_y_room(left_labels), bottom=room)
