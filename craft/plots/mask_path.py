"""The mask path's figure: a pure function of :class:`craft.path.MaskPath`.

It draws with :mod:`craft.plots`' colours and layout, so it needs the
``plots`` extra (plotly) while :mod:`craft.path` itself needs only the
engine.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..exceptions import CraftInputError
from ..path import MaskPath
from ._style import (
    CUT_COLOR,
    SELECTED_COLOR,
    SELECTION_COLORSCALE,
    TICK_FONT_PX,
    UNSELECTED_COLOR,
    _LEGEND_TOP,
    _all_ticks,
    _esc,
    _finish,
    _name_axis,
    _selection_legend,
    _y_room,
    cluster_colors,
    escape_labels,
)

__all__ = ["fig_mask_path", "fig_path_scrubber", "feature_order", "MAX_FEATURES", "EVENT_STYLE"]

#: Most features drawn: those selected most often along the path (the title says when some are left out).
MAX_FEATURES = 60
#: How each kind of event is drawn in the tracks panel.
EVENT_STYLE = {"split": dict(dash="solid", color="#2ca02c"), "merge": dict(dash="dash", color=CUT_COLOR)}
#: Pixels of one feature row of the mask panels: a line of tick text with room around it.
_ROW_PX = 20


def feature_order(path: MaskPath) -> list[int]:
    """Features by how many (track, value) cells select them, most first (ties in table order).

    Selections robust to the knob come first; features never selected come last.
    """
    counts = path.selected.sum(axis=(0, 1))
    return sorted(range(len(path.features)), key=lambda d: (-counts[d], d))


def _drawn_features(path: MaskPath, order=None) -> list[int]:
    """The features drawn, in ``order`` (default :func:`feature_order`): the :data:`MAX_FEATURES` selected most.

    ``order`` lists every feature's index once (e.g. the order of the mask heatmap of the fit on screen); where
    some are left out, those selected least along the path go, and the rest keep ``order``.
    """
    by_count = feature_order(path)
    if order is None:
        return by_count[:MAX_FEATURES]
    order = [int(d) for d in order]
    if sorted(order) != list(range(len(path.features))):
        raise CraftInputError(f"order must list each of the path's {len(path.features)} features once")
    kept = set(by_count[:MAX_FEATURES])
    return [d for d in order if d in kept]


def _value_labels(path: MaskPath) -> list[str]:
    return [f"{value:g}" for value in path.values]


def _tracks_panel(fig: go.Figure, path: MaskPath, x: list[str], colors: list[str]) -> None:
    """One lane per track, a marker per value sized by the cluster's share of rows, and the events linking lanes."""
    total = max(int(path.sizes[:, 0].sum()), 1)
    for track in range(path.n_tracks):
        steps = np.flatnonzero(path.present[track])
        hover = [f"{_esc(path.track_label(track))}<br>{path.knob} = {x[s]}: cluster {path.clusters[track, s]}, "
                 f"{path.sizes[track, s]:,} rows, {int(path.selected[track, s].sum())} features selected"
                 for s in steps]
        fig.add_trace(go.Scatter(
            x=[x[s] for s in steps], y=[track] * len(steps), mode="lines+markers", name=f"track {track}",
            line=dict(color=colors[track], width=3), showlegend=False, text=hover, hovertemplate="%{text}<extra></extra>",
            marker=dict(color=colors[track], size=8 + 22 * np.sqrt(path.sizes[track, steps] / total)),
        ), row=1, col=1)
    for kind, style in EVENT_STYLE.items():
        events = [e for e in path.events if e.kind == kind]
        xs: list[str | None] = []
        ys: list[int | None] = []
        texts: list[str | None] = []
        for e in events:
            text = (f"{kind}: track {e.source} → track {e.target} at {path.knob} = {x[e.step]} "
                    f"(Jaccard of the rows {e.jaccard:.2f})")
            xs += [x[e.step - 1], x[e.step], None]
            ys += [e.source, e.target, None]
            texts += [text, text, None]
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", name=f"{kind} ({len(events)})", line=dict(width=2, **style),
                                 text=texts, hovertemplate="%{text}<extra></extra>", showlegend=True,
                                 visible=True if events else "legendonly"), row=1, col=1)


def _mask_cells(path: MaskPath, track: int, features: list[int], x: list[str]) -> go.Heatmap:
    """One track's selection: features down, values across; blank where the track does not exist."""
    present = path.present[track]
    z = np.where(present[None, :], path.selected[track][:, features].T.astype(np.float64), np.nan)
    names = escape_labels(path.features[d] for d in features)
    text = np.array([[f"track {track} · {name} at {path.knob} = {value}: "
                      + (("selected" if z[i, s] else "not selected") + f" (cluster {path.clusters[track, s]})"
                         if present[s] else "the track does not exist here")
                      for s, value in enumerate(x)] for i, name in enumerate(names)], dtype=object)
    return go.Heatmap(
        z=z, x=x, y=names, zmin=0, zmax=1, showscale=False, xgap=1, ygap=1, text=text,
        hovertemplate="%{text}<extra></extra>", name=f"track {track}",
        colorscale=SELECTION_COLORSCALE,
    )


def fig_mask_path(path: MaskPath, *, order=None) -> go.Figure:
    """The mask path: the clusters followed along the knob (top) and each one's selected features (below).

    Top: one lane per track of :attr:`MaskPath.clusters`, a marker at every
    value where it exists (its area grows with the cluster's rows), green
    links where a track splits off another and dashed red ones where a track
    merges into another. Below: one panel per track, features down and the
    knob's values across, selected cells blue and unselected grey (the fits'
    ``feature_mask_``), blank where the track does not exist; a row blue
    across a whole panel is a selection that holds whatever the knob.
    Features are ordered by ``order`` (indices into ``path.features``, each
    once; default :func:`feature_order`); at most :data:`MAX_FEATURES` are
    drawn, those selected most along the path.
    """
    x = _value_labels(path)
    colors = cluster_colors(path.n_tracks)
    features = _drawn_features(path, order)
    names = escape_labels(path.features[d] for d in features)
    n_panels = path.n_tracks
    lanes_px = 60 + 34 * n_panels
    masks_px = _ROW_PX * len(features) + 40
    axis, room = _name_axis(x)
    height = int(_LEGEND_TOP + lanes_px + masks_px + 2 * room + 70)
    fig = make_subplots(
        rows=2, cols=n_panels, shared_yaxes=True, horizontal_spacing=min(0.02, 0.2 / max(n_panels, 1)),
        vertical_spacing=(room + 60) / height, row_heights=[lanes_px, masks_px],
        specs=[[{"colspan": n_panels}] + [None] * (n_panels - 1), [{} for _ in range(n_panels)]],
        subplot_titles=[f"Clusters along {path.knob}: tracks, splits and merges"]
                       + [f"track {t}" for t in range(n_panels)],
    )
    _tracks_panel(fig, path, x, colors)
    for track in range(n_panels):
        fig.add_trace(_mask_cells(path, track, features, x), row=2, col=track + 1)
        fig.update_xaxes(row=2, col=track + 1, **axis)
    fig.update_xaxes(type="category", categoryorder="array", categoryarray=x)
    fig.update_xaxes(title=path.knob, row=1, col=1, **axis)
    lanes = [f"track {t}" for t in range(n_panels)]
    fig.update_yaxes(row=1, col=1, autorange="reversed", tickmode="array", tickvals=list(range(n_panels)),
                     ticktext=lanes, range=[n_panels - 0.5, -0.5], automargin=False)
    fig.update_yaxes(row=2, col=1, autorange="reversed", **_all_ticks("y", names))
    _selection_legend(fig, SELECTED_COLOR, UNSELECTED_COLOR)
    # White behind the cells: where a track does not exist its panel is blank, unlike a grey "not selected".
    fig.update_layout(plot_bgcolor="white")
    fig.update_yaxes(row=1, col=1, showgrid=True, gridcolor="#eeeeee")
    left_out = len(path.features) - len(features)
    title = (f"The mask path over {path.knob}: {len(path.values)} fits, {path.n_tracks} cluster tracks"
             + (f" ({left_out} features selected least are not drawn)" if left_out else ""))
    return _finish(fig, title, height=height, left=max(_y_room(names), _y_room(lanes)), bottom=room)


def _step_title(path: MaskPath, step: int) -> str:
    """The metrics of the fit at ``step``, as Tune & see's summary gives them for the fit on screen."""
    return (f"The fit at {path.knob} = {path.values[step]:g}: K = {path.n_clusters[step]}, objective "
            f"{path.objective[step]:,.6g}, λ {path.lam[step]:.4g}, ρ {path.rho[step]:.4f}, "
            f"{path.n_iter[step]} iterations")


def _track_names(path: MaskPath, step: int) -> list[str]:
    """Each track's row label at ``step``: its cluster there and the cluster's rows, or that it is absent."""
    return [f"track {t}: cluster {path.clusters[t, step]} ({path.sizes[t, step]:,})" if path.present[t, step]
            else f"track {t}: absent" for t in range(path.n_tracks)]


def _step_traces(path: MaskPath, step: int, features: list[int], names: list[str],
                 colors: list[str]) -> tuple[go.Heatmap, go.Bar]:
    """The fit at ``step``: its tracks' masks (features across) and their sizes, blank where a track is absent."""
    present = path.present[:, step]
    z = np.where(present[:, None], path.selected[:, step][:, features].astype(np.float64), np.nan)
    rows = list(range(path.n_tracks))
    text = np.array([[f"track {t} · {name} at {path.knob} = {path.values[step]:g}: "
                      + (("selected" if z[t, i] else "not selected") + f" (cluster {path.clusters[t, step]})"
                         if present[t] else "the track does not exist here")
                      for i, name in enumerate(names)] for t in rows], dtype=object)
    cells = go.Heatmap(
        z=z, x=names, y=rows, zmin=0, zmax=1, showscale=False, xgap=1, ygap=1, text=text,
        hovertemplate="%{text}<extra></extra>", name="masks",
        colorscale=SELECTION_COLORSCALE,
    )
    sizes = go.Bar(
        x=path.sizes[:, step], y=rows, orientation="h", marker=dict(color=colors), name="rows", showlegend=False,
        text=[f"{size:,}" if size else "" for size in path.sizes[:, step]], textposition="auto",
        hovertemplate="%{x:,} rows<extra></extra>",
    )
    return cells, sizes


def fig_path_scrubber(path: MaskPath, *, at: float | None = None, slider: bool = True, order=None) -> go.Figure:
    """The path's fits one at a time, under a slider the browser moves: each fit's masks, sizes and metrics.

    Left, the tracks' selected features at one value of the knob (tracks
    down as in :func:`fig_mask_path`, features across, blue selected, grey
    not, blank where the track is absent); right, the rows of each track's
    cluster; in the title, the fit's metrics. The slider under the figure
    steps through the values of the path. Every step is a frame of the
    figure, computed here from the fits: the browser draws it from what it
    already holds, with no request to a server (in a Streamlit app, no rerun
    of the page), while the slider is dragged, not only when it is released.

    Parameters
    ----------
    path : MaskPath
    at : float, optional
        The value shown first: the path's value nearest to it (default: the first).
    slider : bool, default True
        False: the still picture of that one fit (no frames, no slider), as
        saved to a file; its title names the fit it shows.
    order : sequence of int, optional
        The features' order across, as in :func:`fig_mask_path`.

    Returns
    -------
    plotly.graph_objects.Figure
        One frame per value of the path (``frames``, named by the value), and
        one slider step per frame. ``layout.meta["still"]`` holds the height
        and bottom margin of the picture without its slider, with which a
        browser saves the frame on screen (:mod:`explorer.plotly_view`).
    """
    x = _value_labels(path)
    start = 0 if at is None else int(np.argmin(np.abs(path.values - at)))
    features = _drawn_features(path, order)
    names = escape_labels(path.features[d] for d in features)
    colors = cluster_colors(path.n_tracks)
    rows = list(range(path.n_tracks))
    labels = [_track_names(path, step) for step in range(len(x))]
    axis, room = _name_axis(names)
    traces = [_step_traces(path, step, features, names, colors) for step in range(len(x))]
    fig = make_subplots(rows=1, cols=2, shared_yaxes=True, column_widths=[0.8, 0.2], horizontal_spacing=0.02,
                        subplot_titles=["Selected features of each track", "Rows"])
    for trace, col in zip(traces[start], (1, 2), strict=True):
        fig.add_trace(trace, row=1, col=col)
    if not slider:
        fig.update_xaxes(row=1, col=1, type="category", **axis)
        fig.update_xaxes(row=1, col=2, showticklabels=False)
        fig.update_yaxes(autorange="reversed", tickmode="array", tickvals=rows, ticktext=labels[start],
                         automargin=False)
        _selection_legend(fig, SELECTED_COLOR, UNSELECTED_COLOR)
        fig.update_layout(plot_bgcolor="white")
        height = int(_LEGEND_TOP + 36 * path.n_tracks + 60 + room)
        left = _y_room(labels[start])
        return _finish(fig, _step_title(path, start), height=height, left=left, bottom=room)
    fig.frames = [go.Frame(name=x[step], data=list(traces[step]), traces=[0, 1],
                           layout=dict(title_text=_step_title(path, step), yaxis=dict(ticktext=labels[step])))
                  for step in range(len(x))]
    fig.update_xaxes(row=1, col=1, type="category", **axis)
    fig.update_xaxes(row=1, col=2, showticklabels=False)
    fig.update_yaxes(autorange="reversed", tickmode="array", tickvals=rows, ticktext=labels[start], automargin=False)
    _selection_legend(fig, SELECTED_COLOR, UNSELECTED_COLOR)
    # Instant steps: no transition, each frame drawn whole (a heatmap is redrawn, not tweened).
    step_args = dict(mode="immediate", frame=dict(duration=0, redraw=True), transition=dict(duration=0))
    slider_px = 80
    fig.update_layout(plot_bgcolor="white", sliders=[dict(
        active=start, x=0, len=1.0, y=0, yanchor="top", pad=dict(t=int(room) + 10, b=10), transition=dict(duration=0),
        currentvalue=dict(prefix=f"{path.knob} = ", font=dict(size=TICK_FONT_PX + 1)),
        steps=[dict(method="animate", label=label, args=[[label], step_args]) for label in x],
    )])
    height = int(_LEGEND_TOP + 36 * path.n_tracks + 60 + room + slider_px)
    left = max(_y_room(names_at) for names_at in labels)
    fig = _finish(fig, _step_title(path, start), height=height, left=left, bottom=room + slider_px)
    # What a browser needs to save the frame on screen as the still picture: its layout without the slider.
    still = fig_path_scrubber(path, at=at, slider=False, order=order).layout
    fig.update_layout(meta={"still": {"height": still.height, "margin_b": still.margin.b, "title_y": still.title.y,
                                      "legend_y": still.legend.y}})
    return fig
