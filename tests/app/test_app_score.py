"""The Score new rows page through ``streamlit.testing.v1.AppTest``.

A second table is scored with the session's fit or with a model file
downloaded from the Export page; what the page shows is compared with
:meth:`craft.CRAFT.assign` on the same rows.
"""

from __future__ import annotations

import io
import json
import zipfile

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from craft import persist
from app_helpers import array, chart_elements, charts, clear_caches, ctx, errors, start, text, upload, visit  # noqa: F401 - clear_caches: autouse

#: Cells written far from every wine cluster (and kept as the file writes them).
FAR = "99999.5"


def score_table(at: AppTest, name: str, content: bytes) -> AppTest:
    at.file_uploader(key="score_uploader").set_value((name, content, "text/csv")).run()
    assert not at.exception, at.exception
    return at


def score_model(at: AppTest, name: str, content: bytes) -> AppTest:
    at.radio(key="score_with").set_value("A saved model file").run()
    at.file_uploader(key="score_model_uploader").set_value((name, content, "application/octet-stream")).run()
    assert not at.exception, at.exception
    return at


def new_rows(table: pd.DataFrame) -> tuple[pd.DataFrame, bytes]:
    """40 rows of ``table`` (its label column too) and 2 rows written far from every cluster, as a CSV file."""
    rows = table.iloc[::4].head(40).reset_index(drop=True)
    written = rows.to_csv(index=False)
    far = rows.head(2).astype(object)
    far[rows.select_dtypes("number").columns] = FAR
    written += far.to_csv(index=False, header=False)
    return pd.read_csv(io.StringIO(written)), written.encode()


def test_scoring_a_table_with_the_current_fit_shows_counts_and_the_rows_that_fit_no_cluster():
    at = start("score", dataset="wine")
    model = ctx(at).model
    table, content = new_rows(ctx(at).data.table)
    score_table(at, "next_month.csv", content)
    assert not errors(at), errors(at)
    expected = model.assign(table[[str(c) for c in model.feature_names_in_]])
    assert expected["fits_no_cluster"].to_numpy().nonzero()[0].tolist() == [40, 41]
    sizes, margins = charts(at)[:2]
    shown = array(sizes["data"][0]["y"])
    assert shown.tolist() == np.bincount(expected["cluster"], minlength=model.n_clusters_).tolist()
    assert "Where the 42 rows go" in sizes["layout"]["title"]["text"]
    assert sum(array(bar["y"]).sum() for bar in margins["data"]) == 42
    assert [m.value for m in at.metric] == ["42", str(model.n_clusters_), "2", "0"]
    listed = at.dataframe[0].value
    assert len(listed) == 2 and (listed[table.columns[1]] == FAR).all()  # the cells as written
    assert listed["craft_cluster"].tolist() == expected["cluster"].iloc[40:].tolist()
    assert any("left out of the scoring" in text(i) and text(i).endswith(f": {ctx(at).label}.") for i in at.info)


def persist_bytes(model) -> bytes:
    buffer = io.BytesIO()
    persist.save(model, buffer)
    return buffer.getvalue()


def test_a_model_downloaded_from_export_and_uploaded_back_scores_the_session_fit_labels(downloads):
    at = start("export", dataset="wine")
    model = ctx(at).model
    name = next(file for file in downloads if file.startswith("wine_craft_model"))
    saved = downloads[name]
    table = ctx(at).data.table
    assert np.array_equal(persist.load(saved).predict(ctx(at).X), model.labels_)  # the library's format
    visit(at, "score")
    score_model(at, name, saved)
    score_table(at, "wine.csv", table.to_csv(index=False).encode())
    assert not errors(at), errors(at)
    sizes = charts(at)[0]
    assert array(sizes["data"][0]["y"]).tolist() == model.cluster_sizes_.tolist()
    scored = at.session_state["score_table"]
    assert scored["name"] == "wine.csv"
    from explorer.cache import scoring  # the page's own cached result, by the model file's digest

    result = scoring(f"model:{at.session_state['score_model']['sha']}", scored["sha"], None, None)
    assert np.array_equal(result.assignment["cluster"].to_numpy(), model.labels_)


def test_missing_extra_and_differently_typed_columns_are_all_named():
    at = start("score", dataset="wine")
    model = ctx(at).model
    table, _ = new_rows(ctx(at).data.table)
    missing, typed = (str(c) for c in model.feature_names_in_[:2])
    changed = table.drop(columns=[missing]).assign(shop_id=np.arange(len(table)))
    changed[typed] = changed[typed].astype(str) + " mg"
    score_table(at, "changed.csv", changed.to_csv(index=False).encode())
    shown = " ".join(errors(at))
    assert "'changed.csv' cannot be scored" in shown, shown
    assert f"lacks the fitted column(s) ['{missing}']" in shown and "shop_id" in shown, shown
    assert f"Column '{typed}' is numeric in the schema" in shown, shown
    assert "Traceback" not in shown and not chart_elements(at)


@pytest.mark.parametrize("content", [b"not a model at all", b"PK\x03\x04" + bytes(200)])
def test_a_corrupt_model_file_gets_a_readable_message(content):
    at = start("score", dataset="wine")
    score_model(at, "model.craft", content)
    shown = " ".join(errors(at))
    assert "'model.craft' cannot be used as a model" in shown and "not a CRAFT model file" in shown, shown
    assert "Traceback" not in shown and not chart_elements(at)


def test_a_model_file_of_another_format_version_names_both_versions():
    at = start("score", dataset="wine")
    saved = zipfile.ZipFile(io.BytesIO(persist_bytes(ctx(at).model)))
    header = json.loads(saved.read("model.json"))
    header["format_version"] = persist.FORMAT_VERSION + 1
    future = io.BytesIO()
    with zipfile.ZipFile(future, "w") as archive:
        archive.writestr("model.json", json.dumps(header))
        archive.writestr("arrays.npz", saved.read("arrays.npz"))
    score_model(at, "future.craft", future.getvalue())
    shown = " ".join(errors(at))
    assert f"format version {persist.FORMAT_VERSION + 1}" in shown and f"format version {persist.FORMAT_VERSION} only" in shown


def test_a_table_without_data_rows_gets_a_readable_message():
    at = start("score", dataset="wine")
    header = ",".join(ctx(at).data.table.columns)
    score_table(at, "empty.csv", (header + "\n").encode())
    assert "'empty.csv' cannot be scored: Cannot read 'empty.csv': it has a header but no data rows" in " ".join(errors(at))


def test_levels_unseen_in_the_fit_are_scored_by_the_fits_rule_and_said():
    people = pd.DataFrame({"height": [150.0 + i % 7 + 30 * (i % 2) for i in range(40)],
                           "eyes": [["blue", "brown"][i % 2] for i in range(40)]})
    at = start()
    upload(at, "people.csv", people.to_csv(index=False).encode())
    visit(at, "score")
    new = pd.DataFrame({"height": [151.0, 182.0], "eyes": ["green", "brown"]})
    score_table(at, "new.csv", new.to_csv(index=False).encode())
    assert not errors(at), errors(at)
    said = [text(i) for i in at.info]
    assert any("Column 'eyes': 1 of 2 row(s) hold values not seen in fit ('green')" in s for s in said), said
    assert [m.value for m in at.metric][0] == "2"


def test_a_noise_fit_scores_rows_that_fit_no_cluster_as_noise():
    at = start("score", dataset="wine", noise="true")
    model = ctx(at).model
    assert model.get_params()["noise"] is True
    table, content = new_rows(ctx(at).data.table)
    score_table(at, "next_month.csv", content)
    assert not errors(at), errors(at)
    expected = model.assign(table[[str(c) for c in model.feature_names_in_]])
    assert (expected["cluster"].iloc[40:] == -1).all()
    sizes, margins = charts(at)[:2]
    kept = expected["cluster"].to_numpy()
    assert list(sizes["data"][0]["x"])[-1] == "noise"
    n_noise = int((kept == -1).sum())  # the two far rows, and wine rows the noise fit leaves out too
    assert array(sizes["data"][0]["y"]).tolist() == [*np.bincount(kept[kept >= 0], minlength=model.n_clusters_), n_noise]
    noise_bars = [bar for bar in margins["data"] if bar["name"] == "noise"]
    assert len(noise_bars) == 1 and array(noise_bars[0]["y"]).sum() == n_noise
    assert (at.dataframe[0].value["craft_cluster"] == -1).all()
    assert any("craft_cluster is -1" in c.value for c in at.caption)


def test_rows_with_values_never_seen_are_counted_named_listed_and_a_row_of_nothing_else_fits_no_cluster(downloads):
    people = pd.DataFrame({"height": [150.0 + i % 7 + 30 * (i % 2) for i in range(40)],
                           "eyes": [["blue", "brown"][i % 2] for i in range(40)],
                           "hair": [["dark", "fair"][i % 2] for i in range(40)]})
    at = start()
    upload(at, "people.csv", people.to_csv(index=False).encode())
    visit(at, "score")
    # Row 0: one unseen level; row 1: nothing known (height missing, both levels unseen); row 2: all seen.
    new = pd.DataFrame({"height": [151.0, None, 182.0], "eyes": ["green", "grey", "brown"],
                        "hair": ["dark", "red", "fair"]})
    score_table(at, "new.csv", new.to_csv(index=False).encode())
    assert not errors(at), errors(at)
    expected = ctx(at).model.assign(new)
    assert expected["unseen_cells"].tolist() == [1, 2, 0]
    assert expected["nothing_known"].tolist() == [False, True, False]
    assert [m.value for m in at.metric] == ["3", str(ctx(at).model.n_clusters_), "1", "2"]
    warned = [text(w) for w in at.warning]
    assert any("2 of 3 rows hold 3 cells with values the fit never saw" in w and "1 row(s) have nothing known" in w
               for w in warned), warned
    by_column = [d.value for d in at.dataframe if "column" in d.value.columns][0]
    assert dict(zip(by_column["column"], by_column["cells"], strict=True)) == {"eyes": 2, "hair": 1}
    listed = pd.read_csv(io.BytesIO(downloads["new_craft_unseen.csv"]))
    assert listed["eyes"].tolist() == ["green", "grey"] and listed["craft_unseen_columns"].tolist() == ["eyes", "eyes, hair"]


def test_a_cluster_write_says_its_rows_or_its_problem_and_keeps_saying_it():
    """Export's and Score's buttons that make the workers write: the rows written, or the problem, stays on the page."""
    def page():
        import streamlit as st

        from craft import CraftInputError
        from explorer.ui import cluster_write

        def write():
            if st.session_state.get("fail"):
                raise CraftInputError("The folder 'out' exists: choose another.")
            return 1234

        cluster_write("Write", "written", "Writing…", write, lambda rows: f"Wrote {rows:,} rows.")
        st.checkbox("another control", key="other")

    at = AppTest.from_function(page).run()
    assert not at.success and not at.error
    at.button(key="written").click().run()
    assert [s.value for s in at.success] == ["Wrote 1,234 rows."]
    at.checkbox(key="other").check().run()  # another control reruns the page: the outcome stays
    assert [s.value for s in at.success] == ["Wrote 1,234 rows."]
    at.session_state["fail"] = True
    at.button(key="written").click().run()
    assert not at.success and "The folder 'out' exists" in at.error[0].value
