"""Figures of CRAFT results as pure functions returning Plotly figures.

Every figure has a data-preparation function beside it (``mask_frame``,
``heatmap_panel``, ``projection_frame``, ``history_frame``...), so what is
drawn can be tested without a browser, and the figures work in a notebook
as well as in the app. Nothing here imports Streamlit.

One module per family of figures, their shared styling in one private module
(as :mod:`plotly.figure_factory` keeps one family per file):

==========================  ==========================================================
:mod:`craft.plots.masks`      the feature mask (clusters x features)
:mod:`craft.plots.heatmap`    the data heatmap (rows sorted by cluster)
:mod:`craft.plots.fit`        sizes, margins, profiles, projection, history, a row's explanation
:mod:`craft.plots.compare`    confusion matrix, methods side by side, sweeps, the ρ demonstration
:mod:`craft.plots.cards`      a cluster card (:mod:`craft.cards`)
:mod:`craft.plots.stability`  how much to trust a partition (:mod:`craft.stability`)
:mod:`craft.plots.mask_path`  the mask path along a knob (:mod:`craft.path`)
``craft.plots._style``        colours, fonts, escaping, label measurement, axes, legends, layout
==========================  ==========================================================

Every figure function and public constant is importable from here
(``craft.plots.fig_mask_path``, ``craft.plots.NOISE_COLOR``); the constants
of one family only (``MAX_LEVELS``, ``MAX_FEATURES``...) stay in its module.

Conventions
-----------
* ``model`` is a fitted :class:`craft.CRAFT`; ``X`` is the table it was
  fitted on (its used columns, see :func:`explorer.services.fitted_X (the app)`).
* Clusters are called by their number in ``labels_`` (0..K-1).
* Large tables are downsampled *for display only*; the figures say so in
  their titles and the sampling is stratified by cluster.
"""

from __future__ import annotations

# _style first: it holds the guard that names the missing ``plots`` extra.
from ._style import (
    CUT_COLOR,
    LABEL_GAP_PX,
    NOISE_COLOR,
    NOISE_NAME,
    SELECTED_COLOR,
    SELECTED_NAME,
    SELECTED_SCALE,
    SELECTION_COLORSCALE,
    TICK_FONT_PX,
    TITLE_LINE_PX,
    UNSELECTED_COLOR,
    UNSELECTED_NAME,
    UNSELECTED_SCALE,
    cluster_colors,
    escape_labels,
    label_px,
)
from .cards import fig_card_levels, fig_card_numeric
from .compare import fig_compare, fig_confusion, fig_rho_demo, fig_sweep, rho_demo_frame, sweep_summary
from .fit import (
    PANEL_TITLE_CHARS,
    SVG_MAX_POINTS,
    fig_cluster_sizes,
    fig_explanation,
    fig_feature_detail,
    fig_history,
    fig_margins,
    fig_profile_overview,
    fig_projection,
    history_frame,
    margin_frame,
    profile_axis_title,
    projection_frame,
)
from .heatmap import (
    HEATMAP_CAPTION,
    MISSING_COLOR,
    MISSING_NAME,
    MODAL_VALUE,
    OTHER_LEVEL_VALUE,
    HeatmapPanel,
    fig_data_heatmap,
    heatmap_panel,
    modal_codes,
    sample_rows,
    spaced_labels,
)
from .mask_path import fig_mask_path, fig_path_scrubber
from .masks import PIN_MARKS, fig_feature_masks, fig_mask_panels, mask_frame, subspace_order
from .stability import fig_jaccard, fig_k_evidence, fig_selection_frequency

__all__ = [
    # colours, fonts and labels (_style)
    "SELECTED_COLOR", "UNSELECTED_COLOR", "SELECTION_COLORSCALE", "SELECTED_SCALE", "UNSELECTED_SCALE", "TICK_FONT_PX",
    "SELECTED_NAME", "UNSELECTED_NAME", "CUT_COLOR", "NOISE_COLOR", "NOISE_NAME", "LABEL_GAP_PX", "TITLE_LINE_PX",
    "cluster_colors", "escape_labels", "label_px",
    # masks
    "subspace_order", "mask_frame", "PIN_MARKS", "fig_feature_masks", "fig_mask_panels",
    # heatmap
    "MODAL_VALUE", "OTHER_LEVEL_VALUE", "MISSING_COLOR", "MISSING_NAME", "HEATMAP_CAPTION", "sample_rows", "HeatmapPanel",
    "modal_codes", "heatmap_panel", "spaced_labels", "fig_data_heatmap",
    # fit
    "fig_cluster_sizes", "margin_frame", "fig_margins", "PANEL_TITLE_CHARS", "profile_axis_title", "fig_profile_overview",
    "fig_feature_detail", "projection_frame", "SVG_MAX_POINTS", "fig_projection", "history_frame", "fig_history",
    "fig_explanation",
    # compare
    "fig_confusion", "fig_compare", "sweep_summary", "fig_sweep", "rho_demo_frame", "fig_rho_demo",
    # cards, stability, mask path
    "fig_card_numeric", "fig_card_levels",
    "fig_selection_frequency", "fig_jaccard", "fig_k_evidence",
    "fig_mask_path", "fig_path_scrubber",
]
