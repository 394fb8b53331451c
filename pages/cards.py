"""Cluster cards: what defines one cluster — a rule, the evidence per feature, its paragons and border rows, its stability."""

import streamlit as st

from craft.stability import UNSTABLE_JACCARD
from explorer import cache, cards, context, evidence, frame, steering
from explorer.figure_export import chart
from explorer.ui import esc

ctx = frame.current()
st.title("Cluster cards")
model = context.require_model(ctx)
assert ctx.data is not None  # require_model stopped the page otherwise

# Whether the cluster is found again leads the card: its stability sits in the picker and beside the name, before
# the rule's precision (once the stability run below has finished).
stability = evidence.result(ctx, "stability")  # None until the run has finished (or when it failed)
picker, summary = st.columns([1, 2], vertical_alignment="bottom")
cluster = picker.selectbox("Cluster", list(range(model.n_clusters_)), key="card_cluster",
                           format_func=lambda k: cards.cluster_label(model, k, stability))
card = cards.card(ctx.key, cluster, model, ctx.X)
numeric_figure, level_figure = cards.figures(ctx.key, cluster, card)
mark = summary.container(key="card_stability_mark")
if stability is None:
    mark.badge("Stability: not run yet (below)", icon=":material/help:", color="gray")
elif stability.unstable[cluster]:
    mark.badge(f"Unstable: mean Jaccard below {UNSTABLE_JACCARD} ({stability.mean_jaccard[cluster]:.2f})",
               icon=":material/warning:", color="orange")
else:
    mark.badge(f"Stable: mean Jaccard {stability.mean_jaccard[cluster]:.2f}", icon=":material/check:",
               color="green")
summary.markdown(esc(card.words.summary))
# Steering from the card: merge this cluster with another or split it (explorer.steering; Tune & see lists them).
steering.cluster_buttons(ctx, cluster)

st.subheader("A rule for it")
rule = card.rule
if rule is not None and rule.paths:
    st.markdown(f"**{esc(rule.text)}**")
    st.markdown(f"Precision **{rule.precision:.0%}** · recall **{rule.recall:.0%}** · accuracy "
                f"**{rule.accuracy:.0%}**",
                help="Precision: of the rows the rule picks, the share CRAFT put in this cluster. Recall: of the "
                     "cluster's rows, the share the rule picks. Accuracy: rows on which the rule and CRAFT agree.")
st.caption(esc(card.words.rule))

st.subheader("Evidence: this cluster against all rows")
if numeric_figure is not None:
    chart(numeric_figure, key="card_numeric", name=f"craft_card_{cluster}_numeric")
st.caption(esc(card.words.tests))
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
                 column_config={"% here": st.column_config.NumberColumn(format="%.1f"),
                                "% overall": st.column_config.NumberColumn(format="%.1f"),
                                "v-test": st.column_config.NumberColumn(format="%.3g")})

st.subheader("Paragons: its most typical rows")
st.caption(esc(card.words.paragons))
n_features = len(model.engine_features_)
# Rows named as the person finds them: the table's identifier column, the row's number and the file's line.
upload = st.session_state.get("upload") if ctx.data.kind == "upload" else None
identifier = cards.identifier_column(ctx.data, ctx.schema, ctx.label)
lines = cards.file_lines(ctx.data, cache.original_cells(ctx.data.key, ctx.data, upload["data"]) if upload else None)
cards.show_rows(cards.named_rows(card.paragons, ctx.data, identifier, lines), n_features, key="card_paragons", file_name=f"craft_card_{cluster}_paragons.csv",
                column_config={"cost": st.column_config.NumberColumn(format="%.4g")})

st.subheader("Border rows: members nearest to another cluster")
st.caption(esc(card.words.border))
if len(card.border):
    cards.show_rows(cards.named_rows(card.border, ctx.data, identifier, lines), n_features, key="card_border", file_name=f"craft_card_{cluster}_border.csv",
                    column_config={name: st.column_config.NumberColumn(format="%.4g")
                                   for name in ("cost", "next_cost", "margin")})

st.subheader("Link rows")
st.caption("Tick paragon or border rows (of this card or others: the picked rows stay as you change cluster), then "
           "put them together or keep them apart; Tune & see lists every link, with undo.")
card_rows = list(dict.fromkeys(list(card.paragons.index) + list(card.border.index)))
positions = ctx.X.index.get_indexer(card_rows)
steering.link_controls(ctx, [(int(p), str(label)) for p, label in zip(positions, card_rows, strict=True) if p >= 0],
                       key="card_link")

st.subheader("Why a paragon or border row is here")
explained = [label for label in list(card.paragons.index) + list(card.border.index) if label in ctx.X.index]
steering.show_explanation(model, ctx.X.loc[explained], key="card_explain", name=f"craft_card_{cluster}_explanation",
                          what="paragon or border row")

st.subheader("Stability: is it found again?")
st.caption(f"Refits CRAFT on {evidence.STABILITY_RESAMPLES} bootstrap resamples of the rows, in the background (the "
           "same run as on the Evaluate page), and matches this cluster to its most similar refit cluster by the "
           "Jaccard similarity of their rows. The table shows how often each feature stays selected.")
evidence.show_cluster_stability(ctx, cluster)
