"""Figures of how much to trust a partition: pure functions of :mod:`craft.stability`'s results.

They read the results of :func:`craft.stability.bootstrap_stability` and
:func:`craft.stability.k_evidence` and the model's fitted attributes, and
draw with :mod:`craft.plots`' colours and layout, so they need the ``plots``
extra (plotly) while :mod:`craft.stability` itself needs only the engine.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..estimator import CRAFT
from ..stability import UNSTABLE_JACCARD, Stability
from ._style import (
    CUT_COLOR,
    SELECTED_COLOR,
    UNSELECTED_COLOR,
    _all_ticks,
    _angle,
    _binary_heatmap,
    _cluster_label,
    _finish,
    _left_room,
    _mask_height,
    _selection_legend,
    _x_room,
    escape_labels,
)
from .masks import mask_frame

__all__ = ["fig_selection_frequency", "fig_jaccard", "fig_k_evidence", "SIDE_BY_SIDE_FEATURES", "FREQUENCY_SCALE"]

#: Most features whose two panels of :func:`fig_selection_frequency` stand side by side; more are stacked.
SIDE_BY_SIDE_FEATURES = 20
#: Frequency of selection: from the mask's "not selected" grey to its "selected" blue.
FREQUENCY_SCALE = [[0.0, "#f7f7f7"], [0.5, "#9ecae1"], [1.0, SELECTED_COLOR]]


def fig_selection_frequency(model: CRAFT, stability: Stability, *, order: str = "subspace") -> go.Figure:
    """The mask (left) beside how often each cell stays selected in the matched refit cluster (right).

    A refit counts for a cluster only where it matches it one-to-one with a
    Jaccard ≥ 0.5 (:attr:`craft.stability.Stability.matched`); the hover
    says over how many refits.

    Clusters and features are in the mask heatmap's order
    (:func:`craft.mask_frame`), its colours on the left, so a user
    reads which selected cells are solid (near 100 %) and which flicker.
    """
    frame = mask_frame(model, order=order, sizes=np.asarray(model.cluster_sizes_))
    frequency = stability.feature_frequency.loc[frame.index, frame.columns]
    labels = [_cluster_label(k, model.cluster_sizes_) for k in frame.index]
    values = frequency.to_numpy()
    names = escape_labels(frame.columns)
    matched = stability.n_matched[np.asarray(frame.index)]
    text = np.array([[f"{row} · {name}: {'selected' if on else 'not selected'} in this fit; selected in {share:.0%} "
                      f"of the {n} refits matching the cluster one-to-one"
                      for name, on, share in zip(names, flags, shares, strict=True)]
                     for row, flags, shares, n in zip(labels, frame.to_numpy(), values, matched, strict=True)],
                    dtype=object)
    titles = ("This fit: selected features", f"Selected in the {stability.method} refits")
    # Side by side, each panel has half the width: beyond SIDE_BY_SIDE_FEATURES its feature labels ran into
    # each other (Soybean's 35 at 1280 px), so the panels are stacked, full width, sharing the labels below.
    stacked = len(names) > SIDE_BY_SIDE_FEATURES
    if stacked:
        fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.06, subplot_titles=titles)
    else:
        # One row of cluster labels, at the left: the right panel's own covered the left heatmap's last columns.
        fig = make_subplots(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.04, subplot_titles=titles)
    second = dict(row=2, col=1) if stacked else dict(row=1, col=2)
    fig.add_trace(_binary_heatmap(frame, labels, "CRAFT"), row=1, col=1)
    fig.add_trace(go.Heatmap(
        z=values, x=names, y=labels, zmin=0, zmax=1, colorscale=FREQUENCY_SCALE, xgap=1, ygap=1,
        text=np.round(values * 100).astype(int), texttemplate="%{text}" if values.size <= 600 else None,
        customdata=text, hovertemplate="%{customdata}<extra></extra>",
        colorbar=dict(title="selected", tickformat=".0%", **(dict(len=0.45, y=0, yanchor="bottom") if stacked else {})),
        name="refits",
    ), **second)
    angle = _angle(len(names))
    fig.update_yaxes(autorange="reversed", **_all_ticks("y", labels))
    fig.update_xaxes(tickangle=angle, **_all_ticks("x", names))
    _selection_legend(fig, SELECTED_COLOR, UNSELECTED_COLOR)
    panels = _mask_height(len(labels)) * (2 if stacked else 1)
    return _finish(fig, "Which selected features are solid: share of the refits whose matched cluster selects them",
                         height=panels + int(_x_room(names, angle)),
                         left=_left_room(labels, names, angle), bottom=_x_room(names, angle))


def fig_jaccard(stability: Stability) -> go.Figure:
    """Each cluster's mean best-match Jaccard, unstable ones in red, with the 0.6 line."""
    table = stability.frame()
    labels = [_cluster_label(k, stability.sizes) for k in table["cluster"]]
    colors = np.where(table["unstable"], CUT_COLOR, SELECTED_COLOR)
    hover = [f"{label}: mean Jaccard {j:.2f}, dissolved (≤ 0.5) in {d} of {n} refits testing it, matched one-to-one "
             f"in {mt}" + (" — unstable" if u else "")
             for label, j, d, n, mt, u in zip(labels, table["mean_jaccard"], table["dissolved"], table["resamples"],
                                              table["matched"], table["unstable"], strict=True)]
    fig = go.Figure(go.Bar(x=labels, y=table["mean_jaccard"], marker_color=colors, text=hover,
                           hovertemplate="%{text}<extra></extra>", texttemplate="%{y:.2f}", textposition="outside",
                           showlegend=False))
    fig.add_hline(y=UNSTABLE_JACCARD, line_dash="dash", line_color=CUT_COLOR,
                  annotation_text=f"unstable below {UNSTABLE_JACCARD}", annotation_position="bottom right",
                  annotation_bgcolor="white")
    fig.update_yaxes(range=[0, 1.1], title="mean Jaccard of the best match")
    angle = _angle(len(labels))
    fig.update_xaxes(tickangle=angle)
    return _finish(fig, f"Is each cluster found again? {stability.n_resamples} {stability.method} refits",
                         height=420, bottom=_x_room(labels, angle))


def fig_k_evidence(evidence: pd.DataFrame, *, chosen: int | None = None) -> go.Figure:
    """The data cost, the stability and the silhouette over k (from :func:`k_evidence`), the chosen k marked."""
    fig = make_subplots(rows=3, cols=1, shared_xaxes=True, vertical_spacing=0.08, subplot_titles=(
        "Data cost per row (lower fits better; it always falls with k)",
        "Mean Jaccard over clusters (higher is more stable)",
        "Silhouette on CRAFT's cost (higher separates better)"))
    for row, column, color in ((1, "data_cost_per_row", SELECTED_COLOR), (2, "mean_jaccard", SELECTED_COLOR),
                               (3, "silhouette", SELECTED_COLOR)):
        fig.add_trace(go.Scatter(x=evidence["k"], y=evidence[column], mode="lines+markers", line_color=color,
                                 showlegend=False, customdata=evidence["K"],
                                 hovertemplate="k = %{x} (K = %{customdata}): %{y:.3g}<extra></extra>"), row=row, col=1)
    fig.add_hline(y=UNSTABLE_JACCARD, line_dash="dash", line_color=CUT_COLOR, row=2, col=1)
    if chosen is not None:
        fig.add_vline(x=chosen, line_dash="dot", line_color="#555")
    fig.update_xaxes(title="k asked for", dtick=1, row=3, col=1)
    return _finish(fig, "Evidence on k (for your choice, not an oracle)", height=620)
