"""Which columns a fit uses and which one evaluates it: the roles after the user's changes (the label never
fitted), the columns' report, k from the label's classes, the label and the planted truth a fit is scored against.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from craft import metrics
from craft.exceptions import CraftInputError
from craft.io import read_info
from craft.schema import Schema

from ._common import _markers, _with_label
from .loading import LoadedData
from .params import ESTIMATOR_DEFAULTS, FitParams


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
    >>> from craft.schema import infer_schema
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
