"""Tables into the app: the bundled examples and uploaded files, read into :class:`LoadedData`.

A table comes with its suggested column roles, its label column and (for
synthetic sets) the planted subspaces; an upload is read once, by
:func:`read_upload`, for the table to cluster and for the rows to score, and
its cells can be given back as the file writes them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from craft import datasets, synthetic
from craft.exceptions import CraftInputError
from craft.io import read_info, read_table, table_fingerprint
from craft.limits import table_limits
from craft.schema import Schema, infer_schema

from ._common import _markers, _sentence, _with_label

#: Name of the label column added to synthetic tables (the planted cluster).
SYNTHETIC_LABEL = "true_cluster"

#: Column names an uploaded table's label column is recognised by.
_LABEL_NAMES = ("class", "label", "target", "y", "cluster", "true_cluster")


@dataclass
class LoadedData:
    """A table ready for the app, with everything known about it.

    Attributes
    ----------
    key : str
        Fingerprint of the content, for cache keys: ``"bundled:<name>"``,
        ``"synthetic:<name>:<n>:<seed>"`` or ``"upload:<sha256>"``.
    name : str
        Display name.
    kind : {"bundled", "synthetic", "upload"}
    table : DataFrame
        All columns, the label column included.
    schema : Schema
        Suggested roles of every column; the label column is ``ignored`` with
        a reason that says it is the label.
    label : str or None
        Suggested label column (evaluation only).
    true_mask : ndarray of bool or None
        Planted subspaces, (n_true_clusters, n_features), for synthetic sets.
    mask_features : list of str or None
        Column names of ``true_mask``.
    true_labels : ndarray of int or None
        Planted cluster of every row (0..T-1), the rows of ``true_mask``.
    description : str
    label_reason : str
        Why ``label`` was chosen (or why there is none).
    """

    key: str
    name: str
    kind: str
    table: pd.DataFrame
    schema: Schema
    label: str | None
    true_mask: np.ndarray | None = None
    mask_features: list[str] | None = None
    true_labels: np.ndarray | None = None
    description: str = ""
    label_reason: str = ""


def example_names() -> dict[str, tuple[str, str]]:
    """The bundled examples, synthetic sets first: ``name -> (group, description)``."""
    names = {name: ("synthetic", description) for name, (_, description) in synthetic.SYNTHETIC_DATASETS.items()}
    table = datasets.list_datasets()
    for row in table.itertuples():
        names[row.name] = ("real", f"{row.description} ({row.rows} rows, {row.features} features, {row.classes} classes)")
    return names


EXAMPLES: tuple[str, ...] = tuple(synthetic.SYNTHETIC_DATASETS) + ("spambase", "splice", "soybean", "zoo", "credit-g", "wine")

#: Parameter presets that suit each example (applied when the user picks it
#: from the list or opens a link naming it). Each example's default view
#: reproduces its figure of the paper (``tests/app/test_app.py`` checks the
#: agreement with the planted truth); the choices and their evidence are in
#: ``docs/numerics.md`` ("The bundled examples' defaults").
PRESETS: dict[str, dict] = {
    "fig1_binary": dict(m=0.33, size_by="k", k=3, budget="fixed", standardize=True),
    "fig1_binary_modified": dict(m=0.33, size_by="k", k=3, budget="fixed", standardize=True),
    "fig2_numeric": dict(m=0.33, size_by="k", k=3, budget="fixed", standardize=True),
    "fig2_numeric_modified": dict(m=0.33, size_by="k", k=3, budget="fixed", standardize=True),
    # eps_c in the middle of [0.8, 1), where the rule recovers the subspaces given the true partition.
    "fig3_categorical": dict(m=0.33, size_by="k", k=3, budget="approximate", eps_c=0.9, standardize=True),
    # The paper's eps_v in [4, 6] is in raw units (noise variance 9); at its top, a partition that mixes
    # planted clusters does not drop their features from the objective, so restarts keep the true one.
    "fig3_numeric": dict(m=0.33, size_by="k", k=3, budget="approximate", eps_v=6.0, standardize=False),
    "mixed_planted": dict(m=0.5, size_by="k", k=4, budget="fixed", standardize=True),
    "spambase": dict(m=0.5, size_by="k", k=2, budget="fixed", standardize=True),
    "splice": dict(m=0.5, size_by="k", k=3, budget="fixed", standardize=True),
    "soybean": dict(m=0.5, size_by="k", k=19, budget="fixed", standardize=True),
    "zoo": dict(m=0.5, size_by="k", k=7, budget="fixed", standardize=True),
    "credit-g": dict(m=0.5, size_by="k", k=2, budget="fixed", standardize=True),
    "wine": dict(m=0.5, size_by="k", k=3, budget="fixed", standardize=True),
}

#: Rows of a synthetic example where the paper's 300 leave its figure to chance: on Figure 1(c)'s set
#: the entropy gain of cluster 3's shared features beats that of an "absent" feature by ~0.14 nats per
#: point, within sampling noise at 75 rows (exact in 12 of 20 data seeds), not at 225 (20 of 20).
EXAMPLE_ROWS: dict[str, int] = {"fig1_binary_modified": 900}


def load_example(name: str, *, n_samples: int = 300, seed: int = 0) -> LoadedData:
    """Load a bundled example: a synthetic set of the paper or a real dataset.

    Parameters
    ----------
    name : str
        A key of :func:`example_names`.
    n_samples, seed : int
        Rows and seed of a synthetic set (ignored for real datasets).

    Returns
    -------
    LoadedData

    Raises
    ------
    CraftInputError
        For an unknown name.

    Examples
    --------
    >>> data = load_example("fig1_binary", n_samples=30)
    >>> data.table.shape, data.label, data.true_mask.shape
    ((30, 25), 'true_cluster', (3, 24))
    """
    if name in synthetic.SYNTHETIC_DATASETS:
        generator, description = synthetic.SYNTHETIC_DATASETS[name]
        X, y, true_mask = generator(n_samples=int(n_samples), random_state=int(seed))
        table = X.copy()
        table[SYNTHETIC_LABEL] = pd.Series([f"planted {int(v)}" for v in y], index=X.index, dtype="str")
        base = infer_schema(X)
        schema = _with_label(base, SYNTHETIC_LABEL, "planted cluster of the generator → label (evaluation only)")
        return LoadedData(
            key=f"synthetic:{name}:{int(n_samples)}:{int(seed)}",
            name=name,
            kind="synthetic",
            table=table,
            schema=schema,
            label=SYNTHETIC_LABEL,
            true_mask=np.asarray(true_mask, dtype=bool),
            mask_features=[str(c) for c in X.columns],
            true_labels=np.asarray(y, dtype=np.int64),
            description=description,
            label_reason="the generator's planted cluster",
        )
    if name in EXAMPLES:
        X, y = datasets.load(name)
        table = X.copy()
        table[datasets.TARGET] = y.astype("str")
        schema = _with_label(datasets.dataset_schema(name), datasets.TARGET, "true class of the dataset → label (evaluation only)")
        info = datasets.list_datasets().set_index("name").loc[name]
        return LoadedData(
            key=f"bundled:{name}",
            name=name,
            kind="bundled",
            table=table,
            schema=schema,
            label=datasets.TARGET,
            description=f"{info['description']}. Source: {info['source']}.",
            label_reason="the dataset's true class",
        )
    valid = ", ".join(EXAMPLES)
    raise CraftInputError(f"Unknown example {name!r}; choose one of {valid}.")


#: File types the app's uploaders take (the formats :func:`craft.read_table` reads).
UPLOAD_TYPES = ("csv", "tsv", "tab", "txt", "parquet", "pq", "xlsx", "xlsm", "xls")


def file_stem(name: str) -> str:
    """The start of download file names made from a table's name: safe characters only.

    Examples
    --------
    >>> file_stem("my data (May).csv"), file_stem("?.csv")
    ('my_data__May_', '_')
    """
    return "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in name.rsplit(".", 1)[0])[:60] or "data"


def upload_key(sha: str, *, tokens_in_text: bool = False, sheet: str | None = None) -> str:
    """The data key of an upload read with these options (the plain reading keeps ``upload:<sha>``).

    Examples
    --------
    >>> upload_key("ab"), upload_key("ab", tokens_in_text=True, sheet="S2")
    ('upload:ab', "upload:ab:markers-in-text:sheet='S2'")
    """
    key = f"upload:{sha}"
    if tokens_in_text:
        key += ":markers-in-text"
    if sheet is not None:
        key += f":sheet={sheet!r}"
    return key


def read_upload(data: bytes, file_name: str | None, *, tokens_in_text: bool = False,
                sheet: str | None = None) -> pd.DataFrame:
    """Read an uploaded file with :func:`craft.read_table` (this machine's limits), any problem in words.

    The one reading of every upload of the app: the table to cluster
    (:func:`load_upload`) and the rows to score. The reader refuses a file
    without data rows or columns.

    Raises
    ------
    CraftInputError
        The reader's message (the file cannot be read, is too large...) with
        what to upload instead.
    """
    try:
        return read_table(data, name=file_name, tokens_in_text=tokens_in_text, sheet=sheet)
    except CraftInputError as error:
        raise CraftInputError(
            f"{_sentence(str(error))} Upload a CSV/TSV, Parquet or Excel (.xlsx) table with a header row "
            f"and one row per item."
        ) from None


def load_upload(data: bytes, file_name: str | None, *, tokens_in_text: bool = False,
                sheet: str | None = None) -> LoadedData:
    """Read an uploaded file and check that it can be clustered.

    Parameters
    ----------
    data : bytes
        The file's content.
    file_name : str or None
        Its name (the extension chooses the format).
    tokens_in_text : bool
        Read missing markers ("NA", "None", "?", ...) as missing in text
        columns too (:func:`craft.read_table`'s option).
    sheet : str, optional
        The Excel sheet to read (the first by default).

    Returns
    -------
    LoadedData
        With ``key = "upload:<sha256 of the bytes>"``.

    Raises
    ------
    CraftInputError
        With a message that says what to do: the file cannot be read, is
        empty, has a single row or no usable column.

    Examples
    --------
    >>> data = load_upload(b"a,b,kind\\n1,2.5,x\\n3,4.5,y\\n5,1.5,x\\n", "t.csv")
    >>> data.schema.numeric, data.schema.categorical, data.label
    (('b',), ('a', 'kind'), None)
    >>> data.schema.reasons["a"]
    'integer with 3 distinct values (≤ 20) → categorical'
    """
    shown = file_name or "the uploaded file"
    table = read_upload(data, file_name, tokens_in_text=tokens_in_text, sheet=sheet)
    if table.shape[0] < 2:
        raise CraftInputError(
            f"{shown!r} has only {table.shape[0]} data row; clustering needs at least 2 rows (items). "
            f"Upload a table with one row per item."
        )
    if table.shape[1] == 0:
        raise CraftInputError(f"{shown!r} has no columns. Upload a table with a header row.")
    try:
        base = infer_schema(table)
    except CraftInputError as error:
        raise CraftInputError(f"{_sentence(str(error))} Upload a table with one named column per feature.") from None
    label, reason = _guess_label(table, base)
    schema = _with_label(base, label, "named like a label column → label (evaluation only)") if label else base
    return LoadedData(
        key=upload_key(table_fingerprint(data), tokens_in_text=tokens_in_text, sheet=sheet),
        name=file_name or "uploaded table",
        kind="upload",
        table=table,
        schema=schema,
        label=label,
        description=f"Uploaded file {file_name!r}: {table.shape[0]} rows, {table.shape[1]} columns.",
        label_reason=reason,
    )


def original_cells(data: LoadedData, content: bytes | None) -> pd.DataFrame:
    """The table whose cells the labels CSV writes: an upload's cells as the file holds them.

    Missing markers, numbers read from text ("1,50", "12,345") and anything
    else the reader interpreted go out as the user wrote them; the rows are
    those of ``data.table`` (blank rows dropped alike). Bundled and synthetic
    tables are written as loaded.

    Examples
    --------
    >>> raw = b"n;answer\\n1,50;None\\n2,00;yes\\n"
    >>> original_cells(load_upload(raw, "s.csv"), raw).to_dict("list")
    {'n': ['1,50', '2,00'], 'answer': ['None', 'yes']}
    """
    if data.kind != "upload" or content is None:
        return data.table
    return cells_as_written(data.table, content, data.name)


def cells_as_written(table: pd.DataFrame, content: bytes, file_name: str) -> pd.DataFrame:
    """The cells of ``table``, read from the file's bytes ``content``, as the file writes them (text).

    Same rows and columns as ``table`` (read by :func:`read_upload` from ``content``).

    Raises
    ------
    CraftInputError
        Where the two readings do not line up (never, with one reader; but
        misaligned rows are never written).
    """
    info = read_info(table)
    cells = read_table(content, name=file_name, sheet=info.sheet if info else None, as_text=True)
    if cells.shape != table.shape:
        raise CraftInputError(
            f"The original cells of {file_name!r} ({cells.shape[0]} rows) do not line up with the table read "
            f"({table.shape[0]} rows); download the table as read instead."
        )
    return cells


def reading_notes(table: pd.DataFrame) -> list[str]:
    """What the reader did with an uploaded table, for the Data page: the missing markers it used and
    where, blank rows dropped, the sheet read, the size limits.

    Examples
    --------
    >>> t = read_table(b"n,answer\\n1,None\\nNA,yes\\n", name="s.csv")
    >>> reading_notes(t)[1]
    "Read as missing: 'NA' ×1 in 'n'. Kept as text (not missing): 'None' ×1 in 'answer'."
    """
    info = read_info(table)
    if info is None:
        return []
    notes = []
    if info.format in ("text", "excel"):
        markers = ", ".join(info.missing_tokens) if info.missing_tokens else "none"
        where = "every column" if info.tokens_in_text else "columns whose other values are numbers"
        notes.append(f"Empty cells are missing. Missing markers, read as missing in {where}: {markers}.")
        found = []
        if info.read_as_missing:
            found.append("Read as missing: " + "; ".join(
                f"{_markers(counts)} in {column!r}" for column, counts in info.read_as_missing.items()) + ".")
        if info.kept_as_text:
            found.append("Kept as text (not missing): " + "; ".join(
                f"{_markers(counts)} in {column!r}" for column, counts in info.kept_as_text.items()) + ".")
        notes.append(" ".join(found) if found else "No missing marker was found in the file.")
    notes.extend(info.notes())
    notes.append(f"Size limits on this machine: {table_limits().describe()}.")
    return notes


def _guess_label(table: pd.DataFrame, schema: Schema) -> tuple[str | None, str]:
    by_name = {str(c).strip().lower(): str(c) for c in table.columns}
    info = read_info(table)
    nested = set(info.nested) if info is not None else set()  # lists are not classes
    for candidate in _LABEL_NAMES:
        column = by_name.get(candidate)
        if column is None or table.shape[1] < 2 or column in nested:
            continue
        n_levels = table[column].nunique(dropna=True)
        if 2 <= n_levels <= max(2, min(100, table.shape[0] // 2)):
            return column, f"the column is named {column!r} and has {n_levels} distinct values"
    return None, "no column is named class, label, target or y; pick one on the Data page if the table has one"
