"""The Cards page (``explorer.cards``): the library's card (``craft.cards``, tested in
``tests/library/test_cards.py``) shown for the chosen cluster, its downloads, user strings and stability."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
from streamlit.testing.v1 import AppTest

from app_helpers import APP, charts, clear_caches, pytestmark, settle, start, text, upload, visit
from craft import cluster_card, synthetic
from craft import stability as trust
from explorer import cards as card_services
from explorer import evidence

__all__ = ["clear_caches", "pytestmark"]  # the autouse cache fixture and the warning filters of test_app


def test_p_values_read_as_people_write_them():
    assert [card_services.p_text(p) for p in [0.5, 0.0123, 0.001, 0.00042, 3e-41, 0.0]] == [
        "0.500", "0.012", "0.001", "0.00042", "3e-41", "< 1e-300"]


# ---------------------------------------------------------------------------
# The page


def open_cards(**query) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["n_init"] = "1"
    for key, value in query.items():
        at.query_params[key] = str(value)
    at.run()
    assert not at.exception, at.exception
    settle(at)
    at.switch_page("pages/cards.py").run()
    assert not at.exception, at.exception
    return at


def test_the_cards_page_shows_the_librarys_card_for_the_chosen_cluster():
    at = open_cards(dataset="credit-g", k=3)
    assert at.title[0].value == "Cluster cards"
    ctx = at.session_state["ctx"]
    model, X = ctx.model, ctx.X
    picker = at.selectbox(key="card_cluster")
    assert picker.options == [card_services.cluster_label(model, k) for k in range(model.n_clusters_)]
    for cluster in [0, model.n_clusters_ - 1]:
        picker.set_value(cluster).run()
        assert not at.exception, at.exception
        card = cluster_card(model, X, cluster, n_rows=card_services.CARD_ROWS)
        shown = [text(m) for m in at.markdown]
        assert card.words.summary in shown
        assert f"**{card.rule.text}**" in shown
        assert (f"Precision **{card.rule.precision:.0%}** · recall **{card.rule.recall:.0%}** · accuracy "
                f"**{card.rule.accuracy:.0%}**") in shown
        numeric, levels, paragons, border = (frame.value for frame in at.dataframe)
        np.testing.assert_allclose(numeric["v-test"], card.numeric["v_test"])
        assert list(levels["level"]) == list(card.levels["level"])
        # Rows named by their number (1 = the first row of data): credit-g has no identifier column.
        assert list(paragons["row"] - 1) == list(card.paragons.index) and paragons.columns[0] == "row"
        assert list(border["row"] - 1) == list(card.border.index)
        captions = [text(c) for c in at.caption]
        assert card.words.tests in captions and card.words.rule in captions
        titles = [spec["layout"]["title"]["text"] for spec in charts(at)]
        assert titles[0] == f"Cluster {cluster}: numeric features against all rows"
        assert titles[1].startswith(f"Cluster {cluster}: selected categorical features")


def test_a_wide_card_draws_its_first_feature_columns_and_offers_the_rows_whole(monkeypatch, downloads):
    # Three drawn columns of credit-g's 20 stand for 200 of a 10,000-column table's.
    monkeypatch.setattr(card_services, "CARD_COLUMNS", 3)
    at = open_cards(dataset="credit-g", k=3)
    ctx = at.session_state["ctx"]
    card = cluster_card(ctx.model, ctx.X, 0, n_rows=card_services.CARD_ROWS)
    paragons, border = (frame.value for frame in at.dataframe[2:4])
    # The measures, then the first three feature columns: the cluster's selected features first.
    assert list(paragons.columns) == ["row", *card.paragons.columns[:4]]
    assert list(border.columns) == ["row", *card.border.columns[:7]]
    assert list(paragons["row"] - 1) == list(card.paragons.index)
    assert sum("The first 3 of the 20 feature columns are drawn" in text(c) for c in at.caption) == 2
    for name, whole in (("craft_card_0_paragons.csv", card.paragons), ("craft_card_0_border.csv", card.border)):
        read = pd.read_csv(io.BytesIO(downloads[name]), index_col="row")
        read.index = read.index - 1  # the file numbers rows from 1, the card's index is the 0-based label
        assert list(read.columns) == list(whole.columns) and list(read.index) == list(whole.index)
        np.testing.assert_allclose(read["cost"], whole["cost"])
        # Every cell comes back as it was, exactly (only pandas' string dtype is read back as object).
        pd.testing.assert_frame_equal(read, whole, check_dtype=False, check_exact=True)


def test_user_strings_on_the_cards_page_are_shown_as_typed():
    evil = "[click](javascript:alert(1)) <b>$x$</b>"
    table = pd.DataFrame({evil: np.r_[np.zeros(10), np.ones(10) * 5] + np.linspace(0, 0.5, 20),
                          "c": [evil] * 10 + ["ok"] * 10})
    at = upload(start(), "evil.csv", table.to_csv(index=False).encode())
    visit(at, "data")  # as test_app's page loops do: the first page switch after an upload is the Data page
    at.switch_page("pages/cards.py").run()
    assert not at.exception, at.exception
    assert at.session_state["ctx"].data.name == "evil.csv"
    shown = list(at.markdown) + list(at.caption)
    assert any(evil in text(element) for element in shown)  # the summary names the selected column
    for element in shown:
        assert "[click](javascript" not in element.value and "<b>" not in element.value
    labels = [label for spec in charts(at) for trace in spec["data"] for label in trace.get("y", [])]
    assert any("&lt;b&gt;" in str(label) for label in labels) and not any("<b>" in str(label) for label in labels)


def run_stability_on_the_card(at: AppTest) -> trust.Stability:
    """Press the card's stability button, wait for the background run, and rerun the page as its poll does."""
    at.button(key="run_evidence_stability").click().run()
    assert not at.exception, at.exception
    job = at.session_state["_evidence_jobs"]["stability"]
    assert job.wait(180), "the stability run did not finish"
    at.run()
    assert not at.exception, at.exception
    return evidence.result(at.session_state["ctx"], "stability")


def shown_stability(at: AppTest) -> tuple[str, list[str], pd.DataFrame]:
    """The card's stability part: its metric, its Markdown (the badge and the sentence) and its frequency table."""
    frequency = [d.value for d in at.dataframe if "selected in the refits" in d.value.columns]
    assert len(frequency) == 1, [d.value.columns for d in at.dataframe]
    return at.metric[0].value, [text(m) for m in at.markdown], frequency[0]


UNSTABLE_MARK = f"Unstable: mean Jaccard below {trust.UNSTABLE_JACCARD}"


def test_the_cards_page_runs_stability_for_its_cluster(monkeypatch):
    monkeypatch.setattr(evidence, "STABILITY_RESAMPLES", 4)
    at = open_cards(dataset="mixed_planted", k=4, label="(none)")
    assert not at.metric and at.button(key="run_evidence_stability").label == "Run stability"
    at.selectbox(key="card_cluster").set_value(2).run()
    found = run_stability_on_the_card(at)
    assert found.n_resamples == 4 and not found.unstable.any()
    model = at.session_state["ctx"].model
    for cluster in [2, 0]:  # another cluster's card reads the same run: no second start
        at.selectbox(key="card_cluster").set_value(cluster).run()
        metric, markdown, frequency = shown_stability(at)
        assert metric == f"{found.mean_jaccard[cluster]:.2f}"
        assert found.sentence(cluster) in markdown and UNSTABLE_MARK not in " ".join(markdown)
        assert frequency["selected in this fit"].sum() == model.feature_mask_[cluster].sum()
        by_name = frequency.set_index("feature")["selected in the refits"]
        np.testing.assert_allclose(by_name[found.features], found.feature_frequency.loc[cluster])
        assert not [b for b in at.button if b.key == "run_evidence_stability"]


def test_an_unstable_cluster_is_marked_on_its_card_with_what_that_means(monkeypatch):
    monkeypatch.setattr(evidence, "STABILITY_RESAMPLES", 4)
    planted, _ = synthetic.mixed_planted(n_samples=300, random_state=0)[:2]
    noise = trust.shuffled_columns(planted, np.random.default_rng(1))  # every link between columns broken
    at = upload(start(), "noise.csv", noise.round(3).to_csv(index=False).encode())
    visit(at, "data")
    at.switch_page("pages/cards.py").run()
    found = run_stability_on_the_card(at)
    unstable = np.flatnonzero(found.unstable)
    assert len(unstable), found.mean_jaccard
    at.selectbox(key="card_cluster").set_value(int(unstable[0])).run()
    metric, markdown, _ = shown_stability(at)
    assert float(metric) < trust.UNSTABLE_JACCARD
    assert any(UNSTABLE_MARK in m for m in markdown)
    assert found.sentence(int(unstable[0])) in markdown and trust.UNSTABLE_MEANING in found.sentence(int(unstable[0]))
