"""The Cluster cards page's services: cards cached per fit and cluster, and their tables for display.

The numbers are :func:`craft.cards.cluster_card`'s; here they are only kept
(``st.cache_data``, keyed by the fit's digest and the cluster, the model and
table passed unhashed as everywhere in :mod:`explorer.cache`) and renamed for
people. The cost matrix of a fit is computed once for all its cards.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from craft import card_plots, cards
from craft.cards import ClusterCard
from craft.export import to_csv_bytes

from .ui import show_table

#: Rows of the paragon and border tables.
CARD_ROWS = 5
#: Feature columns of the paragon and border tables drawn (the cluster's selected features come first); a wider
#: table's rows are downloadable whole. Ten thousand columns took seconds to send and to draw.
CARD_COLUMNS = 200
#: What the smallest p-value a float holds is shown as (a v-test beyond ±38 underflows p to 0).
P_FLOOR = "< 1e-300"


@st.cache_data(max_entries=4, show_spinner=False)
def costs(key: str, _model, _X) -> np.ndarray:
    """``cost_terms(X).total`` of the fit named ``key``: every row's CRAFT cost to every cluster."""
    return _model.cost_terms(_X).total


@st.cache_data(max_entries=32, show_spinner="Building the card…")
def card(key: str, cluster: int, _model, _X) -> ClusterCard:
    """The card of ``cluster`` of the fit named ``key``."""
    return cards.cluster_card(_model, _X, cluster, n_rows=CARD_ROWS, costs=costs(key, _model, _X))


@st.cache_resource(max_entries=32, show_spinner=False)
def figures(key: str, cluster: int, _card: ClusterCard):
    """The card's numeric and level figures (None where the fit has no such feature or none is selected)."""
    numeric = card_plots.fig_card_numeric(_card) if len(_card.numeric) else None
    levels = card_plots.fig_card_levels(_card) if _card.levels["selected"].any() else None
    return numeric, levels


def cluster_label(model, cluster: int) -> str:
    """``"cluster 2 (310 rows)"``."""
    return f"cluster {cluster} ({int(model.cluster_sizes_[cluster]):,} rows)"


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


def show_rows(rows: pd.DataFrame, n_features: int, *, key: str, file_name: str, column_config: dict) -> None:
    """A card's paragon or border rows: their measures and first :data:`CARD_COLUMNS` feature columns.

    Parameters
    ----------
    rows : DataFrame
        :attr:`ClusterCard.paragons` or :attr:`ClusterCard.border`: measures, then one column per fitted feature.
    n_features : int
        The fit's number of features (the columns after the measures).
    key, file_name : str
        The table's widget key, and the file name of the whole rows' download when some columns are not drawn.
    column_config : dict
        Passed to ``st.dataframe``.
    """
    n_measures = rows.shape[1] - n_features
    shown = rows.iloc[:, : n_measures + CARD_COLUMNS]
    show_table(shown, key=key, column_config=column_config)
    if shown.shape[1] < rows.shape[1]:
        st.caption(f"The first {CARD_COLUMNS} of the {n_features:,} feature columns are drawn (the cluster's "
                   "selected features first); the download holds these rows with every column.")
        # The bytes are given, not a callable: a deferred file (made on click) never arrived within 30 s under
        # load in tests/browser/test_flows.py (Export's labels), for a reason not found yet.
        st.download_button("These rows with every column (CSV)", to_csv_bytes(rows, index=True),
                           file_name=file_name, mime="text/csv", key=f"{key}_download", icon=":material/download:")
