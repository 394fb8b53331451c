"""Figures of a cluster card (:mod:`craft.cards`) as pure functions returning Plotly figures.

Each draws numbers of a :class:`craft.cards.ClusterCard` as they are; nothing
is computed here but the order and the labels. Same conventions as
:mod:`craft.plots`: selected features blue, the others grey, tick labels at
:data:`craft.plots.TICK_FONT_PX`, margins from the labels' lengths.
"""

from __future__ import annotations

import numpy as np

import plotly.graph_objects as go

from ..cards import ClusterCard
from ._style import (
    SELECTED_COLOR,
    SELECTED_NAME,
    UNSELECTED_COLOR,
    UNSELECTED_NAME,
    _all_ticks,
    _esc,
    _finish,
    escape_labels,
    label_px,
)

__all__ = ["fig_card_numeric", "fig_card_levels", "OVERALL_COLOR", "MAX_LEVELS"]

#: The bars of all the rows beside a cluster's (as in :func:`craft.plots.fit.fig_feature_detail`).
OVERALL_COLOR = "#b0b0b0"
#: Levels drawn at most in :func:`fig_card_levels` (the table on the card has them all).
MAX_LEVELS = 12


def _height(n_bars: int) -> int:
    return int(min(1400, 190 + 28 * n_bars))


def fig_card_numeric(card: ClusterCard) -> go.Figure:
    """The standardised difference of every numeric feature, selected features first (on top).

    A bar is ``(cluster mean - overall mean) / overall sd`` (``card.numeric.std_diff``),
    blue where the cluster selects the feature and grey where not; the hover
    gives both means and the v-test.
    """
    frame = card.numeric.iloc[::-1]  # the first row of the table on top
    names = escape_labels(frame["feature"])
    fig = go.Figure()
    for chosen, color in ((True, SELECTED_COLOR), (False, UNSELECTED_COLOR)):
        keep = (frame["selected"] == chosen).to_numpy()
        part = frame[keep]
        fig.add_trace(go.Bar(
            x=part["std_diff"], y=[name for name, k in zip(names, keep, strict=True) if k], orientation="h",
            marker=dict(color=color, line=dict(color="#555", width=0.5)),
            customdata=np.column_stack([part["mean"], part["overall_mean"], part["v_test"]]),
            hovertemplate="%{y}: %{x:+.2f} sd<br>mean %{customdata[0]:.4g} in the cluster vs %{customdata[1]:.4g} "
                          "overall<br>v-test %{customdata[2]:.3g}<extra></extra>",
            name=f"{SELECTED_NAME} feature" if chosen else UNSELECTED_NAME,
        ))
    fig.add_vline(x=0, line=dict(color="#555", width=1))
    fig.update_yaxes(categoryorder="array", categoryarray=names, **_all_ticks("y", names))
    fig.update_xaxes(title="(cluster mean − overall mean) / overall sd")
    fig.update_layout(barmode="overlay", legend=dict(orientation="h", x=0, xanchor="left", y=1.0, yanchor="bottom"))
    return _finish(fig, f"Cluster {card.cluster}: numeric features against all rows",
                   height=_height(len(frame)), left=label_px(names) + 8, bottom=40)


def fig_card_levels(card: ClusterCard, *, max_levels: int = MAX_LEVELS) -> go.Figure:
    """Shares of the levels of the selected categorical features, in the cluster and overall.

    The ``max_levels`` levels with the largest ``|v_test|`` (``card.levels``),
    each labelled ``feature = level``, sorted from the most over- to the most
    under-represented; the title says how many there are in all.
    """
    chosen = card.levels[card.levels["selected"]]
    strongest = chosen.loc[chosen["v_test"].abs().sort_values(ascending=False, kind="stable").index[:max_levels]]
    frame = strongest.sort_values("v_test", kind="stable")  # most over-represented on top
    names = [_esc(f"{feature} = {level}") for feature, level in zip(frame["feature"], frame["level"], strict=True)]
    fig = go.Figure([
        go.Bar(name="all rows", x=frame["overall_share"], y=names, orientation="h", marker_color=OVERALL_COLOR,
               hovertemplate="%{y}: %{x:.1%} of all rows<extra></extra>"),
        go.Bar(name=f"cluster {card.cluster}", x=frame["cluster_share"], y=names, orientation="h",
               marker_color=SELECTED_COLOR, customdata=frame["v_test"],
               hovertemplate="%{y}: %{x:.1%} of the cluster<br>v-test %{customdata:.3g}<extra></extra>"),
    ])
    fig.update_yaxes(categoryorder="array", categoryarray=names, **_all_ticks("y", names))
    fig.update_xaxes(title="share of the rows", tickformat=".0%")
    fig.update_layout(barmode="group", legend=dict(orientation="h", x=0, xanchor="left", y=1.0, yanchor="bottom",
                                                   traceorder="reversed"))
    shown = (f"the {len(frame)} levels with the largest |v| of {len(chosen)}" if len(chosen) > len(frame)
             else f"all {len(frame)} levels")
    return _finish(fig, f"Cluster {card.cluster}: selected categorical features, {shown}",
                   height=_height(2 * len(frame)), left=label_px(names) + 8, bottom=40)
