"""Figures of CRAFT results as pure functions returning Plotly figures.

Every figure has a data-preparation function beside it (``mask_frame``,
``heatmap_panel``, ``projection_frame``, ``history_frame``...), so what is
drawn can be tested without a browser, and the figures work in a notebook
as well as in the app. Nothing here imports Streamlit.

Conventions
-----------
* ``model`` is a fitted :class:`craft.CRAFT`; ``X`` is the table it was
  fitted on (its used columns, see :func:`explorer.services.fitted_X (the app)`).
* Clusters are called by their number in ``labels_`` (0..K-1).
* Large tables are downsampled *for display only*; the figures say so in
  their titles and the sampling is stratified by cluster.
"""

from __future__ import annotations

import html
import textwrap
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import sparse

from ._optional import missing
from .priors import PriorTerms, prior_terms

try:
    import plotly.graph_objects as go
    from plotly.colors import qualitative
    from plotly.subplots import make_subplots
except ImportError as error:  # pragma: no cover - depends on the installation
    raise missing("plotly", extra="plots", needed_for="craft.plots") from error

__all__ = [
    "cluster_colors",
    "subspace_order",
    "mask_frame",
    "fig_feature_masks",
    "heatmap_panel",
    "sample_rows",
    "fig_data_heatmap",
    "fig_cluster_sizes",
    "margin_frame",
    "fig_margins",
    "fig_profile_overview",
    "fig_feature_detail",
    "projection_frame",
    "fig_projection",
    "history_frame",
    "fig_history",
    "fig_confusion",
    "sweep_summary",
    "fig_sweep",
    "rho_demo_frame",
    "fig_rho_demo",
    "fig_compare",
]

#: Colours of selected (blue) and unselected (grey) cells and bars.
SELECTED_COLOR = "#1f4e9c"
UNSELECTED_COLOR = "#d9d9d9"
#: A 0/1 heatmap of selections: 0 (not selected) grey, 1 (selected) blue, with no shade between.
SELECTION_COLORSCALE = [[0, UNSELECTED_COLOR], [0.5, UNSELECTED_COLOR], [0.5, SELECTED_COLOR], [1, SELECTED_COLOR]]
#: The data heatmap draws selected and unselected cells as two traces with
#: scales of two hue classes, so no value of one can look like the other:
#: blues (every colour clearly blue) and neutral greys. Within a class the
#: intensity shows the cell's value.
SELECTED_SCALE = [[0.0, "#9ecae1"], [0.5, "#4292c6"], [1.0, "#08306b"]]
UNSELECTED_SCALE: list[list] = [[0.0, "#f2f2f2"], [1.0, "#7a7a7a"]]
#: Display value of a categorical cell: the row's level is its group's most
#: frequent level (dark), or another level (light). Level codes are not
#: shaded: their order means nothing for nominal data.
MODAL_VALUE, OTHER_LEVEL_VALUE = 1.0, 0.3
#: Smallest text of every figure, in CSS pixels: tick labels stay readable from
#: the back of a room with the app in a 1280 x 720 window (a projector).
TICK_FONT_PX = 14
_FONT = dict(size=TICK_FONT_PX)
#: Width of one character of tick text at that font, generous, for margins.
_CHAR_PX = 0.625 * TICK_FONT_PX
#: The legend of every selection figure.
SELECTED_NAME, UNSELECTED_NAME = "selected", "not selected"
#: The selection rule's cut in the profile charts.
CUT_COLOR = "#d62728"
#: The selection legend: a row of its own under the title (placed by ``_finish``).
_LEGEND = dict(orientation="h", x=0.0, xanchor="left", y=1.0, yanchor="top", yref="container", xref="container",
               bgcolor="rgba(255,255,255,0.8)")


def _esc(value) -> str:
    """A user string made safe for Plotly's pseudo-HTML text (shown literally)."""
    return html.escape(str(value), quote=False)


def _esc_all(values) -> list[str]:
    return [_esc(v) for v in values]


def _label_px(labels) -> float:
    """Width in pixels of the longest label (escaped entities count as one character)."""
    texts = [html.unescape(str(label)) for label in labels]
    return _CHAR_PX * max((len(text) for text in texts), default=0)


def _x_room(labels, angle: float) -> float:
    """Pixels that x tick labels rotated by ``angle`` degrees take below the axis."""
    radians = np.deg2rad(abs(angle))
    return _label_px(labels) * np.sin(radians) + _FONT["size"] * np.cos(radians) + 10


def _y_room(labels) -> float:
    """Pixels that (horizontal) y tick labels take beside the axis."""
    return _label_px(labels) + 10


def _left_room(y_labels, x_labels, angle: float) -> float:
    """Left margin: the y labels, or the first x label where a rotated one reaches further left."""
    reach = _label_px(list(x_labels)[:1]) * np.cos(np.deg2rad(abs(angle))) if angle and len(x_labels) else 0.0
    return max(_y_room(y_labels), reach)


#: Least distance in pixels between the centres of two neighbouring y tick labels placed by the figure:
#: a line of tick text (its drawn box is about 1.2 times the font high) with a few pixels between lines.
LABEL_GAP_PX = round(1.5 * TICK_FONT_PX)


def _name_axis(labels) -> tuple[dict, float]:
    """Settings of an x axis of names (features, levels, clusters), and the pixels its labels take below.

    The figure does not know the width it will be drawn at, so the browser
    chooses: the names stand upright where they fit side by side and turn
    vertical where they do not (``autotickangles``); where even vertical
    names would be closer than 1.2 times the font, Plotly draws every second
    (third...) name (``tickmode="auto"`` on a category axis). No two names
    touch at any width, and every name stays in the cells' hover text. The
    margin holds vertical names.

    Returns
    -------
    settings : dict
        For ``update_xaxes``.
    room : float
        Pixels below the axis.
    """
    settings = dict(tickmode="auto", autotickangles=[0, -90], automargin=False)
    return settings, _x_room(labels, -90)


def _all_ticks(axis, labels) -> dict:
    """Axis settings that show every category's label (Plotly would thin crowded ones)."""
    return dict(tickmode="array", tickvals=list(labels), ticktext=list(labels), automargin=False)


def _selection_legend(fig: go.Figure, selected_color: str, unselected_color: str, *, what: str = "feature") -> None:
    """Legend entries for the two classes of cells or bars (heatmaps have no legend of their own)."""
    for name, color in ((f"{SELECTED_NAME} {what}", selected_color), (f"{UNSELECTED_NAME}", unselected_color)):
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=name, showlegend=True, hoverinfo="skip",
                                 marker=dict(symbol="square", size=13, color=color, line=dict(color="#555", width=1))))
    fig.update_layout(legend=_LEGEND)


def _missing_legend(fig: go.Figure, panel) -> None:
    """A legend entry for missing cells, when the panel has any (see :data:`MISSING_COLOR`)."""
    if panel.missing.any():
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=MISSING_NAME, showlegend=True,
                                 hoverinfo="skip", marker=dict(symbol="square", size=13, color=MISSING_COLOR,
                                                               line=dict(color="#555", width=1))))


#: Colour and name of the rows a ``noise=True`` fit labels -1 (they fit no cluster), as HDBSCAN's plots draw noise.
NOISE_COLOR = "#a0a0a0"
NOISE_NAME = "noise (fits no cluster)"


def cluster_colors(n: int) -> list[str]:
    """``n`` distinguishable colours, one per cluster (cycling after 60)."""
    palette = qualitative.Plotly + qualitative.D3[1:] + qualitative.Set2 + qualitative.Dark24
    return [palette[i % len(palette)] for i in range(n)]


# ---------------------------------------------------------------------------
# Feature masks


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


def _binary_heatmap(frame: pd.DataFrame, row_labels: list[str], name: str) -> go.Heatmap:
    z = frame.to_numpy(dtype=np.float64)
    selected = frame.to_numpy()
    text = np.array(
        [[f"{row} · {_esc(feature)}: {'selected' if on else 'not selected'}" for feature, on in zip(frame.columns, flags, strict=True)]
         for row, flags in zip(row_labels, selected, strict=True)],
        dtype=object,
    ).reshape(z.shape)
    return go.Heatmap(
        z=z,
        x=_esc_all(frame.columns),
        y=row_labels,
        zmin=0,
        zmax=1,
        colorscale=SELECTION_COLORSCALE,
        showscale=False,
        xgap=1,
        ygap=1,
        text=text,
        hovertemplate="%{text}<extra></extra>",
        name=name,
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
            x=_esc_all([feature for _, feature in cells]), y=[row_labels[k] for k, _ in cells], mode="markers",
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
        x_axis, room = _name_axis(_esc_all(frame.columns))
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
    x_axis, room = _name_axis(_esc_all(all_names))
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
    x_axis, room = _name_axis(_esc_all(features))
    fig.update_xaxes(title=None, **x_axis)
    fig.update_yaxes(automargin=False)
    tallest = max(np.asarray(mask).shape[0] for mask in masks)
    return _finish(fig, title, height=_mask_height(tallest) + int(room), left=_y_room(first_rows), bottom=room)


def _matched_rows(n_found: int, cluster_match, sizes) -> np.ndarray:
    if cluster_match is None:
        return np.arange(n_found)
    match = np.asarray(cluster_match)
    matched = sorted((int(match[k]), k) for k in range(n_found) if match[k] >= 0)
    rest = [k for k in range(n_found) if match[k] < 0]
    if sizes is not None:
        rest.sort(key=lambda k: -sizes[k])
    return np.array([k for _, k in matched] + rest, dtype=np.int64)


def _cluster_label(k: int, sizes) -> str:
    return f"cluster {k}" if sizes is None else f"cluster {k} ({int(sizes[k])})"


def _mask_height(n_rows: int) -> int:
    return int(min(900, 170 + 26 * n_rows))


def _angle(n_labels: int) -> int:
    """Tick angle of a categorical x axis: upright for a few labels, steep for many."""
    return -60 if n_labels > 12 else 0


def _spacing(labels, *, width: float = 1100.0) -> float:
    """Horizontal spacing of two panels (a share of the width) that holds the right panel's y labels."""
    return float(min(0.35, max(0.08, (_y_room(labels) + 24) / width)))


#: Top margin of a figure with the selection legend under its title; height of a line of the title.
_LEGEND_TOP, TITLE_LINE_PX = 110, 22


def _finish(fig: go.Figure, title: str, *, height: int | None = None, left: float = 0.0, bottom: float = 0.0) -> go.Figure:
    """Title, font and margins; ``left`` and ``bottom`` are the pixels the tick labels need there.

    Margins are computed from the labels (not a fixed 10 px, which clips
    long names); the figure grows by what the labels take.
    """
    total = height or fig.layout.height or 450
    # A title broken into lines ("<br>", for a figure placed in a narrow column) pushes everything down.
    below_title = TITLE_LINE_PX * title.count("<br>")
    top = 80 + below_title
    if fig.layout.legend.yref == "container":
        # The selection legend goes in its own row under the title, left-aligned: clear of the
        # subplot titles and of the tool bar Plotly shows at the top right on hover.
        top = _LEGEND_TOP + below_title
        fig.update_layout(legend=dict(x=0, xanchor="left", y=1 - (42 + below_title) / total))
    fig.update_layout(
        title=dict(text=title, x=0, xanchor="left", y=1 - (12 + below_title) / total, yref="container", yanchor="top",
                   font=dict(size=TICK_FONT_PX + 3)),
        margin=dict(l=int(12 + left), r=12, t=top, b=int(12 + bottom)),
        font=_FONT,
    )
    fig.update_xaxes(tickfont=dict(size=TICK_FONT_PX))
    fig.update_yaxes(tickfont=dict(size=TICK_FONT_PX))
    if height is not None:
        fig.update_layout(height=height)
    return fig


# ---------------------------------------------------------------------------
# Data heatmap


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
    names = _esc_all(panel.features)
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
        from . import _engine
        from .metrics import align_clusters

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
    x_axis, room = _name_axis(_esc_all(ordered))
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


# ---------------------------------------------------------------------------
# Sizes and profiles


def fig_cluster_sizes(sizes, *, n_noise: int | None = None, title: str | None = None) -> go.Figure:
    """Bar chart of the number of rows per cluster.

    Parameters
    ----------
    sizes : array-like of int or a fitted model (its ``cluster_sizes_``; a
        ``noise=True`` fit's noise rows, ``n_noise_``, are a last grey bar)
    n_noise : int, optional
        Rows labelled -1 beside ``sizes`` given as counts (a grey bar when > 0).
    title : str, optional
    """
    n_noise = int(getattr(sizes, "n_noise_", 0) if n_noise is None else n_noise)
    if hasattr(sizes, "cluster_sizes_"):
        sizes = sizes.cluster_sizes_
    sizes = np.asarray(sizes, dtype=np.int64)
    n_clusters = sizes.size
    names = [f"cluster {k}" for k in range(n_clusters)]
    colors = cluster_colors(n_clusters)
    if n_noise:
        sizes, names, colors = np.append(sizes, n_noise), names + ["noise"], colors + [NOISE_COLOR]
    total = max(1, int(sizes.sum()))
    fig = go.Figure(
        go.Bar(
            x=names,
            y=sizes,
            marker_color=colors,
            text=[f"{s:,} ({s / total:.0%})" for s in sizes],
            textposition="auto",
            hovertemplate="%{x}: %{y:,} rows<extra></extra>",
        )
    )
    angle = _angle(sizes.size)
    fig.update_yaxes(title="rows")
    fig.update_xaxes(tickangle=angle, **_all_ticks("x", names))
    noise = f", {n_noise:,} noise rows that fit no cluster" if n_noise else ""
    return _finish(fig, title or f"Cluster sizes ({n_clusters} clusters, {total:,} rows{noise})",
                   height=int(340 + _x_room(names, angle)), left=_y_room([f"{int(sizes.max()):,}"]) + 24,
                   bottom=_x_room(names, angle))


def margin_frame(assignment: pd.DataFrame, *, bins: int = 40) -> pd.DataFrame:
    """Rows per cluster in each bin of the cost margin, for :func:`fig_margins`.

    The bins are shared by every cluster and computed from all the margins,
    so that a table of a million rows is drawn as ``bins`` bars per cluster
    rather than sent to the browser row by row.

    Parameters
    ----------
    assignment : DataFrame
        :meth:`craft.CRAFT.assign`'s table: ``cluster`` (the nearest cluster)
        and ``margin`` (cost to the next-nearest cluster minus cost to the
        nearest, finite and ≥ 0).
    bins : int
        Number of bins.

    Returns
    -------
    DataFrame
        One row per cluster and bin: ``cluster``, ``left``, ``right``,
        ``rows`` and ``overflow``. Margins beyond Tukey's far-out fence
        (Q3 + 3 IQR of all the margins) are counted in one last bin per
        cluster, ``overflow`` True, from the fence to the largest margin, so
        that a few huge margins do not squeeze every other row into the first
        of ``bins`` equal bins (docs/numerics.md, *Score: the margin
        histogram*).

    Examples
    --------
    >>> a = pd.DataFrame({"cluster": [0, 0, 1], "margin": [0.0, 1.0, 2.0]})
    >>> frame = margin_frame(a, bins=2)
    >>> frame["cluster"].tolist(), frame["left"].tolist(), frame["rows"].tolist()
    ([0, 0, 1, 1], [0.0, 1.0, 0.0, 1.0], [1, 1, 0, 1])
    >>> a = pd.DataFrame({"cluster": [0] * 9 + [1], "margin": [1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7, 1.8, 500.0]})
    >>> frame = margin_frame(a, bins=4)
    >>> frame[frame["overflow"]][["cluster", "rows"]].values.tolist(), float(frame["right"].max())
    ([[0, 0], [1, 1]], 500.0)
    """
    margins = assignment["margin"].to_numpy(dtype=np.float64)
    clusters = assignment["cluster"].to_numpy(dtype=np.int64)
    fence = np.inf
    if margins.size:
        q1, q3 = np.quantile(margins, [0.25, 0.75])
        fence = q3 + 3.0 * (q3 - q1)
    far = margins > fence
    if not far.any():
        fence = np.inf
    edges = np.histogram_bin_edges(margins[~far], bins=bins)
    parts = []
    for k in np.unique(clusters):
        mine = clusters == k
        counts, _ = np.histogram(margins[mine & ~far], bins=edges)
        part = pd.DataFrame({"cluster": int(k), "left": edges[:-1], "right": edges[1:], "rows": counts,
                             "overflow": False})
        if np.isfinite(fence):
            last = pd.DataFrame({"cluster": [int(k)], "left": [fence], "right": [float(margins.max())],
                                 "rows": [int(np.sum(mine & far))], "overflow": [True]})
            part = pd.concat([part, last], ignore_index=True)
        parts.append(part)
    columns = {"cluster": np.int64, "left": np.float64, "right": np.float64, "rows": np.int64, "overflow": bool}
    if not parts:
        return pd.DataFrame({name: np.empty(0, dtype=dtype) for name, dtype in columns.items()})
    return pd.concat(parts, ignore_index=True).astype(columns)


def _readable(value: float) -> str:
    """A number as the app writes it: thousands separators from 1,000 on (never 5e+03), 3 significant digits below."""
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"


def fig_margins(assignment: pd.DataFrame, *, n_clusters: int | None = None, bins: int = 40) -> go.Figure:
    """Histogram of the cost margins of scored rows, stacked by their cluster in the cluster colours.

    A small margin means the row is almost as close to a second cluster as
    to its own: its assignment is a near tie. The margins are those
    :meth:`craft.CRAFT.assign` computed; only their binning is done here
    (:func:`margin_frame`).

    Parameters
    ----------
    assignment : DataFrame
        :meth:`craft.CRAFT.assign`'s table (``cluster``, ``margin``).
    n_clusters : int, optional
        Clusters of the model (for the colours: cluster k keeps the colour it
        has in every figure); the largest cluster seen + 1 by default.
    bins : int
    """
    frame = margin_frame(assignment, bins=bins)
    seen = int(frame["cluster"].max()) + 1 if len(frame) else 0
    colors = cluster_colors(max(seen, n_clusters or 0))
    regular = frame[~frame["overflow"]]
    width = float((regular["right"] - regular["left"]).max()) if len(regular) else 1.0
    width = width if width > 0 else 1.0
    # The overflow bin is drawn one bin wide, a bin's gap right of the others (its true range is in its label).
    top = float(regular["right"].max()) if len(regular) else 0.0
    spot = top + 1.5 * width
    fig = go.Figure()
    for k, part in frame.groupby("cluster", sort=True):
        # -1: rows a noise=True model leaves in no cluster; their margin is still their nearest cluster's.
        name, color = ("noise", NOISE_COLOR) if k == -1 else (f"cluster {k}", colors[int(k)])
        over = part["overflow"].to_numpy()
        fig.add_trace(go.Bar(
            x=np.where(over, spot, (part["left"] + part["right"]) / 2), y=part["rows"],
            width=np.where(over, width, part["right"] - part["left"]),
            name=name, marker=dict(color=color, line=dict(width=0)),
            customdata=np.column_stack([part["left"], part["right"]]),
            hovertemplate="margin %{customdata[0]:.3g} – %{customdata[1]:.3g}: %{y:,} rows<extra>"
                          + f"{name}</extra>",
        ))
    if frame["overflow"].any():
        far = frame[frame["overflow"]]
        fig.add_annotation(x=spot, y=int(far["rows"].sum()), yanchor="bottom", showarrow=False,
                           text=f"> {_readable(far['left'].iloc[0])}<br>(up to {_readable(far['right'].iloc[0])})",
                           font=dict(size=TICK_FONT_PX))
    fig.update_layout(barmode="stack", bargap=0, legend=dict(title="nearest cluster", traceorder="normal"))
    fig.update_xaxes(title="cost margin: cost to the next-nearest cluster − cost to the nearest (0: a tie)")
    fig.update_yaxes(title="rows")
    return _finish(fig, f"How sure each assignment is: cost margins of {len(assignment):,} rows", height=420,
                   left=_y_room([f"{int(frame['rows'].max()) if len(frame) else 0:,}"]) + 24)


#: Characters per line of an axis title under one of two side-by-side panels.
PANEL_TITLE_CHARS = 34


def profile_axis_title(kind: str, budget: str) -> str:
    """What a profile chart's bars measure, for one kind of feature and budget."""
    if kind == "numeric":
        return ("within-cluster variance (selected: the lowest, left of the cut)" if budget != "approximate"
                else "within-cluster variance (selected: below ε_v)")
    if budget == "approximate":
        return "gain share (G_d − G_kd) / G_d (selected: above ε_c)"
    return "gain G_d − G_kd, nats (selected: the highest, right of the cut)"


def fig_profile_overview(profiles: pd.DataFrame, cluster: int, *, budget: str = "fixed") -> go.Figure:
    """Why features are selected in one cluster: the rule's own numbers, with its cut.

    Bars are the quantity the selection rule compared with its cut
    (``criterion`` of :func:`craft.profiles.cluster_profiles`, read from the
    model's ``selection_``): the within-cluster variance of numeric features
    (lowest selected) and, for categorical features, the gain
    ``G_d - G_kd`` (fixed budget: highest selected) or its share of ``G_d``
    (approximate budget, compared with eps_c). Selected bars are blue, the
    others grey (a legend says which); a dashed line marks the cut. Bars are
    sorted by the engine's rank, first chosen on top.

    Parameters
    ----------
    profiles : DataFrame
        From :func:`craft.profiles.cluster_profiles`.
    cluster : int
    budget : {"fixed", "approximate"}
        The model's budget (``model.budget``): it names the axes.
    """
    rows = profiles[profiles["cluster"] == cluster]
    kinds = [kind for kind in ("numeric", "categorical") if (rows["kind"] == kind).any()]
    titles = {"numeric": "numeric features", "categorical": "categorical features"}
    longest = _label_px(_esc_all(rows["feature"]))
    fig = make_subplots(rows=1, cols=max(1, len(kinds)), subplot_titles=[titles[k] for k in kinds],
                        horizontal_spacing=float(min(0.4, max(0.12, (longest + 40) / 1100))))
    tallest, title_lines = 1, 1
    for col, kind in enumerate(kinds, start=1):
        part = rows[rows["kind"] == kind].sort_values("rank", ascending=False)
        tallest = max(tallest, len(part))
        names = _esc_all(part["feature"])
        for chosen, color in ((True, SELECTED_COLOR), (False, UNSELECTED_COLOR)):
            keep = (part["selected"] == chosen).to_numpy()
            fig.add_trace(
                go.Bar(
                    x=part["criterion"].to_numpy()[keep],
                    y=[name for name, k in zip(names, keep, strict=True) if k],
                    orientation="h",
                    marker=dict(color=color, line=dict(color="#555", width=0.5)),
                    customdata=_esc_all(part["reason"].to_numpy()[keep]),
                    hovertemplate="%{y}: %{x:.4g}<br>%{customdata}<extra></extra>",
                    name=f"{SELECTED_NAME} feature" if chosen else UNSELECTED_NAME,
                    legendgroup="selected" if chosen else "other",
                    showlegend=col == 1,
                ),
                row=1,
                col=col,
            )
        fig.update_yaxes(categoryorder="array", categoryarray=names, **_all_ticks("y", names), row=1, col=col)
        title = profile_axis_title(kind, budget)
        if len(part):
            cut = float(part["cut"].iloc[0])
            fig.add_vline(x=cut, line=dict(color=CUT_COLOR, width=2, dash="dash"), row=1, col=col)
            title += f"; cut {cut:.3g}"
        # Two panels share a 1280-pixel window: a long title is broken into lines that stay under its panel.
        lines = textwrap.wrap(title, PANEL_TITLE_CHARS)
        title_lines = max(title_lines, len(lines))
        fig.update_xaxes(title="<br>".join(lines), row=1, col=col)
    fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", name="cut", line=dict(color=CUT_COLOR, width=2, dash="dash"),
                             hoverinfo="skip"))
    fig.update_layout(barmode="overlay", legend=_LEGEND)
    size = int(rows["size"].iloc[0]) if len(rows) else 0
    bottom = 28 + TITLE_LINE_PX * title_lines
    return _finish(fig, f"Cluster {cluster} ({size:,} rows): what the selection rule compared, and its cut",
                   height=int(min(1400, 200 + 20 * tallest) + bottom - 40), left=longest + 8, bottom=bottom)


def fig_feature_detail(model, X: pd.DataFrame, cluster: int, feature: str) -> go.Figure:
    """One feature in one cluster against all rows.

    Categorical: the level distribution in the cluster and overall (grouped
    bars), as the fit counted it (:func:`craft.profiles.level_distribution`).
    Numeric: histograms (as shares) of the cluster's and all rows' observed
    values, with the mean ± one standard deviation the fit used for the
    cluster marked and named (:func:`craft.profiles.numeric_moments`, the
    numbers of the profiles); a note under the axis says which cells they
    count.
    """
    from .profiles import level_distribution, numeric_moments, numeric_values

    if feature in model.schema_.categorical:
        levels = level_distribution(model, cluster, feature)
        fig = go.Figure([
            go.Bar(name=f"cluster {cluster}", x=_esc_all(levels["level"]), y=levels["cluster_share"],
                   marker_color=SELECTED_COLOR, hovertemplate="%{x}: %{y:.1%}<extra>cluster</extra>"),
            go.Bar(name="all rows", x=_esc_all(levels["level"]), y=levels["overall_share"],
                   marker_color="#b0b0b0", hovertemplate="%{x}: %{y:.1%}<extra>all rows</extra>"),
        ])
        fig.update_layout(barmode="group")
        fig.update_yaxes(tickformat=".0%", title="share of rows")
        return _finish(fig, f"{_esc(feature)}: levels in cluster {cluster} vs all rows", height=340)
    inside, everything = numeric_values(model, X, cluster, feature)
    j = list(model.schema_.numeric).index(feature)
    means, sds, _, _ = numeric_moments(model)
    mean, sd = float(means[cluster, j]), float(sds[cluster, j])
    fig = go.Figure([
        go.Histogram(x=everything, name="all rows", histnorm="probability", marker_color="#b0b0b0", opacity=0.6,
                     nbinsx=40),
        go.Histogram(x=inside, name=f"cluster {cluster}", histnorm="probability", marker_color=SELECTED_COLOR,
                     opacity=0.7, nbinsx=40),
    ])
    fig.update_layout(barmode="overlay")
    fig.add_vrect(x0=mean - sd, x1=mean + sd, fillcolor=SELECTED_COLOR, opacity=0.08, line_width=0)
    fig.add_vline(x=mean, line=dict(color=SELECTED_COLOR, width=2), annotation_text=f"{mean:.3g} ± {sd:.3g}",
                  annotation_position="top right")
    fig.update_yaxes(tickformat=".0%", title="share of rows")
    note = textwrap.wrap(f"Line and band: the fit's mean ± sd of the cluster, "
                         f"{_counted_cells(model, cluster, j, n_observed=inside.size)}.", 90)
    fig.add_annotation(text="<br>".join(note), x=0, y=0, xref="paper", yref="paper", yshift=-34, xanchor="left",
                       yanchor="top", align="left", showarrow=False)
    return _finish(fig, f"{_esc(feature)}: values in cluster {cluster} vs all rows", height=340 + 18 * len(note),
                   bottom=30 + 18 * len(note))


def _counted_cells(model, cluster: int, j: int, *, n_observed: int) -> str:
    """Which cells of numeric feature ``j`` in ``cluster`` the fit's statistics count, in words.

    ``n_observed`` is the cluster's observed cells of the feature in the table.
    """
    size = int(model.statistics_.counts[cluster])
    missing = size - n_observed
    if not missing:
        return f"over its {size:,} rows"
    if model.encoder_.missing == "impute":
        return (f"over its {size:,} rows, the {missing:,} missing cell(s) counted at the column mean "
                f"{float(model.encoder_.impute_[j]):.3g} (missing=\"impute\")")
    counted = int(model.statistics_.numeric_counts[cluster, j])
    if counted:
        return f"over its {counted:,} observed cells ({missing:,} missing cell(s) left out)"
    return "which has no observed cell: the column's mean and sd, as the fit uses them"


# ---------------------------------------------------------------------------
# Projection


def projection_frame(model, X: pd.DataFrame, *, max_points: int = 4000, random_state=0) -> pd.DataFrame:
    """A 2-D PCA projection of the encoded data (numbers standardized, levels one-hot).

    The PCA is fitted on at most 5,000 rows (a random sample beyond: two
    components of a mean and covariance are estimated well from it); at most
    ``max_points`` rows (stratified by cluster) are returned for display.
    The one-hot block stays sparse (ARPACK with implicit centring), so memory
    follows the table's cells, not rows x levels: a 30,000-row column of
    12,000 levels would be 2.9 GB dense.

    Returns
    -------
    DataFrame
        Columns ``row``, ``pc1``, ``pc2``, ``cluster``; ``attrs`` holds
        ``explained`` (variance ratio of the two components) and ``n_total``.
    """
    from sklearn.decomposition import PCA

    data = model.encoder_.transform(X[[str(c) for c in model.engine_features_]])
    matrix = data.numeric
    if not model.standardize and data.n_numeric:
        spread = matrix.std(axis=0)
        matrix = (matrix - matrix.mean(axis=0)) / np.where(spread > 0, spread, 1.0)
    matrix = sparse.hstack([sparse.csr_matrix(matrix), data.onehot()], format="csr")
    labels = np.asarray(model.labels_)
    n = matrix.shape[0]
    rng = np.random.default_rng(random_state)
    fit_rows = np.arange(n) if n <= 5000 else np.sort(rng.choice(n, 5000, replace=False))
    n_components = int(min(2, matrix.shape[1], len(fit_rows)))
    if min(matrix.shape[1], len(fit_rows)) > n_components:
        pca = PCA(n_components=n_components, svd_solver="arpack", random_state=0).fit(matrix[fit_rows])
    else:  # at most two columns (or rows): ARPACK needs more; the dense block is tiny
        matrix = matrix.toarray()
        pca = PCA(n_components=n_components, random_state=0).fit(matrix[fit_rows])
    shown = np.sort(sample_rows(labels, max_points, random_state=random_state))
    coords = pca.transform(matrix[shown])
    if coords.shape[1] < 2:
        coords = np.hstack([coords, np.zeros((coords.shape[0], 2 - coords.shape[1]))])
    frame = pd.DataFrame(dict(row=shown, pc1=coords[:, 0], pc2=coords[:, 1], cluster=labels[shown]))
    explained = list(pca.explained_variance_ratio_) + [0.0] * (2 - n_components)
    frame.attrs.update(explained=explained, n_total=n)
    return frame


#: Largest projection drawn as SVG; more points are drawn with WebGL.
SVG_MAX_POINTS = 1000


def fig_projection(frame: pd.DataFrame, *, labels=None, highlight=None, title: str | None = None,
                   group_name: str = "cluster", highlight_name: str = "changed") -> go.Figure:
    """Scatter of a :func:`projection_frame`, coloured by cluster.

    Parameters
    ----------
    frame : DataFrame
    labels : array-like, optional
        Another labelling of ``frame``'s rows (e.g. an earlier iteration).
    highlight : array-like of bool, optional
        Rows drawn with a black outline (e.g. points that changed cluster).
    highlight_name : str, default "changed"
        What the outlined rows are, in the legend (e.g. "picked" for rows picked to link).
    """
    labels = frame["cluster"].to_numpy() if labels is None else np.asarray(labels)
    groups = np.unique(labels)
    colors = cluster_colors(int(groups.max()) + 1 if groups.size else 0)
    fig = go.Figure()
    outline = np.zeros(len(frame), dtype=bool) if highlight is None else np.asarray(highlight, dtype=bool)
    # SVG below SVG_MAX_POINTS: creating a WebGL context costs more than drawing a few hundred SVG markers
    # (Teach redraws this figure at every iteration step; docs/RESULTS.md, browser responsiveness).
    trace = go.Scatter if len(frame) <= SVG_MAX_POINTS else go.Scattergl
    for g in groups:
        inside = labels == g
        name = f"{NOISE_NAME}: {int(inside.sum()):,}" if g < 0 else f"{group_name} {g}"
        fig.add_trace(trace(
            x=frame["pc1"].to_numpy()[inside], y=frame["pc2"].to_numpy()[inside], mode="markers",
            name=name, customdata=frame["row"].to_numpy()[inside],
            marker=dict(size=6, color=NOISE_COLOR if g < 0 else colors[int(g)], opacity=0.75),
            hovertemplate="row %{customdata}<extra>" + ("noise" if g < 0 else f"{group_name} {g}") + "</extra>",
        ))
    if outline.any():
        # One ring per highlighted point, drawn over them (WebGL markers take no per-point outline width).
        fig.add_trace(trace(
            x=frame["pc1"].to_numpy()[outline], y=frame["pc2"].to_numpy()[outline], mode="markers",
            name=f"{highlight_name} ({int(outline.sum()):,})", customdata=frame["row"].to_numpy()[outline],
            marker=dict(size=11, symbol="circle-open", color="black", line=dict(width=1.5)),
            hovertemplate="row %{customdata}<extra>" + highlight_name + "</extra>",
        ))
    explained = frame.attrs.get("explained", [np.nan, np.nan])
    n_total = frame.attrs.get("n_total", len(frame))
    fig.update_xaxes(title=f"PC 1 ({explained[0]:.0%} of variance)")
    fig.update_yaxes(title=f"PC 2 ({explained[1]:.0%} of variance)")
    sampled = f" — {len(frame):,} of {n_total:,} rows shown" if len(frame) < n_total else ""
    return _finish(fig, title or f"PCA of the encoded data, coloured by cluster{sampled}", height=480)


# ---------------------------------------------------------------------------
# History


def history_frame(model) -> pd.DataFrame:
    """One row per iteration of the kept run: objective, K, changed and opened."""
    records = model.history_
    return pd.DataFrame(
        dict(
            iteration=[r.iteration for r in records],
            objective=[r.objective for r in records],
            n_clusters=[r.n_clusters for r in records],
            n_changed=[r.n_changed for r in records],
            n_opened=[r.n_opened for r in records],
        )
    )


def fig_history(model_or_frame, *, current: int | None = None) -> go.Figure:
    """The objective and the number of clusters K per iteration.

    Parameters
    ----------
    model_or_frame : craft.CRAFT or DataFrame from :func:`history_frame`
    current : int, optional
        An iteration to mark (the Teach page's slider).
    """
    frame = model_or_frame if isinstance(model_or_frame, pd.DataFrame) else history_frame(model_or_frame)
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.12,
                        subplot_titles=("objective", "clusters K (bars: clusters opened in the pass)"))
    fig.add_trace(go.Scatter(x=frame["iteration"], y=frame["objective"], mode="lines+markers", name="objective",
                             line=dict(color=SELECTED_COLOR)), row=1, col=1)
    fig.add_trace(go.Scatter(x=frame["iteration"], y=frame["n_clusters"], mode="lines+markers", name="K",
                             line=dict(color="#d62728", shape="hv")), row=2, col=1)
    fig.add_trace(go.Bar(x=frame["iteration"], y=frame["n_opened"], name="opened", marker_color="#ff9896",
                         opacity=0.6), row=2, col=1)
    fig.update_xaxes(title="iteration", dtick=1 if len(frame) <= 20 else None, row=2, col=1)
    if current is not None:
        for row in (1, 2):
            fig.add_vline(x=current, line=dict(color="black", dash="dot"), row=row, col=1)
    fig.update_layout(showlegend=False)
    return _finish(fig, f"Objective and K per iteration ({len(frame)} iterations of the kept run)", height=460)


# ---------------------------------------------------------------------------
# Evaluation


def fig_confusion(table: pd.DataFrame, *, title: str | None = None) -> go.Figure:
    """Clusters x classes counts, coloured by the share of each cluster's rows.

    Parameters
    ----------
    table : DataFrame
        From :func:`craft.metrics.contingency` (rows clusters, columns classes).
    """
    counts = table.to_numpy(dtype=np.int64)
    shares = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1)
    rows = [f"cluster {c}" for c in table.index]
    cols = _esc_all(table.columns)
    fig = go.Figure(go.Heatmap(
        z=shares, x=cols, y=rows, colorscale="Blues", zmin=0, zmax=1,
        text=counts, texttemplate="%{text}", customdata=counts,
        hovertemplate="%{y} · class %{x}<br>%{customdata} rows (%{z:.0%} of the cluster)<extra></extra>",
        colorbar=dict(title="share", tickformat=".0%"),
    ))
    angle = _angle(len(cols)) if _label_px(cols) < 80 else -60
    fig.update_yaxes(autorange="reversed", **_all_ticks("y", rows))
    fig.update_xaxes(tickangle=angle, **_all_ticks("x", cols))
    return _finish(fig, title or "Confusion matrix (clusters × classes)",
                   height=int(min(900, 200 + 28 * len(rows)) + _x_room(cols, angle)),
                   left=_left_room(rows, cols, angle), bottom=_x_room(cols, angle))


def fig_compare(frame: pd.DataFrame) -> go.Figure:
    """Methods side by side: purity, NMI and ARI when known, else K and time.

    Parameters
    ----------
    frame : DataFrame
        From :func:`explorer.services.compare_methods`.
    """
    scored = frame[["purity", "nmi", "ari"]].notna().any().any()
    fig = go.Figure()
    if scored:
        for metric, color in (("purity", "#1f77b4"), ("nmi", "#ff7f0e"), ("ari", "#2ca02c")):
            fig.add_trace(go.Bar(name=metric.upper() if metric != "purity" else "purity", x=frame["method"],
                                 y=frame[metric], marker_color=color, texttemplate="%{y:.2f}", textposition="outside"))
        fig.update_layout(barmode="group")
        fig.update_yaxes(range=[min(0, float(np.nanmin(frame[["ari"]].to_numpy(dtype=float), initial=0))), 1.05])
        title = "Purity, NMI and ARI per method"
    else:
        fig.add_trace(go.Bar(name="K", x=frame["method"], y=frame["K"], marker_color="#1f77b4",
                             texttemplate="%{y}", textposition="outside"))
        title = "Clusters found per method (no label column: no scores)"
    return _finish(fig, title, height=380)


# ---------------------------------------------------------------------------
# What-if


def sweep_summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Mean and standard deviation over seeds of every measured column, per value."""
    measured = [c for c in ("K", "objective", "lam", "purity", "nmi", "ari", "seconds") if c in frame]
    numeric = frame[["value"] + measured].apply(pd.to_numeric, errors="coerce")
    grouped = numeric.groupby("value", sort=True)
    mean = grouped.mean().add_suffix("_mean")
    sd = grouped.std(ddof=0).fillna(0.0).add_suffix("_sd")
    return pd.concat([mean, sd], axis=1).reset_index()


def fig_sweep(frame: pd.DataFrame, param: str, *, label: str | None = None) -> go.Figure:
    """K, objective and (when labelled) purity/NMI/ARI against a swept parameter.

    Parameters
    ----------
    frame : DataFrame
        From :func:`explorer.services.sweep` (one row per value and seed).
    param : str
        The swept parameter (``"lam"`` gets a log axis).
    """
    summary = sweep_summary(frame)
    has_scores = "purity_mean" in summary and summary["purity_mean"].notna().any()
    titles = ["clusters K", "objective"] + (["purity / NMI / ARI"] if has_scores else [])
    fig = make_subplots(rows=1, cols=len(titles), subplot_titles=titles, horizontal_spacing=0.08)
    x = summary["value"]

    def line(column, name, color, col):
        fig.add_trace(go.Scatter(
            x=x, y=summary[f"{column}_mean"], name=name, mode="lines+markers", line=dict(color=color),
            error_y=dict(type="data", array=summary[f"{column}_sd"], visible=True, thickness=1),
        ), row=1, col=col)

    line("K", "K", "#d62728", 1)
    line("objective", "objective", SELECTED_COLOR, 2)
    if has_scores:
        line("purity", "purity", "#1f77b4", 3)
        line("nmi", "NMI", "#ff7f0e", 3)
        line("ari", "ARI", "#2ca02c", 3)
    name = label or param
    fig.update_xaxes(title=name, type="log" if param == "lam" else "linear")
    seeds = frame["seed"].nunique() if "seed" in frame else 1
    return _finish(fig, f"Sweep over {name} ({len(summary)} values × {seeds} seed(s); bars: ±1 sd over seeds)",
                   height=380)


def rho_demo_frame(m: float, *, n: int = 101) -> pd.DataFrame:
    """Posterior mean of nu_kd for v_kd = 0 and 1 at ``n`` values of rho inside (0, m(1-m)).

    Read from :meth:`craft.priors.PriorTerms.selection_probability` of each
    (m, rho): ``m + (v - m) rho / (m (1 - m))``, which tends to m whatever v
    as rho -> 0 (global selection) and to v as rho -> m(1-m)
    (cluster-specific). The ends themselves are left out: the Beta prior
    needs 0 < rho < m(1-m).

    Examples
    --------
    >>> frame = rho_demo_frame(0.25, n=3)
    >>> frame[["nu_selected", "nu_unselected"]].round(4).values.tolist()
    [[0.4375, 0.1875], [0.625, 0.125], [0.8125, 0.0625]]
    """
    upper = m * (1.0 - m)
    rho = upper * np.arange(1, n + 1) / (n + 1)
    terms = [prior_terms(m, value) for value in rho]
    return pd.DataFrame(dict(rho=rho, nu_selected=[t.selection_probability(1.0) for t in terms],
                             nu_unselected=[t.selection_probability(0.0) for t in terms]))


def fig_rho_demo(terms: PriorTerms) -> go.Figure:
    """The posterior mean of nu_kd moving between m (global) and v_kd (cluster-specific); ``terms`` marked."""
    m, rho = terms.m, terms.rho
    frame = rho_demo_frame(m)
    upper = m * (1.0 - m)
    current = [terms.selection_probability(1.0), terms.selection_probability(0.0)]
    fig = go.Figure([
        go.Scatter(x=frame["rho"], y=frame["nu_selected"], name="selected (v_kd = 1)", line=dict(color=SELECTED_COLOR)),
        go.Scatter(x=frame["rho"], y=frame["nu_unselected"], name="not selected (v_kd = 0)", line=dict(color="#888888")),
        go.Scatter(x=[rho, rho], y=current, mode="markers+text", name="current ρ",
                   marker=dict(size=11, color="#d62728"),
                   text=[f"{value:.2f}" for value in current], textposition="middle right"),
    ])
    fig.add_hline(y=m, line=dict(dash="dot", color="#444"), annotation_text=f"m = {m:g}")
    fig.add_annotation(x=0, y=1.08, xref="x", yref="paper", text="← global", showarrow=False, xanchor="left")
    fig.add_annotation(x=upper, y=1.08, xref="x", yref="paper", text="cluster-specific →", showarrow=False,
                       xanchor="right")
    fig.update_xaxes(title="ρ", range=[0, upper])
    fig.update_yaxes(title="posterior mean of ν_kd", range=[-0.05, 1.05])
    return _finish(fig, f"Posterior mean of ν_kd = m + (v_kd − m) ρ / (m(1−m)); ρ = {rho:.4g} (valid strictly "
                        f"between 0 and {upper:.4g})", height=380)


# ---------------------------------------------------------------------------
# A row's explanation


def fig_explanation(explanation, row: int, *, top: int = 12, title: str | None = None) -> go.Figure:
    """Why row ``row`` is in its cluster: each feature's part of its cost and of its margin (``CRAFT.explain``).

    Parameters
    ----------
    explanation : craft.estimator.Explanation
        From :meth:`craft.CRAFT.explain` on the rows; ``row`` is a position in it.
    row : int
    top : int, default=12
        Features drawn: those with the largest parts, by |margin| then cost (the rest are summed into one bar,
        so the bars still add up to the row's cost and margin).

    Returns
    -------
    plotly.graph_objects.Figure
        Two horizontal bar panels sharing the features: the cost in the row's cluster (lower is closer) and
        the margin over the runner-up (positive: the feature holds the row in its cluster).
    """
    cost = explanation.cost.iloc[row].to_numpy(dtype=np.float64)
    margin = explanation.margin.iloc[row].to_numpy(dtype=np.float64)
    names = [str(c) for c in explanation.cost.columns]
    weight = np.nan_to_num(np.abs(margin)) + 1e-12 * np.nan_to_num(cost)
    order = np.argsort(-weight, kind="stable")
    keep, rest = order[:top], order[top:]
    labels = _esc_all([names[j] for j in keep])
    costs, margins = list(cost[keep]), list(margin[keep])
    if rest.size:
        labels.append(f"{rest.size} other feature(s)")
        costs.append(float(np.nansum(cost[rest])))
        margins.append(float(np.nansum(margin[rest])))
    cluster, runner = int(explanation.cluster[row]), int(explanation.runner_up[row])
    fig = make_subplots(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.04, subplot_titles=(
        f"Cost in cluster {cluster} (sum {np.nansum(cost):,.4g})",
        "Margin over " + (f"cluster {runner}" if runner >= 0 else "no other cluster")
        + f" (sum {np.nansum(margin):,.4g})"))
    fig.add_trace(go.Bar(x=costs, y=labels, orientation="h", marker_color=UNSELECTED_COLOR, name="cost",
                         hovertemplate="%{y}: cost %{x:.4g}<extra></extra>", showlegend=False), row=1, col=1)
    fig.add_trace(go.Bar(x=margins, y=labels, orientation="h", name="margin", showlegend=False,
                         marker_color=[SELECTED_COLOR if value >= 0 else "#d62728" for value in np.nan_to_num(margins)],
                         hovertemplate="%{y}: margin %{x:.4g}<extra></extra>"), row=1, col=2)
    fig.update_yaxes(autorange="reversed", **_all_ticks("y", labels))
    return _finish(fig, title or f"Row {row}: why it is in cluster {cluster}", height=max(260, 60 + 24 * len(labels)),
                   left=_y_room(labels))
