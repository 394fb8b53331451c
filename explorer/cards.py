"""The Cluster cards page's services: cards cached per fit and cluster, and their tables for display.

The numbers are :func:`craft.cards.cluster_card`'s; here they are only kept
(in :mod:`explorer.cache`'s byte-bounded stores, keyed by the fit's digest
and the cluster, the model and table passed unhashed as everywhere there)
and renamed for people. The cost matrix of a fit (N × K floats) is computed
once for all its cards.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from craft import cards
from craft.plots import fig_card_levels, fig_card_numeric
from craft.cards import ClusterCard
from craft.export import to_csv_bytes
from craft.io import read_info

from . import cache
from .ui import show_table

#: Rows of the paragon and border tables.
CARD_ROWS = 5
#: Feature columns of the paragon and border tables drawn (the cluster's selected features come first); a wider
#: table's rows are downloadable whole. Ten thousand columns took seconds to send and to draw.
CARD_COLUMNS = 200
#: What the smallest p-value a float holds is shown as (a v-test beyond ±38 underflows p to 0).
P_FLOOR = "< 1e-300"


# Kept in cache.STORE (copies, bounded by bytes): an N x K matrix per fit was held by st.cache_data's 4 entries
# whatever their size.
@cache.kept_in(cache.STORE)
def costs(key: str, _model, _X) -> np.ndarray:
    """``cost_terms(X).total`` of the fit named ``key``: every row's CRAFT cost to every cluster."""
    return _model.cost_terms(_X).total


@cache.kept_in(cache.STORE, spinner="Building the card…")
def card(key: str, cluster: int, _model, _X) -> ClusterCard:
    """The card of ``cluster`` of the fit named ``key``."""
    return cards.cluster_card(_model, _X, cluster, n_rows=CARD_ROWS, costs=costs(key, _model, _X))


@cache.kept_in(cache.FIGURES)
def figures(key: str, cluster: int, _card: ClusterCard):
    """The card's numeric and level figures (None where the fit has no such feature or none is selected)."""
    numeric = fig_card_numeric(_card) if len(_card.numeric) else None
    levels = fig_card_levels(_card) if _card.levels["selected"].any() else None
    return numeric, levels


def cluster_label(model, cluster: int, stability=None) -> str:
    """``"cluster 2 (310 rows)"``, with ``" · unstable (Jaccard 0.44)"`` or ``" · stable"`` once ``stability``
    (:class:`craft.stability.Stability` of this fit) is known."""
    label = f"cluster {cluster} ({int(model.cluster_sizes_[cluster]):,} rows)"
    if stability is None:
        return label
    if stability.unstable[cluster]:
        return f"{label} · unstable (Jaccard {stability.mean_jaccard[cluster]:.2f})"
    return f"{label} · stable"


def p_text(p: float) -> str:
    """A p-value as people read it: 3 decimals down to 0.001, then two significant digits."""
    if p == 0:
        return P_FLOOR
    return f"{p:.3f}" if p >= 0.001 else f"{p:.2g}"


def numeric_table(card: ClusterCard) -> pd.DataFrame:
    """``card.numeric`` with readable headers and p-values as text."""
    frame = card.numeric
    return pd.DataFrame({
        "feature": frame["feature"],
        "selected": frame["selected"],
        "cells": frame["n_cells"],
        "mean here": frame["mean"],
        "mean overall": frame["overall_mean"],
        "sd here": frame["sd"],
        "sd overall": frame["overall_sd"],
        "std. difference": frame["std_diff"],
        "v-test": frame["v_test"],
        "p adjusted": frame["p_adjusted"].map(p_text),
    })


def level_table(card: ClusterCard) -> pd.DataFrame:
    """``card.levels`` with readable headers and p-values as text."""
    frame = card.levels
    return pd.DataFrame({
        "feature": frame["feature"],
        "selected": frame["selected"],
        "level": frame["level"],
        "count here": frame["count"],
        "% here": 100 * frame["cluster_share"],
        "% overall": 100 * frame["overall_share"],
        "v-test": frame["v_test"],
        "p adjusted": frame["p_adjusted"].map(p_text),
        # The sign of v only: whether the difference matters is the adjusted p's to say.
        "in the cluster": frame["direction"].map({"over": "more often", "under": "less often",
                                                  "as overall": "as often"}),
    })


def identifier_column(data, schema, label: str | None) -> str | None:
    """The table's identifier: the first column the fit ignores (not the label) whose values name each row once.

    None where there is none (every bundled example): rows are then named by their number only.
    """
    table = data.table
    for name in schema.ignored:
        if name == label or name not in table.columns:
            continue
        column = table[name]
        if column.notna().all() and column.is_unique:
            return str(name)
    return None


def file_lines(data, cells: pd.DataFrame | None) -> np.ndarray | None:
    """The line of the uploaded text file each row of ``data.table`` starts on (1 = the file's first line).

    Known where the reader dropped no blank row: the header line (after Excel's ``sep=`` line, when there
    is one), then one line per row plus the line breaks inside its quoted cells (``cells``, as the file
    writes them). None for a bundled or generated table, a sheet or a Parquet file, or when blank rows
    were dropped (their places are not kept).
    """
    info = read_info(data.table)
    if data.kind != "upload" or info is None or info.format != "text" or info.blank_rows or cells is None:
        return None
    breaks = np.zeros(len(cells), dtype=np.int64)
    for name in cells.columns:
        column = cells[name]
        if not pd.api.types.is_numeric_dtype(column.dtype):
            breaks += column.map(lambda v: v.count("\n") if isinstance(v, str) else 0).to_numpy(dtype=np.int64)
    first = 2 + (1 if info.delimiter_line else 0)
    return first + np.arange(len(cells)) + np.concatenate([[0], np.cumsum(breaks)[:-1]])


def named_rows(rows: pd.DataFrame, data, identifier: str | None, lines: np.ndarray | None) -> pd.DataFrame:
    """``rows`` (indexed by row labels of ``data.table``) named as a person finds them in their table.

    Columns put first: the identifier column's value (when the table has one), ``row`` (the row's number,
    1 = the first row of data) and ``line in the file`` (where :func:`file_lines` knows it).
    """
    positions = data.table.index.get_indexer(rows.index)
    names: dict[str, object] = {}
    if identifier is not None:
        names[identifier] = data.table[identifier].to_numpy()[positions]
    names["row"] = positions + 1
    if lines is not None:
        names["line in the file"] = lines[positions]
    front = pd.DataFrame(names, index=rows.index)
    clash = [name for name in front.columns if name in rows.columns]
    return pd.concat([front, rows.drop(columns=clash)], axis=1).reset_index(drop=True)


def show_rows(rows: pd.DataFrame, n_features: int, *, key: str, file_name: str, column_config: dict) -> None:
    """A card's paragon or border rows: their measures and first :data:`CARD_COLUMNS` feature columns.

    Parameters
    ----------
    rows : DataFrame
        :attr:`ClusterCard.paragons` or :attr:`ClusterCard.border` named by :func:`named_rows`: the rows'
        names and measures, then one column per fitted feature.
    n_features : int
        The fit's number of features (the columns after the measures).
    key, file_name : str
        The table's widget key, and the file name of the whole rows' download when some columns are not drawn.
    column_config : dict
        Passed to ``st.dataframe``.
    """
    n_measures = rows.shape[1] - n_features
    shown = rows.iloc[:, : n_measures + CARD_COLUMNS]
    show_table(shown, key=key, column_config=column_config, hide_index=True)
    if shown.shape[1] < rows.shape[1]:
        st.caption(f"The first {CARD_COLUMNS} of the {n_features:,} feature columns are drawn (the cluster's "
                   "selected features first); the download holds these rows with every column.")
        # The bytes are given, not a callable: a deferred file (made on click) never arrived within 30 s under
        # load in tests/browser/test_flows.py (Export's labels), for a reason not found yet.
        st.download_button("These rows with every column (CSV)", to_csv_bytes(rows, index=False),
                           file_name=file_name, mime="text/csv", key=f"{key}_download", icon=":material/download:")
