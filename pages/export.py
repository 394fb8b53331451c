"""Export: labels, masks, parameters, an HTML report, and a link that reopens this view."""

import functools

import streamlit as st

from craft import plots
from craft.export import labels_csv, masks_csv, params_json
from explorer import cache, context, distributed_table, frame, state
from explorer.figure_export import download_buttons, server_export_available
from explorer.services.loading import file_stem
from explorer.services.roles import labels_for_evaluation
from explorer.ui import cluster_write, esc

ctx = frame.current()
st.title("Export")
model = context.require_model(ctx)
data = ctx.data
assert data is not None and ctx.outcome is not None  # require_model stopped the page otherwise
stem = file_stem(data.name)

st.markdown("The labels CSV holds your cells as the file wrote them (missing markers, numbers such as 1,50 or "
            "12,345 included) plus the cluster. Text cells that a spreadsheet would run as a formula (starting "
            "with =, +, −, @ or a look-alike, also after a space or a line break) get a leading quote; numbers stay "
            "numbers.")
opened = distributed_table.table_of(data)
if opened is not None:
    st.markdown(f"**Labels of every row ({opened.n_rows:,}).** Written by the workers as a Parquet folder (columns "
                "row and cluster; row counts from 0 in the table's order, part by part). The path is the workers' "
                "(on a remote cluster: their file system, or a URL such as s3://…). The CSV downloads below hold "
                f"the uniform sample of {len(data.table):,} rows only.")
    target = st.text_input("Folder to write", value=str(opened.spec.source).rstrip("/") + "_labels",
                           key="cluster_labels_out")
    cluster_write("Write the labels on the cluster", "cluster_labels", "The workers write the labels…",
                  functools.partial(distributed_table.write_labels, opened, model, target),
                  lambda written: f"Wrote the labels of {written:,} rows into {target!r}.", primary=True)
upload = st.session_state.get("upload") if data.kind == "upload" else None
cells = cache.original_cells(data.key, data, upload["data"] if upload else None)
left, right = st.columns(2)
with left:
    st.download_button("Labels (CSV, the original rows + their cluster)" if opened is None else
                       "Labels of the sample (CSV, its rows + their cluster)", labels_csv(cells, model.labels_),
                       file_name=f"{stem}_craft_labels.csv", mime="text/csv", key="dl_labels")
    if model.n_noise_:
        noise = model.labels_ < 0
        st.download_button(f"Noise rows (CSV, the {model.n_noise_:,} original rows that fit no cluster)",
                           labels_csv(cells[noise], model.labels_[noise]), file_name=f"{stem}_craft_noise.csv",
                           mime="text/csv", key="dl_noise")
    st.download_button("Feature masks (CSV, clusters × features)", masks_csv(model),
                       file_name=f"{stem}_craft_masks.csv", mime="text/csv", key="dl_masks")
    # A label that fits the half-width column at 1280 px (the longer one was cut: "…or craft.lo…").
    st.download_button("Model (.craft file, for Score or craft.load)",
                       cache.model_file(ctx.key, model), file_name=f"{stem}_craft_model.craft",
                       mime="application/zip", key="dl_model",
                       help="Score new rows with it on the Score page, or load it with craft.load in Python. "
                            "The parameters, the column roles and levels, and the fitted clusters, as JSON and "
                            "NumPy arrays in a zip archive: data only, never code (docs/model-format.md).")
    result = dict(n_clusters=model.n_clusters_, objective=model.objective_, lam_used=model.lam_, rho_used=model.rho_,
                  n_iter=model.n_iter_, converged=bool(model.converged_), cluster_sizes=model.cluster_sizes_,
                  n_noise=model.n_noise_)
    source = dict(name=data.name, kind=data.kind, fingerprint=data.key,
                  rows=opened.n_rows if opened is not None else len(data.table), label=ctx.label,
                  url_query=state.share_query(ctx.shareable) or None)
    st.download_button("Parameters (JSON)", params_json(ctx.params.to_dict(), dataset=source, schema=ctx.schema,
                                                        result=result),
                       file_name=f"{stem}_craft_params.json", mime="application/json", key="dl_params")
with right:
    st.markdown("**Report.** One self-contained HTML file with the figures (interactive, works offline), the "
                "parameters and why each feature was selected.")
    report_key = f"{ctx.key}|{ctx.label}"
    held = st.session_state.get("report")
    if held is None or held[0] != report_key:
        if st.button("Build the HTML report", key="build_report", type="primary"):
            y, _ = labels_for_evaluation(data.table, ctx.label)
            document = cache.html_report(ctx.key, ctx.label, data.name, model, ctx.X, ctx.params.to_dict(), y,
                                         data, tuple(ctx.outcome.notes))
            st.session_state["report"] = (report_key, document)
            held = st.session_state["report"]
    if held is not None and held[0] == report_key:
        st.download_button("Download the HTML report", held[1].encode("utf-8"), file_name=f"{stem}_craft_report.html",
                           mime="text/html", key="dl_report")
        st.caption(f"{len(held[1]) / 1e6:.1f} MB (plotly.js is embedded once).")

st.subheader("Figures")
if server_export_available():
    st.markdown("Every figure of this fit as SVG (vector: slides, papers) or PNG; each image is made when its "
                "button is clicked. The same buttons sit under every figure of the app.")
else:
    st.markdown("Static export needs kaleido and a Chromium on the server; every figure's toolbar camera saves "
                "it as SVG in the browser.")
has_truth = data.true_mask is not None
order = "natural" if has_truth else "subspace"
# Each figure is made when one of its buttons is clicked: drawing them all for this list cost as much as the
# pages that show them (seconds on a wide table).
figures = {
    "Feature masks" + (" beside the planted subspaces" if has_truth else ""):
        ("craft_feature_masks", lambda: cache.masks_figure(ctx.key, order, has_truth, model, data)),
    "Data heatmap (Dataset | CRAFT)" if has_truth else "Data heatmap":
        ("craft_data_heatmap", lambda: cache.data_heatmap(ctx.key, order, 400, has_truth, model, ctx.X, data)),
    "Cluster sizes": ("craft_cluster_sizes", lambda: plots.fig_cluster_sizes(model)),
    "Objective and K per iteration": ("craft_iterations", lambda: plots.fig_history(model)),
    "PCA projection": ("craft_projection", lambda: plots.fig_projection(cache.projection(ctx.key, 4000, model, ctx.X))),
}
for title, (name, make) in figures.items():
    row = st.columns([3, 2])
    row[0].markdown(f"**{title}**")
    download_buttons(make, f"{stem}_{name}", key=f"export_{name}", container=row[1])

st.subheader("Share this view")
# Every page of the app (app.py's PAGES, in its order), keyed by url_path. The first page is also reached as ""
# (Streamlit's url_path of the default page): both open the Data page.
pages = {"data": "Data", "clusters": "Tune & see", "cards": "Cluster cards", "evaluate": "Evaluate",
         "teach": "Teach", "compare": "Compare", "whatif": "What-if", "score": "Score new rows", "export": "Export"}
last = st.session_state.get("last_page")
last = "data" if last == "" else last
target = st.selectbox("The link opens", list(pages), index=list(pages).index(last) if last in pages else 0,
                      format_func=pages.__getitem__, key="share_page",
                      help="By default the page you looked at before this one (with its open tab).")
query = state.share_query(ctx.shareable, page=target)
if ctx.shareable:
    st.markdown("The dataset and every parameter are in the address (only values that differ from the "
                "defaults); this link reopens the same fit on the chosen page" +
                (", on the same tab:" if target == "clusters" and st.session_state.get("view") else ":"))
    st.code(state.share_link(query, target, current="export"), language=None, wrap_lines=True)
else:
    st.markdown(f"Uploaded data ({esc(data.name)}) cannot travel in a link: share the file and the parameters "
                "JSON instead. A link to this view would open with a message asking for the file again.")
