"""Cluster cards: what defines one cluster — a rule, the evidence per feature, its paragons and border rows."""

import streamlit as st

from explorer import cards, context
from explorer.figure_export import chart
from explorer.ui import esc

ctx = context.current()
st.title("Cluster cards")
model = context.require_model(ctx)

cluster = st.selectbox("Cluster", list(range(model.n_clusters_)), key="card_cluster",
                       format_func=lambda k: cards.cluster_label(model, k))
card = cards.card(ctx.key, cluster, model, ctx.X)
numeric_figure, level_figure = cards.figures(ctx.key, cluster, card)
st.markdown(esc(card.words.summary))

st.subheader("A rule for it")
rule = card.rule
if rule is not None and rule.paths:
    st.markdown(f"**{esc(rule.text)}**")
    precision, recall, accuracy = st.columns(3)
    precision.metric("Precision", f"{rule.precision:.0%}", help="Of the rows the rule picks, the share CRAFT put in "
                     "this cluster.")
    recall.metric("Recall", f"{rule.recall:.0%}", help="Of the cluster's rows, the share the rule picks.")
    accuracy.metric("Accuracy", f"{rule.accuracy:.0%}", help="Rows on which the rule and CRAFT agree (in the "
                    "cluster or not).")
st.caption(esc(card.words.rule))

st.subheader("Evidence: this cluster against all rows")
st.caption(esc(card.words.tests))
if numeric_figure is not None:
    chart(numeric_figure, key="card_numeric", name=f"craft_card_{cluster}_numeric")
if len(card.numeric):
    st.markdown(esc(card.words.numeric))
    st.dataframe(cards.numeric_table(card), hide_index=True, key="card_numeric_table",
                 column_config={name: st.column_config.NumberColumn(format="%.4g") for name in
                                ("mean here", "mean overall", "sd here", "sd overall", "std. difference", "v-test")})
if level_figure is not None:
    chart(level_figure, key="card_levels", name=f"craft_card_{cluster}_levels")
if len(card.levels):
    st.markdown(esc(card.words.levels))
    st.dataframe(cards.level_table(card), hide_index=True, key="card_level_table",
                 column_config={"share here": st.column_config.NumberColumn(format="percent"),
                                "share overall": st.column_config.NumberColumn(format="percent"),
                                "v-test": st.column_config.NumberColumn(format="%.3g")})

st.subheader("Paragons: its most typical rows")
st.caption(esc(card.words.paragons))
st.dataframe(card.paragons, key="card_paragons", column_config={"cost": st.column_config.NumberColumn(format="%.4g")})

st.subheader("Border rows: members nearest to another cluster")
st.caption(esc(card.words.border))
if len(card.border):
    st.dataframe(card.border, key="card_border",
                 column_config={name: st.column_config.NumberColumn(format="%.4g")
                                for name in ("cost", "next_cost", "margin")})
