"""A self-contained HTML report of a CRAFT result.

The report is one HTML file that works offline: plotly.js is embedded once
(no CDN), figures follow as ``<div>`` blocks, tables are HTML tables. Every
string that comes from the user (dataset and column names, levels, notes) is
escaped, so a column called ``<script>`` is shown, never run.
"""

from __future__ import annotations

import datetime as _dt
import html
from dataclasses import dataclass, field

import pandas as pd

from ._optional import missing

try:
    import plotly  # noqa: F401 - checked here: every report embeds Plotly figures
except ImportError as error:  # pragma: no cover - depends on the installation
    raise missing("plotly", extra="plots", needed_for="craft.report") from error

__all__ = ["Section", "render_report", "craft_report"]

_STYLE = """
body { font-family: -apple-system, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif; margin: 2rem auto;
       max-width: 1150px; color: #222; line-height: 1.45; padding: 0 1rem; }
h1 { font-size: 1.7rem; margin-bottom: 0.2rem; }
h2 { font-size: 1.25rem; margin-top: 2.2rem; border-bottom: 1px solid #ddd; padding-bottom: 0.2rem; }
p.sub { color: #666; margin-top: 0; }
table { border-collapse: collapse; font-size: 0.85rem; margin: 0.6rem 0; }
th, td { border: 1px solid #ddd; padding: 0.25rem 0.5rem; text-align: left; vertical-align: top; }
th { background: #f4f6f8; }
.figure { margin: 0.8rem 0; }
footer { margin-top: 3rem; color: #888; font-size: 0.8rem; }
"""


@dataclass
class Section:
    """One part of a report: a heading, paragraphs, tables and figures (in that order).

    Attributes
    ----------
    title : str
    paragraphs : list of str
        Plain text (escaped when rendered).
    tables : list of DataFrame
        Rendered with escaped cells.
    figures : list of plotly Figure
    """

    title: str
    paragraphs: list = field(default_factory=list)
    tables: list = field(default_factory=list)
    figures: list = field(default_factory=list)


def _table_html(frame: pd.DataFrame, max_rows: int = 200) -> str:
    shown = frame.head(max_rows)
    body = shown.to_html(index=False, escape=True, border=0, na_rep="", float_format=lambda v: f"{v:.4g}")
    if len(frame) > max_rows:
        body += f"<p>{len(frame) - max_rows} more row(s) not shown.</p>"
    return body


def render_report(title: str, sections: list[Section], *, subtitle: str = "") -> str:
    """Assemble sections into one self-contained HTML document.

    plotly.js is embedded with the first figure and reused by the others.

    Parameters
    ----------
    title : str
    sections : list of Section
    subtitle : str

    Returns
    -------
    str
        A complete HTML document.

    Examples
    --------
    >>> page = render_report("<b>x</b>", [Section("s", ["a & b"])])
    >>> "&lt;b&gt;x&lt;/b&gt;" in page and "a &amp; b" in page
    True
    """
    parts = [
        "<!DOCTYPE html>",
        "<html lang='en'><head><meta charset='utf-8'>",
        f"<title>{html.escape(title)}</title>",
        f"<style>{_STYLE}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
    ]
    if subtitle:
        parts.append(f"<p class='sub'>{html.escape(subtitle)}</p>")
    plotly_embedded = False
    for section in sections:
        parts.append(f"<h2>{html.escape(section.title)}</h2>")
        for paragraph in section.paragraphs:
            parts.append(f"<p>{html.escape(str(paragraph))}</p>")
        for table in section.tables:
            parts.append(_table_html(table))
        for figure in section.figures:
            fragment = figure.to_html(
                full_html=False,
                include_plotlyjs=not plotly_embedded,
                config={"displaylogo": False, "responsive": True},
            )
            plotly_embedded = True
            parts.append(f"<div class='figure'>{fragment}</div>")
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    parts.append(f"<footer>Made with CRAFT Explorer on {html.escape(stamp)}. Figures are interactive "
                 f"and work offline.</footer></body></html>")
    return "\n".join(parts)


def craft_report(model, X: pd.DataFrame, *, dataset_name: str, **options) -> str:
    """The standard report of one fit as one HTML document (see :func:`report_sections`).

    Returns
    -------
    str
        The HTML document.
    """
    sections = report_sections(model, X, **options)
    subtitle = f"Dataset: {dataset_name} · {int(model.cluster_sizes_.sum()):,} rows · K = {model.n_clusters_}"
    return render_report("CRAFT Explorer report", sections, subtitle=subtitle)


def report_sections(
    model,
    X: pd.DataFrame,
    *,
    params: dict,
    y=None,
    true_labels=None,
    true_mask=None,
    true_features=None,
    notes=(),
    max_rows: int = 400,
) -> list[Section]:
    """The standard report of one fit: parameters, result, figures and profiles.

    Parameters
    ----------
    model : craft.CRAFT
        Fitted.
    X : DataFrame
        The fitted columns.
    params : dict
        Parameters to list (e.g. ``FitParams.to_dict()``).
    y : array-like, optional
        True classes; adds the scores and the confusion matrix.
    true_labels, true_mask, true_features : optional
        Planted clusters and subspaces of a synthetic set.
    notes : sequence of str
        Extra sentences shown under the result.
    max_rows : int
        Rows drawn in the data heatmap.

    Returns
    -------
    list of Section
        Every figure comes from :mod:`craft.plots`, every number from the
        model's fitted attributes and inspection surface.
    """
    import numpy as np

    from . import metrics, plots
    from .metrics import align_clusters
    from .profiles import cluster_profiles

    result = pd.DataFrame(
        {
            "quantity": ["rows", "features used", "clusters K", "objective", "λ used", "ρ used", "iterations",
                         "converged"],
            "value": [f"{int(model.cluster_sizes_.sum()):,}", str(len(model.engine_features_)), str(model.n_clusters_),
                      f"{model.objective_:.6g}",
                      f"{model.lam_:.6g}", f"{model.rho_:.6g}", str(model.n_iter_), str(bool(model.converged_))],
        }
    )
    parameters = pd.DataFrame({"parameter": list(params), "value": [str(v) for v in params.values()]})
    summary = Section("Result", list(notes), [result])
    sections = [Section("Parameters", [], [parameters]), summary]
    match = None
    if true_labels is not None and true_mask is not None:
        match = align_clusters(np.asarray(true_labels), model.labels_)
    sections.append(Section(
        "Selected features per cluster",
        ["Blue cells: features a cluster selects; grey: features it does not select."],
        [],
        [plots.fig_feature_masks(model, true_mask=true_mask, true_features=true_features, cluster_match=match,
                                 order="natural" if true_mask is not None else "subspace")],
    ))
    heatmap = plots.fig_data_heatmap(model, X, max_rows=max_rows, y_true=true_labels, true_mask=true_mask,
                                     true_features=true_features)
    sections.append(Section("Data by cluster", [
        "Rows sorted by cluster (red lines). " + plots.HEATMAP_CAPTION,
    ], [], [heatmap]))
    sections.append(Section("Cluster sizes", [], [], [plots.fig_cluster_sizes(model)]))
    if y is not None:
        labelled = pd.Series(y).reset_index(drop=True)
        keep = labelled.notna().to_numpy()
        scores = metrics.evaluate(labelled[keep].astype(str).to_numpy(), model.labels_[keep])
        score_table = pd.DataFrame({"criterion": ["purity", "NMI", "ARI"],
                                    "value": [f"{scores['purity']:.4f}", f"{scores['nmi']:.4f}", f"{scores['ari']:.4f}"]})
        table = metrics.contingency(labelled[keep].astype(str).to_numpy(), model.labels_[keep])
        sections.append(Section("Evaluation against the label column", [], [score_table],
                                [plots.fig_confusion(table)]))
    sections.append(Section("Projection", [], [], [plots.fig_projection(plots.projection_frame(model, X))]))
    sections.append(Section("Iterations", [], [], [plots.fig_history(model)]))
    profiles = cluster_profiles(model)
    chosen = profiles[profiles["selected"]][["cluster", "feature", "kind", "reason"]]
    sections.append(Section("Why each feature was selected", [], [chosen]))
    return sections


def figure_count(document: str) -> int:
    """Number of Plotly figures in a report (for checks)."""
    return document.count('class="plotly-graph-div"')
