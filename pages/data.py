"""Data: pick an example or upload a table; see it, its column roles and missing values; change roles."""

import streamlit as st

from craft import CraftInputError
from craft.io import read_info
from craft.limits import table_limits
from explorer import context, distributed_table, frame, state
from explorer.services.loading import UPLOAD_TYPES, load_upload, reading_notes
from explorer.services.roles import column_report, k_advice
from explorer.ui import error, esc, note, number, show_table

PREVIEW_ROWS = 500
#: Columns the preview draws: a table's every column is a row of the roles table below it.
PREVIEW_COLUMNS = 200


def _on_upload() -> None:
    """Read the new file; switch to it when it can be clustered, else keep the data and say why."""
    uploaded = st.session_state.get("uploader")
    if uploaded is None:
        return
    try:
        state.accept_upload(uploaded.getvalue(), uploaded.name)
    except CraftInputError as problem:
        st.session_state["upload_error"] = f"Not loaded: {problem}"


def _on_reading_options() -> None:
    """Read the upload again with the missing-marker switch and the sheet chosen on this page."""
    upload = st.session_state.get("upload")
    if upload is None:
        return
    tokens_in_text = bool(st.session_state.get("upload_markers_in_text", False))
    sheet = st.session_state.get("upload_sheet")
    try:
        data = load_upload(upload["data"], upload["name"], tokens_in_text=tokens_in_text, sheet=sheet)
    except CraftInputError as problem:
        st.session_state["upload_error"] = f"Not loaded with these options: {problem}"
        return
    st.session_state["upload"] = dict(upload, tokens_in_text=tokens_in_text, sheet=sheet)
    st.session_state["_data"] = (data.key, data)
    st.session_state["upload_error"] = None
    state.reset_data_choices()


def _apply_roles() -> None:
    columns = st.session_state.get("roles_columns") or []
    role = st.session_state.get("roles_role")
    if not columns or role is None:
        return
    overrides = dict(st.session_state.get("role_overrides") or {})
    for column in columns:
        overrides[column] = role
    st.session_state["role_overrides"] = overrides
    st.session_state["roles_columns"] = []


def _reset_roles() -> None:
    st.session_state["role_overrides"] = {}


def _on_label() -> None:
    value = st.session_state.get("label_select")
    st.session_state["label_choice"] = state.NO_LABEL if value == "(none)" else value


ctx = frame.current()
st.title("Data")
opened = distributed_table.table_of(ctx.data) if ctx.data is not None else None

if ctx.data is not None:
    kind = {"synthetic": "Synthetic set of the paper", "bundled": "Bundled real dataset", "upload": "Your upload",
            distributed_table.KIND: "A table on a Dask cluster"}
    st.markdown(f"**{esc(ctx.data.name)}** — {kind[ctx.data.kind]}. {esc(ctx.data.description)}")
    if opened is not None:  # where it runs: the scheduler, the workers and their memory, the rows and parts
        st.info(opened.where(), icon=":material/hub:")
context.show_background_fit(ctx)
if ctx.model is not None:
    # A cluster table's model holds the sample's labels; its noise count is of every row.
    n_rows = opened.n_rows if opened is not None else len(ctx.model.labels_)
    st.success(
        f"Clustered into K = {ctx.model.n_clusters_} clusters (objective {number(ctx.model.objective_)})"
        + (f"; **{ctx.model.n_noise_:,} of {n_rows:,} rows "
           f"({ctx.model.n_noise_ / n_rows:.0%}) fit no cluster** (noise, −1). "
           if ctx.model.n_noise_ else ". ") +
        "Tune the parameters in the sidebar; see the result on the next pages.", icon=":material/check_circle:",
    )
    st.page_link("pages/clusters.py", label="Tune & see the clusters", icon=":material/grid_view:")
    if ctx.data is not None and ctx.data.kind == "upload" and st.session_state.get("k_advice") and ctx.params.size_by == "k":
        note(k_advice(table=ctx.data.table, label=ctx.label, k=ctx.params.k))
elif ctx.cancelled:
    context.offer_refit(ctx)
elif ctx.problem:
    error(ctx.problem)

limit = st.get_option("server.maxUploadSize")
uploading = (ctx.data is not None and ctx.data.kind == "upload") or bool(st.session_state.get("upload_link"))
with st.expander("Upload your own table", expanded=uploading):
    st.file_uploader(
        "CSV, TSV, Parquet or Excel",
        type=list(UPLOAD_TYPES),
        key="uploader",
        on_change=_on_upload,
        help=f"One row per item, one column per feature, a header row. Up to {limit} MB per file.",
    )
    st.caption(
        f"Files up to {limit} MB (the server's upload limit, server.maxUploadSize in .streamlit/config.toml); "
        f"tables of {table_limits().describe()} (limits that follow this machine's free memory). "
        "Uploaded data stay in this browser session; they are not part of the shareable URL."
    )
if st.session_state.get("upload_error"):
    error(st.session_state["upload_error"])
    if ctx.data is not None:
        note(f"Still showing {ctx.data.name!r}.")

if ctx.data is None:
    st.stop()

data = ctx.data
table = data.table
st.subheader("Preview")
shown = min(PREVIEW_ROWS, len(table))
shown_columns = min(PREVIEW_COLUMNS, table.shape[1])
parts = ([f"the first {shown:,} rows"] if shown < len(table) else []) + (
    [f"the first {shown_columns} columns (every column is listed under *Columns* below)"]
    if shown_columns < table.shape[1] else [])
size = (f"A uniform sample of {len(table):,} of the table's {opened.n_rows:,} rows" if opened is not None
        else f"{len(table):,} rows")
st.caption(f"{size} × {table.shape[1]} columns" + ("; " + " and ".join(parts) + " are shown." if parts else "."))
show_table(table.iloc[:PREVIEW_ROWS, :PREVIEW_COLUMNS], height=280)

if data.kind == "upload":
    info = read_info(table)
    with st.expander("How the file was read: missing markers, blank rows, sheet", expanded=bool(
            info and (info.kept_as_text or info.read_as_missing or info.blank_rows or len(info.sheets) > 1))):
        for line in reading_notes(table):
            st.markdown("- " + esc(line))
        upload = st.session_state.get("upload") or {}
        if info is not None and info.format in ("text", "excel"):
            st.session_state["upload_markers_in_text"] = bool(upload.get("tokens_in_text", False))
            st.checkbox("Also read the missing markers as missing in text columns", key="upload_markers_in_text",
                        on_change=_on_reading_options,
                        help="Off: in a text column, 'None', 'NA' or '?' are answers and stay as written. On: "
                             "they are missing values, as pandas reads them.")
        if info is not None and len(info.sheets) > 1:
            st.session_state["upload_sheet"] = info.sheet
            st.selectbox("Sheet", list(info.sheets), key="upload_sheet", on_change=_on_reading_options,
                         help="The workbook's sheets; the first one is read unless you pick another.")

st.subheader("Columns: roles and missing values")
schema = ctx.schema if ctx.schema is not None else data.schema
report = column_report(table, schema, ctx.label, ctx.params.missing)
counts = report["role"].value_counts()
st.caption(
    f"{counts.get('numeric', 0)} numeric, {counts.get('categorical', 0)} categorical, "
    f"{counts.get('ignored', 0)} ignored" + (", 1 label column (evaluation only, never fitted)" if ctx.label else "")
    + f". {int(report['missing'].sum()):,} missing cells in {int((report['missing'] > 0).sum())} column(s)."
)
st.dataframe(
    report,
    hide_index=True,
    column_config={
        "missing_share": st.column_config.ProgressColumn("missing share", format="percent", min_value=0, max_value=1),
        "reason": st.column_config.TextColumn("why this role", width="large"),
        "missing_handling": st.column_config.TextColumn("what is done with missing cells", width="medium"),
        "markers": st.column_config.TextColumn("missing markers in the file", width="medium"),
    },
)

left, right = st.columns(2)
with left:
    with st.form("roles_form"):
        st.markdown("**Change roles**")
        st.multiselect("Columns", list(table.columns), key="roles_columns")
        st.radio("New role", ["numeric", "categorical", "ignored"], key="roles_role", horizontal=True)
        st.form_submit_button("Apply", on_click=_apply_roles)
    overrides = st.session_state.get("role_overrides") or {}
    if overrides:
        st.caption("Changed by you: " + esc(", ".join(f"{c} → {r}" for c, r in overrides.items())))
        st.button("Reset roles to the suggested ones", on_click=_reset_roles, key="roles_reset")
with right:
    choices = ["(none)"] + list(table.columns)
    current = ctx.label if ctx.label in table.columns else "(none)"
    # Set from the session on every run: after a new upload the browser would
    # otherwise keep showing the previous table's label column.
    st.session_state["label_select"] = current
    st.selectbox(
        "Label column (evaluation only)", choices, key="label_select",
        on_change=_on_label,
        help="Known classes used only to score the clustering (purity, NMI, ARI); never used for fitting.",
    )
    st.caption(f"Suggested: {esc(data.label or 'none')} — {esc(data.label_reason)}.")
if ctx.notes:
    for message in ctx.notes:
        note(message)
