"""Figures that compare: clusters against classes, methods side by side, sweeps over a parameter, the ρ demonstration.

:func:`fig_confusion` reads :func:`craft.metrics.contingency`,
:func:`fig_compare` and :func:`fig_sweep` the tables of the app's comparison
and sweep (:func:`sweep_summary` averages over seeds), and
:func:`fig_rho_demo` the prior's :class:`craft.priors.PriorTerms`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..priors import PriorTerms, prior_terms
from ._style import (
    SELECTED_COLOR,
    _all_ticks,
    _angle,
    _finish,
    _left_room,
    _x_room,
    escape_labels,
    label_px,
)

__all__ = ["fig_confusion", "fig_compare", "sweep_summary", "fig_sweep", "rho_demo_frame", "fig_rho_demo"]


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
    cols = escape_labels(table.columns)
    fig = go.Figure(go.Heatmap(
        z=shares, x=cols, y=rows, colorscale="Blues", zmin=0, zmax=1,
        text=counts, texttemplate="%{text}", customdata=counts,
        hovertemplate="%{y} · class %{x}<br>%{customdata} rows (%{z:.0%} of the cluster)<extra></extra>",
        colorbar=dict(title="share", tickformat=".0%"),
    ))
    angle = _angle(len(cols)) if label_px(cols) < 80 else -60
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
