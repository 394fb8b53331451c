"""Downloads of a CRAFT result: labels and masks as CSV, parameters as JSON.

CSV files are opened in spreadsheets, which run a cell that starts with
``=``, ``+``, ``-`` or ``@`` (or their full-width and small look-alikes
``＝ ＋ － ＠ ﹦ ﹢ ﹣``, also behind leading spaces or zero-width characters) as a
formula ("CSV injection"). Every text cell and column name that would start
so is written with a leading single quote, which spreadsheets show as text;
so is every line inside a cell that would start so after a line break. Plain
numbers, negative ones included, are written unchanged and stay numbers.

Every cell that holds a carriage return, a line feed, the delimiter or a
quote is quoted, and lines end with CRLF (RFC 4180), so that no cell can
start a new row in any reader.
"""

from __future__ import annotations

import csv
import json
import math
import re
from collections.abc import Mapping

import numpy as np
import pandas as pd

from ._version import __version__

__all__ = ["labels_csv", "masks_csv", "neutralize", "neutralize_frame", "params_json", "to_csv_bytes"]

#: First characters that make a spreadsheet read a cell as a formula.
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r", "\n",
                    "\uff1d", "\uff0b", "\uff0d", "\uff20",  # full-width ＝ ＋ － ＠
                    "\ufe66", "\ufe62", "\ufe63")  # small ﹦ ﹢ ﹣
# Characters a spreadsheet skips before it looks for a formula prefix:
# spaces (also no-break and ideographic) and zero-width characters.
_INVISIBLE = " \u00a0\u3000\u200b\u200c\u200d\u2060\ufeff"
_PLAIN_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")
# A line break followed (after invisible characters) by a formula prefix.
_PREFIX_AFTER_BREAK = re.compile(
    "(\r\n|\r|\n)(?=[" + re.escape(_INVISIBLE) + "]*[" + re.escape("=+-@\uff1d\uff0b\uff0d\uff20\ufe66\ufe62\ufe63") + "])"
)


def _starts_like_formula(text: str) -> bool:
    stripped = text.lstrip(_INVISIBLE)
    return stripped.startswith(FORMULA_PREFIXES) and not _PLAIN_NUMBER.match(stripped)


def neutralize(value):
    r"""Escape one cell so that a spreadsheet cannot run it as a formula.

    A string that starts with ``=``, ``+``, ``-``, ``@``, a tab, a line
    break or a full-width/small look-alike (``＝ ＋ － ＠ ﹦ ﹢ ﹣``), also behind
    leading spaces or zero-width characters, gets a leading ``'``, unless it
    is a plain number such as ``"-1.5"``; every line inside the cell that
    would start so gets one after its line break. Other values (numbers,
    missing values) are returned as is.

    Examples
    --------
    >>> neutralize("=SUM(A1:A3)"), neutralize("-2.5"), neutralize(-2.5), neutralize("@cmd")
    ("'=SUM(A1:A3)", '-2.5', -2.5, "'@cmd")
    >>> neutralize(" =1+1"), neutralize("\u200b=1"), neutralize("\uff1d1+1"), neutralize("ok\n=2+2")
    ("' =1+1", "'\u200b=1", "'＝1+1", "ok\n'=2+2")
    """
    if not isinstance(value, str):
        return value
    if _starts_like_formula(value):
        value = "'" + value
    if "\n" in value or "\r" in value:
        value = _PREFIX_AFTER_BREAK.sub(lambda m: m.group(1) + "'", value)
    return value


_NEUTRALIZE = np.frompyfunc(neutralize, 1, 1)


def neutralize_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` with every text cell and column name neutralised.

    Numeric, boolean and datetime columns are left unchanged (a negative
    number stays a number); text, categorical and object columns are
    converted cell by cell with :func:`neutralize`.
    """
    # Whole blocks, not column by column: a wide table has thousands of columns.
    text = [position for position, dtype in enumerate(frame.dtypes)
            if not (pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype)
                    or pd.api.types.is_datetime64_any_dtype(dtype))]
    is_text = set(text)
    other = [position for position in range(frame.shape[1]) if position not in is_text]
    escaped = _NEUTRALIZE(frame.iloc[:, text].to_numpy(dtype=object)) if text else np.empty((len(frame), 0))
    pieces = [pd.DataFrame(escaped, index=frame.index, columns=text, dtype=object),
              frame.iloc[:, other].set_axis(other, axis=1)]
    out = pd.concat(pieces, axis=1)[list(range(frame.shape[1]))]
    out.columns = [neutralize(str(c)) for c in frame.columns]
    return out


def to_csv_bytes(frame: pd.DataFrame, *, index: bool = False, header: bool = True) -> bytes:
    """UTF-8 CSV of ``frame`` with formula injection neutralised.

    Lines end with CRLF: Python's writer then quotes every cell that holds
    a CR or an LF (with ``"\\n"`` as line end it would leave a lone CR
    unquoted, and a reader would start a new row there). ``header=False``
    leaves out the names, for a file written a piece at a time.
    """
    text = neutralize_frame(frame).to_csv(index=index, header=header, lineterminator="\r\n", quoting=csv.QUOTE_MINIMAL)
    return text.encode("utf-8")


def labels_csv(table: pd.DataFrame, labels, *, column: str = "craft_cluster") -> bytes:
    """The original rows with their cluster as a last column, as CSV bytes.

    Parameters
    ----------
    table : DataFrame
        The table as loaded (all columns, in order).
    labels : array-like of int, shape (n_rows,)
    column : str
        Name of the added column (suffixed with ``_`` while it clashes).

    Examples
    --------
    >>> labels_csv(pd.DataFrame({"x": [-1.0, 2.0], "t": ["=1+1", "ok"]}), [0, 1]).decode().splitlines()
    ['x,t,craft_cluster', "-1.0,'=1+1,0", '2.0,ok,1']
    """
    labels = np.asarray(labels)
    if labels.shape[0] != len(table):
        raise ValueError(f"{labels.shape[0]} labels for a table of {len(table)} rows")
    out = table.copy()
    name = column
    while name in out.columns:
        name += "_"
    out[name] = labels.astype(np.int64)
    return to_csv_bytes(out)


def masks_csv(model) -> bytes:
    """Selected features per cluster as CSV: one row per cluster, 1 = selected.

    Columns: ``cluster``, ``n_rows``, ``n_selected``, then one per feature
    (the model's ``feature_names_in_`` order). A first three column name that
    a feature already has gets a ``_`` suffix.
    """
    mask = np.asarray(model.feature_mask_, dtype=np.int64)
    features = [str(c) for c in model.feature_names_in_]
    frame = pd.DataFrame(mask, columns=features)
    meta = {
        "cluster": np.arange(mask.shape[0]),
        "n_rows": np.asarray(model.cluster_sizes_, dtype=np.int64),
        "n_selected": mask.sum(axis=1),
    }
    for position, (name, values) in enumerate(meta.items()):
        while name in frame.columns:
            name += "_"
        frame.insert(position, name, values)
    return to_csv_bytes(frame)


def _plain(value):
    """JSON-ready version of NumPy scalars, tuples and non-finite floats.

    A mapping keyed by tuples (``pins``: ``{(cluster, column): on}``) becomes a
    list of ``[*key, value]``, since JSON keys are text.
    """
    if isinstance(value, Mapping):
        if any(isinstance(k, tuple) for k in value):
            return [[*_plain(list(k) if isinstance(k, tuple) else [k]), _plain(v)] for k, v in value.items()]
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return [_plain(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def params_json(params: Mapping, *, dataset: Mapping | None = None, schema=None, result: Mapping | None = None) -> str:
    """The parameters of a fit (and what is needed to repeat it) as JSON text.

    Parameters
    ----------
    params : mapping
        The fit's parameters (e.g. ``FitParams.to_dict()``).
    dataset : mapping, optional
        Where the data came from (name, kind, fingerprint, rows).
    schema : craft.Schema, optional
        Column roles used.
    result : mapping, optional
        What the fit found (lambda used, K, objective...).

    Examples
    --------
    >>> import json
    >>> json.loads(params_json({"m": 0.5, "rho": None}))["parameters"]
    {'m': 0.5, 'rho': None}
    """
    document = {"craft_version": __version__, "parameters": _plain(dict(params))}
    if dataset is not None:
        document["dataset"] = _plain(dict(dataset))
    if schema is not None:
        document["schema"] = {
            "numeric": list(schema.numeric),
            "categorical": list(schema.categorical),
            "ignored": list(schema.ignored),
        }
    if result is not None:
        document["result"] = _plain(dict(result))
    return json.dumps(document, indent=2, ensure_ascii=False)
