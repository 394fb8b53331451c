"""What every figure of :mod:`craft.plots` shares: colours, fonts, escaping, label measurement, axes, legends.

The figure modules of the package (:mod:`craft.plots.masks`,
:mod:`craft.plots.heatmap`, ...) import their common helpers from here, and
nothing outside the package does: the public names (the colours,
:data:`TICK_FONT_PX`, :func:`cluster_colors`, ...) are re-exported by
:mod:`craft.plots`. One rule of layout holds for every figure: margins are
computed from the labels' lengths at :data:`TICK_FONT_PX` (never a fixed
10 px, which clips long names), and :func:`_finish` places the title, the
selection legend and the margins.
"""

from __future__ import annotations

import html

import numpy as np
import pandas as pd

from .._optional import missing

try:
    import plotly.graph_objects as go
    from plotly.colors import qualitative
except ImportError as error:  # pragma: no cover - depends on the installation
    raise missing("plotly", extra="plots", needed_for="craft.plots") from error

__all__ = [
    "SELECTED_COLOR", "UNSELECTED_COLOR", "SELECTION_COLORSCALE", "SELECTED_SCALE", "UNSELECTED_SCALE", "TICK_FONT_PX",
    "SELECTED_NAME", "UNSELECTED_NAME", "CUT_COLOR", "NOISE_COLOR", "NOISE_NAME", "LABEL_GAP_PX", "TITLE_LINE_PX",
    "cluster_colors", "escape_labels", "label_px",
]


# ---------------------------------------------------------------------------
# Colours and fonts


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


#: Colour and name of the rows a ``noise=True`` fit labels -1 (they fit no cluster), as HDBSCAN's plots draw noise.
NOISE_COLOR = "#a0a0a0"
NOISE_NAME = "noise (fits no cluster)"


def cluster_colors(n: int) -> list[str]:
    """``n`` distinguishable colours, one per cluster (cycling after 60)."""
    palette = qualitative.Plotly + qualitative.D3[1:] + qualitative.Set2 + qualitative.Dark24
    return [palette[i % len(palette)] for i in range(n)]


# ---------------------------------------------------------------------------
# Text: escaping and measuring labels


def _esc(value) -> str:
    """A user string made safe for Plotly's pseudo-HTML text (shown literally)."""
    return html.escape(str(value), quote=False)


def escape_labels(values) -> list[str]:
    """Names (features, levels, clusters) as the figures write them on an axis: escaped for Plotly's pseudo-HTML.

    A click on a figure returns the text of the axis, so whoever reads a click
    (:func:`explorer.steering.on_mask_click`) compares it with these.

    Examples
    --------
    >>> escape_labels(["a<b", 3])
    ['a&lt;b', '3']
    """
    return [_esc(v) for v in values]


def label_px(labels) -> float:
    """Width in pixels of the longest label (escaped entities count as one character)."""
    texts = [html.unescape(str(label)) for label in labels]
    return _CHAR_PX * max((len(text) for text in texts), default=0)


def _x_room(labels, angle: float) -> float:
    """Pixels that x tick labels rotated by ``angle`` degrees take below the axis."""
    radians = np.deg2rad(abs(angle))
    return label_px(labels) * np.sin(radians) + _FONT["size"] * np.cos(radians) + 10


def _y_room(labels) -> float:
    """Pixels that (horizontal) y tick labels take beside the axis."""
    return label_px(labels) + 10


def _left_room(y_labels, x_labels, angle: float) -> float:
    """Left margin: the y labels, or the first x label where a rotated one reaches further left."""
    reach = label_px(list(x_labels)[:1]) * np.cos(np.deg2rad(abs(angle))) if angle and len(x_labels) else 0.0
    return max(_y_room(y_labels), reach)


# ---------------------------------------------------------------------------
# Axes and legends


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


def _angle(n_labels: int) -> int:
    """Tick angle of a categorical x axis: upright for a few labels, steep for many."""
    return -60 if n_labels > 12 else 0


def _spacing(labels, *, width: float = 1100.0) -> float:
    """Horizontal spacing of two panels (a share of the width) that holds the right panel's y labels."""
    return float(min(0.35, max(0.08, (_y_room(labels) + 24) / width)))


def _selection_legend(fig: go.Figure, selected_color: str, unselected_color: str, *, what: str = "feature") -> None:
    """Legend entries for the two classes of cells or bars (heatmaps have no legend of their own)."""
    for name, color in ((f"{SELECTED_NAME} {what}", selected_color), (f"{UNSELECTED_NAME}", unselected_color)):
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=name, showlegend=True, hoverinfo="skip",
                                 marker=dict(symbol="square", size=13, color=color, line=dict(color="#555", width=1))))
    fig.update_layout(legend=_LEGEND)


# ---------------------------------------------------------------------------
# Cells and rows of the mask figures (masks, stability) and of the data heatmap


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
        x=escape_labels(frame.columns),
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


# ---------------------------------------------------------------------------
# Title, font and margins of every figure


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
