"""Figures of one fit: cluster sizes, assignment margins, profiles, a PCA projection, the history, a row's explanation.

Each reads the fitted model's own attributes (``cluster_sizes_``,
``selection_`` through :func:`craft.profiles.cluster_profiles`,
``history_``, :meth:`craft.CRAFT.assign` and :meth:`craft.CRAFT.explain`);
the data preparation beside each figure (:func:`margin_frame`,
:func:`projection_frame`, :func:`history_frame`) computes only what is drawn.
"""

from __future__ import annotations

import textwrap

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots
from scipy import sparse

from ._style import (
    CUT_COLOR,
    NOISE_COLOR,
    NOISE_NAME,
    SELECTED_COLOR,
    SELECTED_NAME,
    TICK_FONT_PX,
    TITLE_LINE_PX,
    UNSELECTED_COLOR,
    UNSELECTED_NAME,
    _LEGEND,
    _all_ticks,
    _angle,
    _esc,
    _finish,
    _x_room,
    _y_room,
    cluster_colors,
    escape_labels,
    label_px,
)
from .heatmap import sample_rows

__all__ = ["fig_cluster_sizes", "margin_frame", "fig_margins", "PANEL_TITLE_CHARS", "profile_axis_title", "fig_profile_overview",
           "fig_feature_detail", "projection_frame", "SVG_MAX_POINTS", "fig_projection", "history_frame", "fig_history",
           "fig_explanation"]


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
    longest = label_px(escape_labels(rows["feature"]))
    fig = make_subplots(rows=1, cols=max(1, len(kinds)), subplot_titles=[titles[k] for k in kinds],
                        horizontal_spacing=float(min(0.4, max(0.12, (longest + 40) / 1100))))
    tallest, title_lines = 1, 1
    for col, kind in enumerate(kinds, start=1):
        part = rows[rows["kind"] == kind].sort_values("rank", ascending=False)
        tallest = max(tallest, len(part))
        names = escape_labels(part["feature"])
        for chosen, color in ((True, SELECTED_COLOR), (False, UNSELECTED_COLOR)):
            keep = (part["selected"] == chosen).to_numpy()
            fig.add_trace(
                go.Bar(
                    x=part["criterion"].to_numpy()[keep],
                    y=[name for name, k in zip(names, keep, strict=True) if k],
                    orientation="h",
                    marker=dict(color=color, line=dict(color="#555", width=0.5)),
                    customdata=escape_labels(part["reason"].to_numpy()[keep]),
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
    from ..profiles import level_distribution, numeric_moments, numeric_values

    if feature in model.schema_.categorical:
        levels = level_distribution(model, cluster, feature)
        fig = go.Figure([
            go.Bar(name=f"cluster {cluster}", x=escape_labels(levels["level"]), y=levels["cluster_share"],
                   marker_color=SELECTED_COLOR, hovertemplate="%{x}: %{y:.1%}<extra>cluster</extra>"),
            go.Bar(name="all rows", x=escape_labels(levels["level"]), y=levels["overall_share"],
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
    labels = escape_labels([names[j] for j in keep])
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
