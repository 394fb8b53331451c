"""Compare: CRAFT against the paper's baselines and the usual tools, on the current data."""

import streamlit as st

from craft import plots
from explorer import cache, context, frame
from explorer.figure_export import chart
from explorer.services.compare import METHODS
from explorer.ui import esc

ctx = frame.current()
st.title("Compare methods")
model = context.require_model(ctx)
assert ctx.data is not None  # require_model stopped the page otherwise
y = ctx.y
n_classes = int(y.dropna().nunique()) if y is not None else None

st.markdown(
    "Every method clusters the same columns into about **k** clusters. CRAFT uses the sidebar's parameters "
    "(its exact-k search); **DP-means** (Kulis & Jordan) starts at the global mean, **DP-means(R)** at a random "
    "point, **DP-RF** is DP-means(R) with CRAFT's feature selection (the paper's baselines; λ from the "
    "farthest-first heuristic, so K is only about k). **k-means** runs on standardized numbers and one-hot "
    "levels; **k-prototypes** (kmodes) mixes Euclidean and matching distances."
)
with st.form("compare_form"):
    methods = st.multiselect("Methods", list(METHODS), default=list(METHODS), key="compare_methods")
    left, right = st.columns(2)
    default_k = n_classes if n_classes and n_classes <= 50 else model.n_clusters_
    k = left.number_input("k", 1, 200, int(default_k), key="compare_k",
                          help="Defaults to the number of classes of the label column, else the current K.")
    seed = right.number_input("Seed", 0, 2**31 - 1, int(ctx.params.seed), key="compare_seed")
    run = st.form_submit_button("Run the comparison", type="primary")

results = st.session_state["results"]
if run:
    if not methods:
        st.warning("Choose at least one method.")
    else:
        scores = cache.compare(ctx.data_key, ctx.label, tuple(methods), int(k), int(seed), ctx.params,
                               ctx.data.table, ctx.schema, y)
        results["compare"] = ((ctx.data_key, ctx.label), ctx.params, scores)
stored = results.get("compare")
if stored is None or stored[0] != (ctx.data_key, ctx.label):
    st.info("Choose the methods and press **Run the comparison**.")
    st.stop()
scores = stored[2]
if stored[1] != ctx.params:
    st.caption("Computed with earlier CRAFT parameters; run again to update.")
if y is None:
    st.caption("No label column: purity, NMI and ARI are not available (choose one on the Data page).")
chart(plots.fig_compare(scores), key="compare_fig", name="craft_compare")
st.dataframe(
    scores, hide_index=True,
    column_config={
        "purity": st.column_config.NumberColumn(format="%.3f"), "nmi": st.column_config.NumberColumn("NMI", format="%.3f"),
        "ari": st.column_config.NumberColumn("ARI", format="%.3f"), "seconds": st.column_config.NumberColumn(format="%.2f"),
    },
)
failed = scores[scores["K"].isna()]
for row in failed.itertuples():
    st.warning(f"{esc(row.method)}: {esc(row.note)}")
