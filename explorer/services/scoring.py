"""New rows scored by a fit or a saved model (:class:`Scoring`), and a model as the file the Export page downloads
and the Score page reads back (never unpickled).
"""

from __future__ import annotations

import io
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from craft import persist
from craft.estimator import CRAFT
from craft.exceptions import CraftInputError

from ._common import _sentence


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
