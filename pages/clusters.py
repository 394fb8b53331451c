"""Tune & see: the fit's masks, the data heatmap, sizes and profiles, a projection and the iterations."""

import streamlit as st

from craft import plots
from craft.profiles import cluster_summary
from explorer import cache, context, frame, mask_path, steering
from explorer.figure_export import chart
from explorer.ui import esc, fit_header, page_header, truth_line

ORDERS = mask_path.ORDERS
TABS = ["Feature masks", "Data heatmap", "Sizes & profiles", "Projection", "Iterations", "Mask path"]

ctx = frame.current()
# One compact header (title and status, numbers, notes folded) keeps the mask heatmap in view beside the sidebar's
# sliders; the agreement with the planted truth sits under the figures it judges.
status = page_header("Tune & see")
# A slider's new value shows its provisional fit at once (explorer.view); the refined one replaces it.
model = context.require_model(ctx, provisional=True)
assert ctx.data is not None  # require_model stopped the page otherwise
with status:
    context.refining(ctx)
fit_header(ctx)
if ctx.provisional:
    # While a refinement runs, the path of the settings left stops and none starts (it would take a core from
    # the refinement, and its time estimate reads the fit's).
    mask_path.release_others(ctx)
else:
    # The m path's grid is fitted in the background from here on: m moved to a value of it shows a fit already
    # made.
    mask_path.prefetch(ctx)
X = ctx.X
has_truth = ctx.data.true_mask is not None


@st.fragment
def masks_view() -> None:
    """Mask heatmap with its (view-only) ordering control."""
    left, right = st.columns([2, 1])
    default = cache.default_order(ctx.data)
    order = left.segmented_control("Feature order", list(ORDERS), default=default, format_func=ORDERS.__getitem__,
                                   key="mask_order", required=True, label_visibility="collapsed",
                                   help="The order of the features (columns) in the heatmap: a view only.")
    # Only synthetic sets know their planted clusters and subspaces: other tables get no switch at all.
    truth = has_truth and right.toggle("Beside the planted subspaces", True, key="mask_truth",
                                       help="Synthetic sets know their planted clusters and subspaces.")
    figure = cache.masks_figure(ctx.key, order, bool(truth and has_truth), model, ctx.data)
    chart(figure, key="fig_masks", name="craft_feature_masks", on_click=lambda point: steering.on_mask_click(model, point))
    steering.rerun_if_changed()
    steered = ctx.steered
    if steered is not None and steered.last is not None:
        st.container(key="steer_summary").caption(esc(f"Steered ({len(steered.applied)} action(s), listed under "
                                                      f"the figures). Last: {steered.last.summary}."))
    truth_line(ctx)
    st.caption("Each row is a cluster, each column a feature; blue = selected, grey = not selected "
               "(`feature_mask_`); a white star marks a pinned-on cell, a black cross a pinned-off one (`pins_`): "
               "click a cell to cycle its pin. Subspaces show as blocks when features are ordered by the first cluster that "
               "selects them.")


@st.fragment
def heatmap_view() -> None:
    """The paper's "Dataset | CRAFT" figure, live."""
    left, middle, right = st.columns([2, 1, 1])
    default = cache.default_order(ctx.data)
    order = left.segmented_control("Feature order", list(ORDERS), default=default, format_func=ORDERS.__getitem__,
                                   key="heat_order", required=True)
    max_rows = middle.select_slider("Rows drawn at most", [100, 200, 400, 800, 1500], value=400, key="heat_rows")
    truth = has_truth and right.toggle("Dataset | CRAFT", True, key="heat_truth",
                                       help="Draw the data with its planted clusters and subspaces on the left.")
    figure = cache.data_heatmap(ctx.key, order, int(max_rows), bool(truth and has_truth), model, X, ctx.data)
    chart(figure, key="fig_heatmap", name="craft_data_heatmap")
    truth_line(ctx)
    n = len(X)
    if n > max_rows:
        shown = (f"Showing {max_rows:,} of {n:,} rows, sampled in proportion to the cluster sizes, for display "
                 f"only: the fit used all {n:,} rows, sorted by cluster (red lines).")
    else:
        shown = f"All {n:,} rows, sorted by cluster (red lines)."
    st.caption(f"{shown} {plots.HEATMAP_CAPTION}")


@st.fragment
def profiles_view() -> None:
    """Cluster sizes and why each feature was selected."""
    table = cache.cluster_profiles(ctx.key, model)
    sizes_slot = st.container()
    left, right = st.columns([1, 2])
    cluster = left.selectbox("Cluster", list(range(model.n_clusters_)), key="profile_cluster",
                             format_func=lambda k: f"cluster {k} ({model.cluster_sizes_[k]:,} rows)")
    left.markdown(esc(cluster_summary(table, cluster)))
    rows = table[table["cluster"] == cluster]
    chosen = rows[rows["selected"]].sort_values(["kind", "rank"])
    selected = set(chosen["feature"])
    features = list(chosen["feature"]) + [f for f in rows["feature"] if f not in selected]
    feature = right.selectbox("Feature", features, key=f"profile_feature_{cluster}",
                              format_func=lambda f: f"{f} ({'selected' if f in selected else 'not selected'})")
    sizes, overview, detail = cache.profile_figures(ctx.key, cluster, feature, model, X, table)
    chart(sizes, key="fig_sizes", name="craft_cluster_sizes", container=sizes_slot)
    if feature is not None:
        right.markdown(esc(rows.loc[rows["feature"] == feature, "reason"].iloc[0]))
        chart(detail, key="fig_detail", name=f"craft_cluster_{cluster}_feature", container=right)
    chart(overview, key="fig_profile", name=f"craft_cluster_{cluster}_profile")
    st.caption("Each bar is the number the selection rule compared with its cut (dashed red line): the "
               "within-cluster variance of a numeric feature, and for a categorical feature the gain G_d − G_kd "
               "(fixed budget) or its share of G_d (approximate budget). Blue: selected; grey: not selected.")
    with st.expander("Every selected feature of this cluster, in words"):
        st.dataframe(chosen[["feature", "kind", "rank", "reason"]], hide_index=True)


@st.fragment
def projection_view() -> None:
    max_points = st.select_slider("Points drawn at most", [1000, 2000, 4000, 8000], value=4000, key="proj_points")
    frame = cache.projection(ctx.key, int(max_points), model, X)
    picked = frame["row"].isin(st.session_state.get(steering.PICKED, [])).to_numpy()
    chart(plots.fig_projection(frame, highlight=picked if picked.any() else None, highlight_name="picked"), key="fig_projection",
          name="craft_projection", on_click=steering.on_projection_click)
    steering.rerun_if_changed()
    n = frame.attrs.get("n_total", len(frame))
    st.caption("First two principal components of the encoded data (numbers standardized, levels one-hot)"
               + (f"; {len(frame):,} of {n:,} rows drawn (stratified by cluster), the fit used all." if len(frame) < n else "."))


@st.fragment
def views() -> None:
    """The tabs: switching them reruns only this part of the page, not the sidebar and the fit."""
    tabs = st.tabs(TABS, key="view", bind="query-params")
    for tab, view in zip(tabs[:4], [masks_view, heatmap_view, profiles_view, projection_view], strict=True):
        with tab:
            if tab.open:
                view()
    with tabs[4]:
        if tabs[4].open:
            chart(plots.fig_history(model), key="fig_history", name="craft_iterations")
            st.dataframe(plots.history_frame(model), hide_index=True)
            st.caption("The kept restart's iterations: the objective after each update and the number of clusters "
                       "after each pass (bars: clusters opened). λ-search fits are not shown.")
    with tabs[5]:
        if tabs[5].open:
            mask_path.section(ctx, where="tune")


views()
# Below the figures: the mask heatmap stays in view beside the sidebar's sliders at 1280 x 720.
steering.panel(ctx)
context.drawn(ctx)  # a provisional fit's refinement starts now
