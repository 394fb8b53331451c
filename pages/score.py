"""Score new rows: a second table placed in the clusters of the current fit or of a saved model.

Every number shown is :meth:`craft.CRAFT.assign`'s: each row's nearest
cluster, its cost, its cost margin to the next-nearest cluster and whether it
fits no cluster (CRAFT's own test for opening a cluster), and the cells
holding values the fit never saw (a row of nothing else fits no cluster). The table is read
by the same reader as the Data page's upload; a model file is read by
:func:`craft.load`, which never unpickles.
"""

import functools

import streamlit as st

from craft import CraftInputError, plots
from craft.export import to_csv_bytes
from craft.io import table_fingerprint
from explorer import cache, context, distributed_table, frame, steering
from explorer.figure_export import chart
from explorer.services.loading import UPLOAD_TYPES, file_stem
from explorer.services.scoring import MODEL_FILE_TYPES, load_saved_model, scored_cells
from explorer.ui import cluster_write, error, esc, note, show_table

CURRENT, SAVED = "The current fit", "A saved model file"
#: Rows of the "fits no cluster" list drawn on the page; its download holds all of them.
LISTED_ROWS = 1_000


def _keep_upload(widget: str, slot: str) -> None:
    """Keep an uploaded file in the session (the uploader forgets it when the page changes)."""
    uploaded = st.session_state.get(widget)
    if uploaded is None:
        st.session_state.pop(slot, None)
        return
    content = uploaded.getvalue()
    st.session_state[slot] = dict(name=uploaded.name, data=content, sha=table_fingerprint(content))


ctx = frame.current()
st.title("Score new rows")
st.markdown("Upload a second table with the columns the model was fitted on: each row goes to its nearest "
            "cluster, with its **cost margin** (how much more the next-nearest cluster would cost; near 0, the "
            "row is almost a tie between two clusters) and whether it **fits no cluster**: its cost to every "
            "cluster exceeds λ + D·F₀, the cost of opening a cluster of its own, so CRAFT would have opened a new "
            "cluster for it.")

source = st.radio("Score with", [CURRENT, SAVED], key="score_with", horizontal=True,
                  captions=["the clustering of this session (sidebar)", "a model downloaded from the Export page"])
limit = st.get_option("server.maxUploadSize")
if source == SAVED:
    st.file_uploader("Saved model file (.craft)", type=list(MODEL_FILE_TYPES), key="score_model_uploader",
                     on_change=_keep_upload, args=("score_model_uploader", "score_model"),
                     help=f"The model file of the Export page, up to {limit} MB as every upload. It holds numbers "
                          "and text only and is never run as code.")
st.file_uploader("Table of rows to score: CSV, TSV, Parquet or Excel", type=list(UPLOAD_TYPES), key="score_uploader",
                 on_change=_keep_upload, args=("score_uploader", "score_table"),
                 help=f"A header row and one row per item, read as the Data page reads a table. Up to {limit} MB.")
held_table = st.session_state.get("score_table")
held_model = st.session_state.get("score_model") if source == SAVED else None
if held_table is not None:
    st.caption(f"Rows to score: {esc(held_table['name'])}" + (f"; model: {esc(held_model['name'])}" if held_model else "")
               + ". Uploaded files stay in this browser session.")

if source == SAVED:
    if held_model is None:
        note("Upload a model file saved from the Export page (and a table of rows to score).")
        st.stop()
    try:
        model = load_saved_model(held_model["data"], held_model["name"])
    except CraftInputError as problem:
        error(str(problem))
        st.stop()
    model_key = f"model:{held_model['sha']}"
else:
    model = context.require_model(ctx)
    model_key = ctx.key
st.caption(f"The model: K = {model.n_clusters_} clusters on {len(model.feature_names_in_)} features "
           f"({esc(', '.join(str(c) for c in model.feature_names_in_[:12]))}"
           + (", …" if len(model.feature_names_in_) > 12 else "") + ").")

opened = distributed_table.table_of(ctx.data) if ctx.data is not None else None
if opened is not None:
    with st.expander("Score a table on the cluster (a Parquet folder, a glob of CSV or Parquet files)", expanded=True):
        st.caption("Read and checked as the cluster table was; the workers score it part by part and write the "
                   "columns of `craft predict` (row, cluster, cost, margin, fits_no_cluster, nothing_known, "
                   "unseen_cells, unseen_columns) as a Parquet folder. Paths are the workers' (on a remote cluster: "
                   "their file system, or a URL such as s3://…).")
        where_from = st.text_input("Table to score", value=opened.spec.source, key="cluster_score_source")
        where_to = st.text_input("Folder to write", value=str(opened.spec.source).rstrip("/") + "_scored",
                                 key="cluster_score_out")
        cluster_write("Score on the cluster", "cluster_score", "Scoring on the cluster…",
                      functools.partial(distributed_table.score_folder, opened, model, where_from, where_to),
                      lambda written: f"Scored {written:,} rows into {where_to!r}.")

if held_table is None:
    note("Upload a table of rows to score.")
    st.stop()
try:
    rows = cache.rows_to_score(held_table["sha"], held_table["name"], held_table["data"])
    scoring = cache.scoring(model_key, held_table["sha"], model, rows)
except CraftInputError as problem:
    error(f"{held_table['name']!r} cannot be scored: {problem}")
    st.stop()

assignment = scoring.assignment
n_rows, n_none = len(assignment), scoring.n_no_cluster
stem = file_stem(held_table["name"])
figure_key = f"{model_key}|{held_table['sha']}"


def original_cells(scored: dict = held_table):
    """The table's cells as its file writes them: read (once) where they are listed or downloaded."""
    return cache.cells_as_written(scored["sha"], scored["name"], rows, scored["data"])


if scoring.left_out:
    note("Not features of the model, so left out of the scoring (as the fit left out its label and ignored "
         "columns); they stay in the downloads: " + ", ".join(scoring.left_out) + ".")
for message in scoring.notes:
    note(message)
unseen_rows = scoring.unseen_rows
columns = st.columns(4)
columns[0].metric("Rows scored", f"{n_rows:,}")
columns[1].metric("Clusters", model.n_clusters_)
columns[2].metric("Fit no cluster", f"{n_none:,}", help="Rows whose cost to every cluster exceeds λ + D·F₀, and rows "
                                                         "with nothing known (every cell missing or never seen in the fit).")
columns[3].metric("Rows with values never seen in the fit", f"{int(unseen_rows.sum()):,}",
                  help="Rows with at least one cell whose value the fit never saw: such a cell costs the same in "
                       "every cluster, so the row is placed by its other cells only.")

left, right = st.columns(2)
sizes = cache.figure(figure_key, "scored sizes", lambda: plots.fig_cluster_sizes(
    scoring.counts, n_noise=scoring.n_noise,
    title=f"Where the {n_rows:,} rows go" + (" (noise: fit no cluster)" if scoring.n_noise else " (nearest cluster)")))
chart(sizes, key="score_sizes", name=f"{stem}_craft_scored_sizes", container=left)
# A row with nothing known has no margin (NaN): no cluster is nearer than another.
margins = cache.figure(figure_key, "margins", lambda: plots.fig_margins(
    assignment[~assignment["nothing_known"].to_numpy()], n_clusters=model.n_clusters_))
chart(margins, key="score_margins", name=f"{stem}_craft_margins", container=right)

st.subheader("Rows that fit no cluster")
if n_none == 0:
    st.success("Every row fits a cluster: none costs more than opening a cluster of its own.",
               icon=":material/check_circle:")
else:
    outliers = scored_cells(original_cells(), assignment, assignment["fits_no_cluster"].to_numpy())
    st.caption(f"{n_none:,} of {n_rows:,} rows, with their cells as the file writes them"
               + (f"; the first {LISTED_ROWS:,} are listed, the download holds all" if n_none > LISTED_ROWS else "")
               + (". craft_cluster is -1: the model was fitted with noise=True, which leaves such rows in no "
                  "cluster." if scoring.n_noise else ". craft_cluster is the nearest cluster all the same."))
    # The assignment's columns first: after a wide table's cells they were cut at the right edge.
    craft_columns = [name for name in outliers.columns if name not in original_cells().columns]
    shown = outliers[craft_columns + [name for name in outliers.columns if name not in craft_columns]]
    show_table(shown.iloc[:LISTED_ROWS], key="score_outliers", hide_index=True)
    st.download_button("Rows that fit no cluster (CSV)", lambda: to_csv_bytes(outliers),
                       file_name=f"{stem}_craft_no_cluster.csv", mime="text/csv", key="dl_no_cluster")
st.subheader("Values never seen in the fit")
if not unseen_rows.any():
    st.success("Every categorical cell holds a level the fit saw.", icon=":material/check_circle:")
else:
    by_column = scoring.unseen_by_column()
    nothing = scoring.n_nothing_known
    warning_text = (f"{int(unseen_rows.sum()):,} of {n_rows:,} rows hold {int(by_column.sum()):,} cells with values the "
                    f"fit never saw, in {len(by_column):,} column(s): {esc(', '.join(map(str, by_column.index[:10])))}"
                    + (", …" if len(by_column) > 10 else "") + ". Such a cell costs the same in every cluster, so the "
                    "row is placed by its other cells only.")
    if nothing:
        warning_text += (f" {nothing:,} row(s) have nothing known (every cell missing or never seen): they fit no "
                         "cluster, their margin is empty, and their craft_cluster is no evidence.")
    st.warning(warning_text, icon=":material/help:")
    show_table(by_column.reset_index(), key="score_unseen_columns", hide_index=True)
    unseen_cells = scored_cells(original_cells(), assignment, unseen_rows)
    st.download_button("Rows with values never seen in the fit (CSV)", lambda: to_csv_bytes(unseen_cells),
                       file_name=f"{stem}_craft_unseen.csv", mime="text/csv", key="dl_unseen")
st.subheader("Why a row is where it is")
steering.show_explanation(model, rows[[c for c in rows.columns if c in set(map(str, model.feature_names_in_))]]
                          .iloc[:LISTED_ROWS], key="score_explain", name=f"{stem}_craft_explanation")
st.download_button("Every row with its cluster, cost, margin and fit (CSV)",
                   lambda: to_csv_bytes(scored_cells(original_cells(), assignment)), file_name=f"{stem}_craft_scored.csv",
                   mime="text/csv", key="dl_scored", type="primary")
