"""Evaluate: purity, NMI, ARI and the confusion matrix against a label column; how much to trust the partition."""

import numpy as np
import pandas as pd
import streamlit as st

from craft import metrics, plots
from craft import CraftInputError
from explorer import context, distributed_table, evidence, frame
from explorer.figure_export import chart
from explorer.ui import error, esc, fit_summary, note, number

MAX_CLASSES = 200

ctx = frame.current()
st.title("Evaluate")
model = context.require_model(ctx)
fit_summary(ctx)

y = ctx.y
if y is None:
    st.info(
        "This table has no label column, so purity, NMI and ARI cannot be computed. If one of its columns holds "
        "known classes, choose it as the label column on the Data page (it is then left out of the fit). "
        "Meanwhile, here are the objective and the cluster sizes.",
        icon=":material/info:",
    )
    st.page_link("pages/data.py", label="Choose a label column", icon=":material/table_view:")
    st.metric("Objective", number(model.objective_))
    chart(plots.fig_cluster_sizes(model), key="eval_sizes", name="craft_cluster_sizes")
    chart(plots.fig_history(model), key="eval_history", name="craft_iterations")
    evidence.trust_section(ctx)
    st.stop()

labels = pd.Series(y).reset_index(drop=True)
keep = labels.notna().to_numpy()
if not keep.all():
    note(f"{int((~keep).sum())} row(s) have no label and are left out of the evaluation.")
classes = labels[keep].astype(str).to_numpy()
clusters = np.asarray(model.labels_)[keep]
n_classes = len(np.unique(classes))
scores = metrics.evaluate(classes, clusters)
opened = distributed_table.table_of(ctx.data) if ctx.data is not None else None
if opened is not None and ctx.label is not None:  # a cluster table: the scores of every row, not of the sample
    try:
        scores = distributed_table.metrics_of(opened, model, ctx.label, ctx.key)
    except CraftInputError as problem:
        error(str(problem))
        st.stop()
    st.caption(f"Purity, NMI and ARI: from every row on the cluster ({opened.n_rows:,}). The confusion matrix, the "
               f"per-cluster table and the reference purity: from the uniform sample of {len(labels):,} rows.")

st.markdown(f"Scored against the label column **{esc(ctx.label)}** ({n_classes} classes, {int(keep.sum()):,} rows"
            + (" of the sample" if opened is not None else "") + ").")
left, middle, right, last = st.columns(4)
left.metric("Purity", f"{scores['purity']:.3f}", help="Share of rows in their cluster's majority class.")
middle.metric("NMI", f"{scores['nmi']:.3f}", help="Normalised mutual information (geometric normalisation, as the paper).")
right.metric("ARI", f"{scores['ari']:.3f}", help="Adjusted Rand index: 1 = same partition, 0 = chance.")
last.metric("Clusters / classes", f"{model.n_clusters_} / {n_classes}")
share = pd.Series(classes).value_counts(normalize=True).iloc[0]
st.caption(f"For reference, one cluster holding every row has purity {share:.3f} (the majority class share).")

if n_classes > MAX_CLASSES:
    note(f"The label column has {n_classes} distinct values; the confusion matrix is drawn for at most "
         f"{MAX_CLASSES}. Is it really a class column?")
    evidence.trust_section(ctx)
    st.stop()
table = metrics.contingency(classes, clusters)
chart(plots.fig_confusion(table), key="eval_confusion", name="craft_confusion")
per_cluster = pd.DataFrame({
    "cluster": table.index,
    "rows": table.sum(axis=1).to_numpy(),
    "majority class": [str(table.columns[i]) for i in table.to_numpy().argmax(axis=1)],
    "majority share": table.max(axis=1).to_numpy() / np.maximum(table.sum(axis=1).to_numpy(), 1),
})
st.dataframe(per_cluster, hide_index=True,
             column_config={"majority share": st.column_config.ProgressColumn(format="percent", min_value=0, max_value=1)})
evidence.trust_section(ctx)
