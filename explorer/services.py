"""Computations behind the CRAFT Explorer app, free of any user-interface code.

The Streamlit app wraps these functions in its caches; a notebook can call
them directly. Nothing here imports Streamlit.

* :class:`FitParams` - every knob of a CRAFT fit as one hashable value.
* :func:`load_example`, :func:`load_upload` - a table, its suggested column
  roles, its label column and (for synthetic sets) the planted subspaces, as
  :class:`LoadedData`.
* :func:`fit_schema` - the roles used for fitting after the user's changes;
  the label column is never fitted.
* :func:`fit_craft` - one fit, with the problems a user can act on turned
  into messages (:class:`FitOutcome`).
* :func:`compare_methods`, :func:`sweep` - the
  Compare and What-if pages.
* :func:`distance_table` - the Teach page: one row's distance to every
  cluster, term by term, read from the fit's inspection surface.
"""

from __future__ import annotations

import dataclasses
import io
import math
import re
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import sparse

from craft import baselines, datasets, metrics, persist, profiles, synthetic, warm_up
from craft._optional import missing
from craft.encoding import Encoder
from craft.estimator import CRAFT, NOISE_WARN_SHARE, noise_share_note
from craft.exceptions import CraftInputError
from craft.io import read_info, read_table, table_fingerprint
from craft.limits import table_limits
from craft.priors import prior_terms
from craft.schema import Schema, infer_schema

__all__ = [
    "FitParams",
    "FitOutcome",
    "LoadedData",
    "EXAMPLES",
    "PRESETS",
    "EXAMPLE_ROWS",
    "suggested_k",
    "k_advice",
    "truth_agreement",
    "METHODS",
    "SWEEPABLE",
    "example_names",
    "load_example",
    "load_upload",
    "read_upload",
    "cells_as_written",
    "load_saved_model",
    "model_file",
    "Scoring",
    "score_rows",
    "scored_cells",
    "fit_schema",
    "column_report",
    "rho_from_share",
    "ESTIMATOR_DEFAULTS",
    "fit_craft",
    "labels_for_evaluation",
    "compare_methods",
    "sweep",
    "sweep_values",
    "distance_table",
]

#: Name of the label column added to synthetic tables (the planted cluster).
SYNTHETIC_LABEL = "true_cluster"

#: Column names an uploaded table's label column is recognised by.
_LABEL_NAMES = ("class", "label", "target", "y", "cluster", "true_cluster")


# ---------------------------------------------------------------------------
# Parameters


#: The estimator's own defaults: every parameter of the app starts from them.
ESTIMATOR_DEFAULTS: dict = CRAFT().get_params()


@dataclass(frozen=True)
class FitParams:
    """Every parameter of one CRAFT fit, as a hashable value (a cache key).

    Fields named like :class:`craft.CRAFT`'s parameters default to the
    estimator's own defaults (``CRAFT().get_params()``), so the app and the
    library cannot drift apart; nothing is validated here (the estimator
    does it, once, when it fits). The app's own fields are ``size_by``,
    ``k``, ``lam`` (the app always asks for k or gives λ, where the
    estimator's default is neither) and ``seed`` (an int, so that every
    view of the app is reproducible; the estimator's ``random_state``).

    Parameters
    ----------
    m, rho, rho_selection, k_method, budget, eps_c, eps_v, standardize, missing, n_init, max_iter, noise
        As in :class:`craft.CRAFT`. Build ``rho`` from a share of m(1-m)
        with :func:`rho_from_share`.
    size_by : {"k", "lambda"}
        Whether the number of clusters is asked for (``k``) or lambda is given.
    k : int
        Desired number of clusters (``size_by="k"``).
    lam : float
        Lambda (``size_by="lambda"``).
    seed : int
        The estimator's ``random_state``.

    Examples
    --------
    >>> FitParams(m=0.5, k=4).estimator_kwargs()["k"]
    4
    """

    m: float = ESTIMATOR_DEFAULTS["m"]
    rho: float | None = ESTIMATOR_DEFAULTS["rho"]
    size_by: str = "k"
    k: int = 3
    k_method: str = ESTIMATOR_DEFAULTS["k_method"]
    lam: float = 10.0
    budget: str = ESTIMATOR_DEFAULTS["budget"]
    eps_c: float = ESTIMATOR_DEFAULTS["eps_c"]
    eps_v: float = ESTIMATOR_DEFAULTS["eps_v"]
    standardize: bool = ESTIMATOR_DEFAULTS["standardize"]
    missing: str = ESTIMATOR_DEFAULTS["missing"]
    rho_selection: str = ESTIMATOR_DEFAULTS["rho_selection"]
    seed: int = 0
    n_init: int | str = ESTIMATOR_DEFAULTS["n_init"]
    max_iter: int = ESTIMATOR_DEFAULTS["max_iter"]
    noise: bool = ESTIMATOR_DEFAULTS["noise"]

    def replace(self, **changes) -> "FitParams":
        """A copy with some fields changed."""
        return dataclasses.replace(self, **changes)

    def estimator_kwargs(self) -> dict:
        """Keyword arguments of :class:`craft.CRAFT` for these parameters."""
        kwargs = dict(
            m=self.m, rho=self.rho, rho_selection=self.rho_selection, budget=self.budget,
            standardize=self.standardize, missing=self.missing, random_state=self.seed,
            n_init=self.n_init, max_iter=self.max_iter,
        )
        if self.noise:
            kwargs["noise"] = True
        if self.size_by == "lambda":
            kwargs["lam"] = self.lam
        else:
            kwargs["k"] = self.k
            kwargs["k_method"] = self.k_method
        if self.budget == "approximate":
            kwargs["eps_c"] = self.eps_c
            kwargs["eps_v"] = self.eps_v
        return kwargs

    def to_dict(self) -> dict:
        """The parameters as plain JSON-ready values."""
        return dataclasses.asdict(self)


def rho_from_share(m: float, share: float) -> float:
    """ρ as ``share`` of its upper bound m(1-m): the app's one conversion.

    Every control that sets ρ through a share goes through here, so one
    (m, share) always gives the same ρ, hence the same cache key. The value
    is rounded to 12 decimals so that a share typed or computed twice gives
    the same float.

    Examples
    --------
    >>> rho_from_share(0.5, 0.2)
    0.05
    """
    return round(float(share) * float(m) * (1.0 - float(m)), 12)


def share_of_rho(m: float, rho: float) -> float:
    """The share of m(1-m) that ``rho`` is: :func:`rho_from_share` undone (up to its rounding).

    Examples
    --------
    >>> share_of_rho(0.5, rho_from_share(0.5, 0.2))
    0.2
    """
    return float(rho) / (float(m) * (1.0 - float(m)))


# ---------------------------------------------------------------------------
# Data


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
#: reproduces its figure of the paper (``tests/test_app.py`` checks the
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


def _markers(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{marker!r} ×{count:,}" for marker, count in counts.items())


def _sentence(text: str) -> str:
    text = text.strip()
    if not re.match(r"\w+=", text):  # "rho=0.3 must..." names a parameter: keep its case
        text = text[:1].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."


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


def _with_label(schema: Schema, label: str, reason: str) -> Schema:
    """``schema`` with ``label`` ignored for fitting and its reason saying why."""
    if label not in schema.reasons:
        # A column added after the schema was made (the label of an example) comes last.
        reasons = dict(schema.reasons)
        reasons[label] = reason
        return Schema(numeric=schema.numeric, categorical=schema.categorical,
                      ignored=schema.ignored + (label,), reasons=reasons)
    moved = schema.override(ignored=[label])
    reasons = dict(moved.reasons)
    reasons[label] = reason
    return Schema(numeric=moved.numeric, categorical=moved.categorical, ignored=moved.ignored, reasons=reasons)


def fit_schema(data: LoadedData, overrides: Mapping[str, str], label: str | None) -> tuple[Schema, list[str]]:
    """Roles used for fitting: suggested roles, the user's overrides, the label left out.

    Parameters
    ----------
    data : LoadedData
    overrides : mapping of column -> role
        Roles the user chose (``"numeric"``, ``"categorical"``, ``"ignored"``).
        Unknown columns are skipped with a note.
    label : str or None
        The label column; it is never fitted, whatever its role.

    Returns
    -------
    schema : Schema
        Roles of every column of ``data.table``; the label is ``ignored``.
    notes : list of str
        What was skipped and why.

    Raises
    ------
    CraftInputError
        If the roles leave no usable column (the message says what to do).
    """
    notes = []
    columns = set(data.schema.columns)
    wanted: dict[str, list[str]] = {"numeric": [], "categorical": [], "ignored": []}
    for column, role in overrides.items():
        if column not in columns:
            notes.append(f"Column {column!r} from the saved roles is not in this table; skipped.")
            continue
        if role not in wanted:
            notes.append(f"Role {role!r} of column {column!r} is not one of numeric, categorical, ignored; skipped.")
            continue
        wanted[role].append(column)
    if label is not None and label not in columns:
        notes.append(f"Label column {label!r} is not in this table; evaluation has no label.")
        label = None
    schema = data.schema.override(**wanted) if any(wanted.values()) else data.schema
    # The dataset's own label column stays out of the fit when another (or no)
    # label is chosen, unless the user gives it a role on purpose.
    default_label = data.label
    if default_label is not None and default_label != label and default_label not in overrides:
        reasons = dict(schema.reasons)
        reasons[default_label] = "the dataset's label column → ignored (give it a role to fit on it)"
        schema = Schema(numeric=schema.numeric, categorical=schema.categorical, ignored=schema.ignored, reasons=reasons)
    if label is not None:
        schema = _with_label(schema, label, "label column: used for evaluation only, never for fitting")
    if not schema.used:
        listed = "; ".join(f"{c!r}: {schema.reasons[c]}" for c in schema.columns[:4])
        raise CraftInputError(
            "No usable column: every column is ignored or is the label "
            f"({listed}{'; …' if len(schema.columns) > 4 else ''}). On the Data page, give at least one "
            "column the role numeric or categorical, or upload a table with feature columns."
        )
    return schema, notes


def column_report(table: pd.DataFrame, schema: Schema, label: str | None,
                  missing: str = ESTIMATOR_DEFAULTS["missing"]) -> pd.DataFrame:
    """One row per column: role, reason, type, distinct values, missing cells and what is done with them.

    Parameters
    ----------
    table : DataFrame
    schema : Schema
        Roles used for fitting (from :func:`fit_schema`).
    label : str or None
        The label column (its role is shown as ``"label"``).
    missing : {"marginalise", "impute"}
        The fit's handling of missing cells (:class:`craft.CRAFT`'s ``missing``).

    Returns
    -------
    DataFrame
        Columns ``column, role, reason, dtype, distinct, missing, missing_share,
        missing_handling, markers`` (the missing markers of the file found in
        the column, read as missing or kept as text, with their counts).

    Examples
    --------
    >>> t = pd.DataFrame({"x": [1.0, None, 3.0], "c": ["a", None, "b"]})
    >>> column_report(t, infer_schema(t), None, "impute")["missing_handling"].tolist()
    ['1 missing cell(s) filled with the column mean', "1 missing cell(s) form a level of their own, '(missing)'"]
    >>> column_report(t, infer_schema(t), None, "marginalise")["missing_handling"].tolist()[0]
    '1 missing cell(s) left out: no cost to their row, no part in their cluster'
    """
    rows = []
    info = read_info(table)
    # Whole-table counts: a Series per column costs more than the counting itself on a wide table.
    missing_counts = table.isna().sum().to_numpy()
    distinct_counts = table.nunique(dropna=True).to_numpy()
    dtypes = table.dtypes.to_numpy()
    for position, column in enumerate(table.columns):
        absent = int(missing_counts[position])
        markers = ""
        if info is not None and column in info.read_as_missing:
            markers = f"read as missing: {_markers(info.read_as_missing[column])}"
        elif info is not None and column in info.kept_as_text:
            markers = f"kept as text: {_markers(info.kept_as_text[column])}"
        role = "label" if column == label else schema.role(column)
        if absent == 0:
            handling = "none missing"
        elif role in ("numeric", "categorical") and missing == "marginalise":
            handling = f"{absent} missing cell(s) left out: no cost to their row, no part in their cluster"
        elif role == "numeric":
            handling = f"{absent} missing cell(s) filled with the column mean"
        elif role == "categorical":
            handling = f"{absent} missing cell(s) form a level of their own, '(missing)'"
        elif role == "label":
            handling = "rows without a label are left out of the evaluation"
        else:
            handling = "column not used"
        rows.append(dict(
            column=column, role=role, reason=schema.reasons[column], dtype=str(dtypes[position]),
            distinct=int(distinct_counts[position]), missing=absent,
            missing_share=absent / max(1, len(table)), missing_handling=handling, markers=markers,
        ))
    return pd.DataFrame(rows, columns=["column", "role", "reason", "dtype", "distinct", "missing", "missing_share",
                                       "missing_handling", "markers"])


def fitted_table(table: pd.DataFrame, schema: Schema) -> tuple[pd.DataFrame, Schema]:
    """The columns that are fitted, and a schema that covers exactly them."""
    used = list(schema.used)
    reasons = {c: schema.reasons[c] for c in used}
    return table[used], Schema(numeric=schema.numeric, categorical=schema.categorical, ignored=(), reasons=reasons)


def truth_agreement(model, data: LoadedData) -> dict | None:
    """:func:`craft.metrics.planted_agreement` of a fit of ``data``, or None without planted truth.

    The fitted masks are read from ``model.feature_mask_``, columns matched
    to the planted ones by name (a column the fit ignored selects nothing).
    """
    if data.true_mask is None or data.true_labels is None or data.mask_features is None or model is None:
        return None
    position = {str(name): j for j, name in enumerate(model.feature_names_in_)}
    mask = np.zeros((model.n_clusters_, len(data.mask_features)), dtype=np.bool_)
    for j, name in enumerate(data.mask_features):
        if name in position:
            mask[:, j] = model.feature_mask_[:, position[name]]
    return metrics.planted_agreement(data.true_labels, data.true_mask, model.labels_, mask)


def suggested_k(data: LoadedData) -> int:
    """k for a newly loaded table: the number of classes of its label column, if it has one.

    Returns
    -------
    int
        Distinct non-missing labels (at least 2, at most the rows); the
        estimator's default k without a label column.

    Examples
    --------
    >>> table = pd.DataFrame({"x": range(6), "class": list("abcabc")})
    >>> suggested_k(LoadedData(key="upload:0", name="t.csv", kind="upload", table=table, schema=None, label="class"))
    3
    """
    n_classes = _label_classes(data.table, data.label)
    return FitParams().k if n_classes is None else _k_for_classes(n_classes, len(data.table))


def _label_classes(table: pd.DataFrame, label: str | None) -> int | None:
    """Distinct non-missing values of the label column (None without one)."""
    if label is None or label not in table.columns:
        return None
    return int(table[label].nunique(dropna=True))


def _k_for_classes(n_classes: int, n_rows: int) -> int:
    return max(2, min(n_classes, n_rows))


def k_advice(table: pd.DataFrame, label: str | None, k: int) -> str:
    """How the fit's k compares with the classes of the chosen label column, in a sentence.

    Said on the Data page of an upload, from the current k and label, so it
    follows the user's choices.

    Examples
    --------
    >>> table = pd.DataFrame({"x": range(6), "class": list("abcabc")})
    >>> k_advice(table, "class", 3)
    "k = 3: the number of classes in the label column 'class'."
    >>> k_advice(table, "class", 5)
    "k = 5, while the label column 'class' has 3 classes: set k = 3 in the sidebar for one cluster per class."
    >>> k_advice(table, None, 3)
    'k = 3: no label column is chosen; set k to the number of clusters you expect.'
    """
    n_classes = _label_classes(table, label)
    if n_classes is None:
        return f"k = {k}: no label column is chosen; set k to the number of clusters you expect."
    wanted = _k_for_classes(n_classes, len(table))
    if wanted == k:
        return f"k = {k}: the number of classes in the label column {label!r}."
    return (f"k = {k}, while the label column {label!r} has {n_classes} classes: set k = {wanted} in the sidebar "
            "for one cluster per class.")


def labels_for_evaluation(table: pd.DataFrame, label: str | None) -> tuple[pd.Series | None, str]:
    """The label column as text, with a note on rows that lack a label.

    Returns
    -------
    y : Series or None
        Label per row as strings; missing labels are ``<NA>``. None without a
        label column.
    note : str
        Empty, or a sentence on missing labels.
    """
    if label is None or label not in table.columns:
        return None, ""
    column = table[label]
    missing = int(column.isna().sum())
    y = column.astype("string")
    note = ""
    if missing:
        note = f"{missing} row(s) have no label and are left out of the evaluation."
    if missing == len(y):
        return None, f"The label column {label!r} is empty."
    return y, note


# ---------------------------------------------------------------------------
# Fitting


#: Most rows for which the app's fit keeps every iteration's labels (``history_labels``), so that Teach can show
#: each iteration's assignments and distances: 4 bytes a row an iteration, in every fit the app caches.
TEACH_ROWS = 200_000


@dataclass
class FitOutcome:
    """Result of :func:`fit_craft`: a fitted model or a message.

    Attributes
    ----------
    model : CRAFT or None
        The fitted estimator; its ``history_`` keeps every iteration's
        labels up to :data:`TEACH_ROWS` rows (what Teach shows).
    error : str or None
        What went wrong and what to do, when there is no model.
    notes : list of str
        Things the user should know (k not reachable, not converged...).
    seconds : float
        Wall time of the fit.
    """

    model: CRAFT | None
    error: str | None = None
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0


def fit_craft(table: pd.DataFrame, schema: Schema, params: FitParams, callback: Callable | None = None) -> FitOutcome:
    """Fit CRAFT on the used columns of ``table``.

    Invalid parameters and data come back as :attr:`FitOutcome.error`
    (a :class:`CraftInputError`'s message); nothing else is caught.

    Parameters
    ----------
    table : DataFrame
    schema : Schema
        Roles of the columns (from :func:`fit_schema`).
    params : FitParams
    callback : callable or None
        Passed to :meth:`craft.CRAFT.fit` (progress); the model does not keep it.

    Returns
    -------
    FitOutcome
    """
    X, used_schema = fitted_table(table, schema)
    if params.size_by == "k" and params.k > len(X):
        return FitOutcome(
            None, error=f"k = {params.k} clusters cannot be found in {len(X)} rows: choose k ≤ {len(X)}."
        )
    model = CRAFT(categorical=used_schema, history_labels=len(X) <= TEACH_ROWS, **params.estimator_kwargs())
    # Compilation (or loading compiled code) is not the fit's time: do it first, once per process.
    warm_up()
    start = time.perf_counter()
    try:
        model.fit(X, callback=callback)
    except CraftInputError as error:
        return FitOutcome(None, error=_sentence(str(error)))
    seconds = time.perf_counter() - start
    notes = []
    if params.size_by == "k" and model.n_clusters_ != params.k:
        notes.append(
            f"k = {params.k} clusters were not reached ({'exact-k search' if params.k_method == 'search' else 'farthest-first'}): "
            f"the fit has K = {model.n_clusters_} with λ = {model.lam_:.4g}."
            + (" Try the exact-k search." if params.k_method == "farthest_first" else " Try another seed or m.")
        )
    if not model.converged_:
        notes.append(f"The fit did not converge in max_iter = {params.max_iter} passes; raise max iterations.")
    if model.n_imputed_:
        total = sum(model.n_imputed_.values())
        notes.append(f"{total} missing numeric cell(s) were filled with their column mean.")
    if model.n_marginalised_:
        total = sum(model.n_marginalised_.values())
        notes.append(f"{total:,} missing cell(s) in {len(model.n_marginalised_)} column(s) were left out of the fit "
                     "(marginalised: no cost to their row, no part in their cluster's statistics).")
    featureless = profiles.featureless_note(model)
    if featureless:
        notes.append(featureless)
    n_rows = len(model.labels_)
    if model.n_noise_ > NOISE_WARN_SHARE * n_rows:  # the library's own note, also its warning
        notes.append(noise_share_note(model.n_noise_, n_rows, int(model.cluster_sizes_.min())))
    return FitOutcome(model, notes=notes, seconds=seconds)


def fitted_X(model: CRAFT, table: pd.DataFrame) -> pd.DataFrame:
    """The columns of ``table`` that ``model`` was fitted on, in its order."""
    return table[[str(c) for c in model.feature_names_in_]]


# ---------------------------------------------------------------------------
# Comparing methods

#: Methods of the Compare page, in display order.
METHODS: tuple[str, ...] = ("CRAFT", "DP-means", "DP-means(R)", "DP-RF", "k-means (one-hot)", "k-prototypes")


#: Most bytes one Compare method may take for a dense matrix of numbers and one-hot levels.
DENSE_LIMIT_BYTES = 512 * 2**20


def _euclidean(X: pd.DataFrame, schema: Schema, method: str, *, dense: bool = True):
    """Standardized numbers beside one-hot levels: sparse for ``dense=False``, else dense within
    :data:`DENSE_LIMIT_BYTES` (refused before allocating, with the size it would take)."""
    data = Encoder(list(schema.numeric), list(schema.categorical), True).fit_transform(X)
    if not dense:
        return sparse.hstack([sparse.csr_matrix(data.numeric), data.onehot()], format="csr")
    n_columns = data.n_numeric + data.n_levels_total
    size = data.n_samples * n_columns * 8
    if size > DENSE_LIMIT_BYTES:
        raise CraftInputError(
            f"{method} needs a dense {data.n_samples:,} x {n_columns:,} matrix of numbers and one-hot levels "
            f"({size / 2**30:.1f} GiB), more than the {DENSE_LIMIT_BYTES // 2**20} MiB one method may take here; "
            "k-means (one-hot) works on the sparse matrix, or leave out the many-level column."
        )
    return data.euclidean()


def _run_method(method: str, X: pd.DataFrame, schema: Schema, params: FitParams, k: int, seed: int) -> tuple[np.ndarray, str]:
    """Labels of one method, and a note ("" when there is nothing to say)."""
    if method == "CRAFT":
        model = CRAFT(categorical=schema, **params.replace(size_by="k", k=k, seed=seed).estimator_kwargs()).fit(X)
        return model.labels_, f"λ = {model.lam_:.4g}"
    if method in ("DP-means", "DP-means(R)"):
        model = baselines.DPMeans(k=k, init="mean" if method == "DP-means" else "random", random_state=seed)
        model.fit(_euclidean(X, schema, method))
        return model.labels_, f"λ = {model.lam_:.4g} (farthest-first for k = {k})"
    if method == "DP-RF":
        model = baselines.DPRF(m=params.m, rho=params.rho, k=k, random_state=seed).fit(_euclidean(X, schema, method))
        return model.labels_, f"λ = {model.lam_:.4g} (farthest-first for k = {k})"
    if method == "k-means (one-hot)":
        from sklearn.cluster import KMeans

        # Sparse: memory follows the cells, not rows x levels (scikit-learn's k-means takes CSR).
        model = KMeans(n_clusters=k, n_init=4, random_state=seed).fit(_euclidean(X, schema, method, dense=False))
        return model.labels_, "standardized numbers + one-hot levels"
    if method == "k-prototypes":
        return _kprototypes(X, schema, k, seed)
    raise CraftInputError(f"Unknown method {method!r}; choose among {', '.join(METHODS)}.")


def _kprototypes(X: pd.DataFrame, schema: Schema, k: int, seed: int) -> tuple[np.ndarray, str]:
    try:
        from kmodes.kmodes import KModes
        from kmodes.kprototypes import KPrototypes
    except ImportError as error:  # an installation problem, not bad input
        raise missing("kmodes", extra="baselines", needed_for="k-prototypes") from error
    encoder = Encoder(list(schema.numeric), list(schema.categorical), True)
    data = encoder.fit_transform(X)
    codes = np.where(data.codes < 0, data.n_levels[None, :], data.codes) if data.n_categorical else data.codes
    if data.n_categorical and data.n_numeric:
        matrix = np.hstack([data.numeric, codes.astype(np.float64)])
        categorical = list(range(data.n_numeric, data.n_features))
        model = KPrototypes(n_clusters=k, n_init=2, init="Cao", random_state=seed, max_iter=50)
        labels = model.fit_predict(matrix, categorical=categorical)
        return np.asarray(labels), "kmodes KPrototypes (Cao init, 2 restarts)"
    if data.n_categorical:
        model = KModes(n_clusters=k, n_init=2, init="Cao", random_state=seed, max_iter=50)
        return np.asarray(model.fit_predict(codes)), "no numeric column: kmodes KModes"
    from sklearn.cluster import KMeans

    labels = KMeans(n_clusters=k, n_init=4, random_state=seed).fit(data.numeric).labels_
    return labels, "no categorical column: k-prototypes is k-means"


def compare_methods(
    table: pd.DataFrame,
    schema: Schema,
    params: FitParams,
    *,
    methods: Sequence[str] = METHODS,
    k: int,
    seed: int = 0,
    y=None,
    progress: Callable[[float, str], None] | None = None,
) -> pd.DataFrame:
    """Run CRAFT and the other methods on the same data and score them.

    Parameters
    ----------
    table : DataFrame
    schema : Schema
        Roles (from :func:`fit_schema`); only used columns are clustered.
    params : FitParams
        CRAFT's parameters (``k`` and ``seed`` are replaced); ``m`` and
        ``rho`` also set DP-RF's.
    methods : sequence of str
        Names from :data:`METHODS`.
    k : int
        Number of clusters asked of every method (DP-means family: about k,
        through the paper's farthest-first heuristic).
    seed : int
    y : array-like or None
        True classes (missing ones are left out of the scores).
    progress : callable or None
        Called with (share done, method name) before each method.

    Returns
    -------
    DataFrame
        One row per method: ``method, K, purity, nmi, ari, seconds, note``;
        a method that fails has NaN scores and the reason in ``note``.
    """
    X, used = fitted_table(table, schema)
    rows = []
    for position, method in enumerate(methods):
        if progress is not None:
            progress(position / max(1, len(methods)), method)
        start = time.perf_counter()
        try:
            labels, note = _run_method(method, X, used, params, int(k), int(seed))
        except (CraftInputError, ImportError) as error:  # bad input, or an extra not installed: say so in the row
            rows.append(dict(method=method, K=np.nan, purity=np.nan, nmi=np.nan, ari=np.nan,
                             seconds=time.perf_counter() - start, note=str(error)))
            continue
        seconds = time.perf_counter() - start
        row = dict(method=method, K=int(len(np.unique(labels))), seconds=seconds, note=note)
        row.update(_scores(y, labels))
        rows.append(row)
    if progress is not None:
        progress(1.0, "done")
    return pd.DataFrame(rows, columns=["method", "K", "purity", "nmi", "ari", "seconds", "note"])


def _scores(y, labels) -> dict:
    if y is None:
        return dict(purity=np.nan, nmi=np.nan, ari=np.nan)
    y = pd.Series(y).reset_index(drop=True)
    keep = y.notna().to_numpy()
    if keep.sum() == 0:
        return dict(purity=np.nan, nmi=np.nan, ari=np.nan)
    scores = metrics.evaluate(y[keep].astype(str).to_numpy(), np.asarray(labels)[keep])
    return dict(purity=scores["purity"], nmi=scores["nmi"], ari=scores["ari"])


# ---------------------------------------------------------------------------
# What-if: sweeps and mask stability

#: Parameters a sweep can vary: name -> (display name, field of FitParams).
SWEEPABLE: dict[str, str] = {
    "m": "m (fraction of features per cluster)",
    "k": "k (number of clusters)",
    "lam": "λ (cost of a new cluster)",
    "rho": "ρ / m(1−m) (global ↔ cluster-specific)",
    "eps_c": "ε_c (approximate budget, categorical)",
    "eps_v": "ε_v (approximate budget, numeric)",
}


def sweep_values(param: str, low: float, high: float, steps: int) -> list:
    """Evenly spaced values of ``param`` between ``low`` and ``high`` (valid ones only).

    Integers for ``k``; geometric spacing for ``lam``. ``rho`` is swept as
    the share ``rho / (m(1-m))`` in (0, 1), so that every value is valid for
    every m; values outside a parameter's valid range are dropped.

    Raises
    ------
    CraftInputError
        If no value in the range is valid.
    """
    steps = max(1, int(steps))
    if param not in SWEEPABLE:
        raise CraftInputError(f"Cannot sweep {param!r}; choose one of {', '.join(SWEEPABLE)}.")
    low, high = (float(low), float(high)) if low <= high else (float(high), float(low))
    values: list[int] | list[float]
    if param == "k":
        values = sorted({int(round(v)) for v in np.linspace(max(1, low), max(1, high), steps)})
    elif param == "lam":
        if low <= 0:
            raise CraftInputError(f"λ must be above 0; the range starts at {low:g}.")
        values = [float(v) for v in np.geomspace(low, high, steps)]
    else:
        values = [float(v) for v in np.linspace(low, high, steps)]
    bounds = {"m": (0.0, 1.0), "rho": (0.0, 1.0), "eps_c": (0.0, 1.0), "eps_v": (0.0, math.inf)}
    if param in bounds:
        lo, hi = bounds[param]
        values = [v for v in values if lo < v < hi]
        if not values:
            raise CraftInputError(
                f"No value of {param} in [{low:g}, {high:g}] lies inside its valid range ({lo:g}, {hi:.4g})."
            )
    return values


def _swept(params: FitParams, param: str, value) -> FitParams:
    if param == "k":
        return params.replace(size_by="k", k=int(value))
    if param == "lam":
        return params.replace(size_by="lambda", lam=float(value))
    if param in ("eps_c", "eps_v"):
        return params.replace(budget="approximate", **{param: float(value)})
    if param == "rho":
        return params.replace(rho=rho_from_share(params.m, value))
    if param == "m" and params.rho is not None and not _rho_is_valid(float(value), params.rho):
        return params.replace(m=float(value), rho=None)
    return params.replace(**{param: float(value)})


def _rho_is_valid(m: float, rho: float) -> bool:
    """Whether ``rho`` is a valid prior variance at ``m``, by the one check of its range."""
    try:
        prior_terms(m, rho)
    except CraftInputError:
        return False
    return True


def sweep(
    table: pd.DataFrame,
    schema: Schema,
    params: FitParams,
    param: str,
    values: Sequence,
    *,
    seeds: Sequence[int] = (0,),
    y=None,
    progress: Callable[[float, str], None] | None = None,
) -> pd.DataFrame:
    """Fit once per (value, seed) and collect K, objective, λ and scores.

    Returns
    -------
    DataFrame
        Columns ``value, seed, K, objective, lam, purity, nmi, ari, seconds,
        note``. With ``param="m"`` and a ρ that becomes invalid, the paper's
        default ρ is used for that m (said in ``note``).
    """
    X, used = fitted_table(table, schema)
    rows = []
    total = max(1, len(values) * len(seeds))
    done = 0
    for value in values:
        for seed in seeds:
            if progress is not None:
                progress(done / total, f"{param} = {value:g}, seed {seed}")
            done += 1
            current = _swept(params, param, value).replace(seed=int(seed))
            note = "paper's default ρ for this m" if param == "m" and current.rho is None and params.rho is not None else ""
            outcome = fit_craft(X, used, current)
            if outcome.model is None:
                rows.append(dict(value=value, seed=seed, K=np.nan, objective=np.nan, lam=np.nan, purity=np.nan,
                                 nmi=np.nan, ari=np.nan, seconds=outcome.seconds, note=outcome.error))
                continue
            model = outcome.model
            row = dict(value=value, seed=seed, K=model.n_clusters_, objective=model.objective_, lam=model.lam_,
                       seconds=outcome.seconds, note=note)
            row.update(_scores(y, model.labels_))
            rows.append(row)
    if progress is not None:
        progress(1.0, "done")
    return pd.DataFrame(rows, columns=["value", "seed", "K", "objective", "lam", "purity", "nmi", "ari", "seconds", "note"])


# ---------------------------------------------------------------------------
# Teach: the fit's own inspection surface, as tables


def distance_table(model: CRAFT, data, state, row: int) -> pd.DataFrame:
    """The distance d_nk of one row to every cluster of ``state``, term by term.

    Parameters
    ----------
    model : CRAFT
    data : EncodedData
        ``model.encoder_.transform`` of the fitted columns (encoded once by the caller).
    state : craft.Inspection
        From ``model.inspect_iteration`` (the clusters after one iteration).
    row : int

    Returns
    -------
    DataFrame
        One row per cluster: the terms of :meth:`craft.CRAFT.cost_terms`
        (``numeric``, ``categorical_selected``, ``categorical_global``,
        ``feature_control``), their sum ``total`` and ``n_selected``.

    Raises
    ------
    CraftInputError
        For a row outside the table.
    """
    if not 0 <= row < data.n_samples:
        raise CraftInputError(f"row={row} must lie in 0..{data.n_samples - 1}.")
    terms = model.cost_terms(data.take(np.array([row])), state=state)
    return pd.DataFrame(dict(
        cluster=np.arange(state.clusters.n_clusters), numeric=terms.numeric[0],
        categorical_selected=terms.categorical_selected[0], categorical_global=terms.categorical_global[0],
        feature_control=terms.feature_control[0], total=terms.total[0],
        n_selected=state.selection.selected.sum(axis=1).astype(int),
    ))


# ---------------------------------------------------------------------------
# Scoring new rows with a fit or a saved model


#: File types of the model uploader: the extension :func:`model_file` downloads are named with.
MODEL_FILE_TYPES = ("craft",)


def model_file(model: CRAFT) -> bytes:
    """``model`` in the model file format of :mod:`craft.persist` (the Export page's download)."""
    buffer = io.BytesIO()
    persist.save(model, buffer)
    return buffer.getvalue()


def load_saved_model(data: bytes, file_name: str | None) -> CRAFT:
    """A model saved by :func:`craft.persist.save` (the Export page's download), read from its bytes.

    :func:`craft.load` reads a format that cannot run code (nothing here
    unpickles a file) and refuses an archive that would unpack beyond what
    this machine can hold; the upload itself is bounded as every upload
    (``server.maxUploadSize``).

    Raises
    ------
    CraftInputError
        The library's message (not a model file, a damaged one, a file of
        another format version, too large to unpack), naming the file.
    """
    try:
        return persist.load(data)
    except CraftInputError as error:
        raise CraftInputError(f"{file_name or 'the uploaded file'!r} cannot be used as a model: "
                              f"{_sentence(str(error))}") from None


@dataclass
class Scoring:
    """New rows scored by a fitted model.

    Attributes
    ----------
    assignment : DataFrame
        :meth:`craft.CRAFT.assign`'s table, one row per scored row: ``cluster``,
        ``cost``, ``margin``, ``fits_no_cluster``, ``nothing_known``,
        ``unseen_cells``, ``unseen_columns``.
    counts : ndarray of int
        Rows per cluster of the model (nearest cluster), K entries.
    left_out : tuple of str
        Columns of the table that are not features of the model: the model
        leaves them out (as the fit left out its label and ignored columns).
    notes : tuple of str
        What the model said about the rows while it scored them (its
        warnings: levels unseen in the fit and how its rule treats them...).
    """

    assignment: pd.DataFrame
    counts: np.ndarray
    left_out: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def n_noise(self) -> int:
        """Rows labelled -1 (a model fitted with ``noise=True`` puts the rows that fit no cluster there)."""
        return int((self.assignment["cluster"] == -1).sum())

    @property
    def n_no_cluster(self) -> int:
        """Rows that fit no cluster (CRAFT would have opened a new cluster for them, or nothing of them is known)."""
        return int(self.assignment["fits_no_cluster"].sum())

    @property
    def n_nothing_known(self) -> int:
        """Rows with no cell the clusters can judge (each missing or a value never seen in fit)."""
        return int(self.assignment["nothing_known"].sum())

    @property
    def unseen_rows(self) -> np.ndarray:
        """Which rows hold at least one value never seen in fit (bool)."""
        return self.assignment["unseen_cells"].to_numpy() > 0

    def unseen_by_column(self) -> pd.Series:
        """Cells with values never seen in fit, per column (the columns that have any), most first."""
        named = self.assignment["unseen_columns"]
        names = [name for listed in named[named != ""] for name in str(listed).split(", ")]
        return pd.Series(names, dtype=object).value_counts().rename("cells").rename_axis("column")


def score_rows(model: CRAFT, table: pd.DataFrame) -> Scoring:
    """Assign the rows of ``table`` to ``model``'s clusters (:meth:`craft.CRAFT.assign`).

    Parameters
    ----------
    model : CRAFT
        Fitted (in this session or loaded from a file).
    table : DataFrame
        The rows to score, as read.

    Raises
    ------
    CraftInputError
        The library's message naming every missing, extra or differently
        typed column.
    """
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        try:
            assignment = model.assign(table)
        except CraftInputError as error:
            raise CraftInputError(_sentence(str(error))) from None
    labels = assignment["cluster"].to_numpy(dtype=np.int64)
    counts = np.bincount(labels[labels >= 0], minlength=model.n_clusters_)  # -1: noise under noise=True
    features = {str(c) for c in model.feature_names_in_}
    left_out = tuple(str(c) for c in table.columns if str(c) not in features)
    notes = tuple(dict.fromkeys(_sentence(str(w.message)) for w in said if issubclass(w.category, UserWarning)))
    return Scoring(assignment, counts, left_out, notes)


def scored_cells(cells: pd.DataFrame, assignment: pd.DataFrame, rows=None) -> pd.DataFrame:
    """The rows' cells as written beside their assignment (the downloads of the scored rows).

    Parameters
    ----------
    cells : DataFrame
        The table's cells (:func:`cells_as_written`), same rows as ``assignment``.
    assignment : DataFrame
        :attr:`Scoring.assignment`.
    rows : array-like of bool, optional
        The rows to keep (e.g. those that fit no cluster); all by default.

    Returns
    -------
    DataFrame
        ``cells`` followed by the assignment's columns, each prefixed
        ``craft_`` (and suffixed with ``_`` while it clashes with a column of
        the table).

    Examples
    --------
    >>> cells = pd.DataFrame({"x": ["1,5", "2"]})
    >>> a = pd.DataFrame({"cluster": [0, 1], "cost": [1.0, 9.0], "margin": [0.5, 0.1],
    ...                   "fits_no_cluster": [False, True]})
    >>> scored_cells(cells, a, a["fits_no_cluster"]).to_dict("list")
    {'x': ['2'], 'craft_cluster': [1], 'craft_cost': [9.0], 'craft_margin': [0.1], 'craft_fits_no_cluster': [True]}
    """
    keep = np.ones(len(cells), dtype=bool) if rows is None else np.asarray(rows, dtype=bool)
    out = cells.iloc[keep].reset_index(drop=True)
    out.attrs = {}  # the reader's notes describe the whole file, not these rows
    values = assignment.iloc[keep].reset_index(drop=True)
    for column in values.columns:
        name = f"craft_{column}"
        while name in out.columns:
            name += "_"
        out[name] = values[column].to_numpy()
    return out
