"""The app's computations without Streamlit: data loading, roles, fits, comparisons, sweeps, Teach."""

import dataclasses
import pickle

import numpy as np
import pandas as pd
import pytest

from craft import CRAFT, CraftInputError, _engine
from craft.metrics import align_clusters
from explorer.services import (
    EXAMPLES,
    METHODS,
    PRESETS,
    FitParams,
    LoadedData,
    column_report,
    compare_methods,
    distance_table,
    fit_craft,
    fit_schema,
    fitted_X,
    labels_for_evaluation,
    load_example,
    load_upload,
    rho_from_share,
    sweep,
    suggested_k,
    sweep_values,
    truth_agreement,
)


@pytest.fixture(scope="module")
def fig2():
    data = load_example("fig2_numeric", n_samples=90)
    schema, _ = fit_schema(data, {}, data.label)
    return data, schema


def test_fit_params_to_estimator_arguments():
    assert FitParams(m=0.4, k=5, k_method="farthest_first", n_init=4).estimator_kwargs() == dict(
        m=0.4, rho=None, rho_selection="paper", budget="fixed", standardize=True, missing="marginalise",
        random_state=0, n_init=4, max_iter=100, k=5, k_method="farthest_first",
    )
    given = FitParams(size_by="lambda", lam=3.0, budget="approximate", eps_c=0.7, eps_v=2.0).estimator_kwargs()
    assert given["lam"] == 3.0 and "k" not in given and given["eps_c"] == 0.7 and given["eps_v"] == 2.0
    assert set(PRESETS) == set(EXAMPLES)


def test_suggested_k_counts_the_label_classes():
    table = pd.DataFrame({"x": np.arange(52.0), "class": [chr(65 + i % 26) for i in range(52)]})
    data = LoadedData(key="upload:0", name="t.csv", kind="upload", table=table, schema=None, label="class")
    assert suggested_k(data) == 26
    unlabelled = LoadedData(key="upload:1", name="u.csv", kind="upload", table=table[["x"]], schema=None, label=None)
    assert suggested_k(unlabelled) == FitParams().k


def test_truth_agreement_reads_the_fitted_masks_by_column_name():
    data = load_example("fig1_binary", n_samples=90)
    model = CRAFT(m=1 / 3, k=3, random_state=0).fit(data.table[data.mask_features])
    agreement = truth_agreement(model, data)
    assert agreement["exact"] and agreement["clusters_matched"] == agreement["masks_equal"] == 3
    assert truth_agreement(model, load_example("zoo")) is None  # no planted truth


def test_fit_params_default_to_the_estimators_own_defaults():
    defaults = CRAFT().get_params()
    params = FitParams()
    for name in ("m", "rho", "rho_selection", "k_method", "budget", "eps_c", "eps_v", "standardize", "n_init",
                 "max_iter"):
        assert getattr(params, name) == defaults[name], name
    # the app's fit with its defaults is the estimator's fit with the same k and seed
    kwargs = params.estimator_kwargs()
    assert CRAFT(**kwargs).get_params() == {**defaults, "k": params.k, "random_state": params.seed}


def test_one_share_gives_one_rho_and_one_cache_key():
    rho = rho_from_share(0.33, 0.2)
    assert rho == rho_from_share(0.33, 0.2000000000000001) == pytest.approx(0.2 * 0.33 * 0.67)
    assert hash(FitParams(m=0.33, rho=rho)) == hash(FitParams(m=0.33, rho=rho_from_share(0.33, 0.2)))


def test_rho_out_of_range_is_refused_by_the_estimator_with_its_meaning(fig2):
    data, schema = fig2
    message = fit_craft(data.table, schema, FitParams(m=0.5, rho=0.3, n_init=1)).error
    assert message.startswith("rho=0.3 must lie strictly between 0 and m(1-m)=0.25 for m=0.5")
    assert "near 0 global selection" in message


@pytest.mark.parametrize("name", EXAMPLES)
def test_every_example_loads_with_a_label_and_roles(name):
    data = load_example(name, n_samples=60)
    assert data.label in data.table.columns
    assert data.schema.role(data.label) == "ignored"
    assert "evaluation only" in data.schema.reasons[data.label]
    assert data.schema.used and data.label not in data.schema.used
    if data.kind == "synthetic":
        assert data.true_mask.shape == (len(np.unique(data.true_labels)), len(data.mask_features))
        assert data.key == f"synthetic:{name}:60:0"
    else:
        assert data.true_mask is None and data.key == f"bundled:{name}"


def test_unknown_example():
    with pytest.raises(CraftInputError, match="Unknown example 'iris'"):
        load_example("iris")


@pytest.mark.parametrize(
    ("content", "name", "message"),
    [
        (b"", "empty.csv", r"Cannot read 'empty\.csv': the file is empty\. Upload a CSV/TSV"),
        (b"a,b\n", "header.csv", r"it has a header but no data rows\. Upload"),
        (b"a,b\n1,2\n", "one.csv", r"'one\.csv' has only 1 data row; clustering needs at least 2 rows"),
        (bytes(range(256)) * 20, "noise.csv", r"binary data, not text.*Upload a CSV/TSV"),
        (b"PK\x03\x04garbage", "book.xlsx", r"Upload a CSV/TSV, Parquet or Excel"),
        (b"x", "data.json", r"unsupported file type '\.json'"),
    ],
)
def test_bad_uploads_get_a_specific_message(content, name, message):
    with pytest.raises(CraftInputError, match=message):
        load_upload(content, name)


def test_upload_with_no_usable_column_says_what_to_do():
    content = ("id,name\n" + "\n".join(f"{i},n{i}" for i in range(40))).encode()
    data = load_upload(content, "ids.csv")
    assert data.key.startswith("upload:") and len(data.key) == len("upload:") + 64
    with pytest.raises(CraftInputError, match=r"No usable column.*give at least one column the role numeric"):
        fit_schema(data, {}, data.label)
    schema, _ = fit_schema(data, {"name": "categorical"}, None)
    assert schema.used == ("name",)


def test_upload_guesses_a_label_column():
    rows = "\n".join(f"{i % 7}.5,{'ab'[i % 2]},{'xy'[i % 2]}" for i in range(30))
    data = load_upload(f"v,kind,Class\n{rows}\n".encode(), "t.csv")
    assert data.label == "Class" and "named 'Class'" in data.label_reason
    assert data.schema.role("Class") == "ignored"


def test_fit_schema_overrides_and_label(fig2):
    data, _ = fig2
    schema, notes = fit_schema(data, {"f1": "ignored", "f2": "categorical", "nope": "numeric"}, data.label)
    assert "f1" in schema.ignored and "f2" in schema.categorical
    assert schema.reasons["f1"] == "set by user"
    assert notes == ["Column 'nope' from the saved roles is not in this table; skipped."]
    # another label: the dataset's own label column stays out of the fit
    other, _ = fit_schema(data, {}, "f3")
    assert "f3" in other.ignored and data.label in other.ignored
    assert "never for fitting" in other.reasons["f3"]
    # no label at all
    none, _ = fit_schema(data, {}, None)
    assert data.label in none.ignored


def test_fit_notes_say_what_was_done_with_missing_cells():
    table = pd.DataFrame({"x": [1.0, None, 3.0, 4.0, 8.0, 9.0], "c": ["a", "b", None, "a", "b", "b"]})
    data = load_upload(table.to_csv(index=False).encode(), "m.csv")
    schema, _ = fit_schema(data, {}, None)
    marginalised = fit_craft(data.table, schema, FitParams(m=0.5, k=2, n_init=1))
    assert any("2 missing cell(s) in 2 column(s) were left out of the fit" in note for note in marginalised.notes)
    imputed = fit_craft(data.table, schema, FitParams(m=0.5, k=2, n_init=1, missing="impute"))
    assert any("1 missing numeric cell(s) were filled with their column mean" in note for note in imputed.notes)
    assert imputed.model.missing == "impute" and marginalised.model.missing == "marginalise"


def test_column_report_missing_values():
    table = pd.DataFrame({"x": [1.0, None, 3.0, 4.0], "c": ["a", None, "b", "a"], "y": ["p", "q", None, "p"]})
    data = load_upload(table.to_csv(index=False).encode(), "m.csv")
    schema, _ = fit_schema(data, {}, "y")
    report = column_report(data.table, schema, "y", "impute").set_index("column")
    assert report.loc["x", "missing"] == 1 and "filled with the column mean" in report.loc["x", "missing_handling"]
    assert "level of their own" in report.loc["c", "missing_handling"]
    marginalised = column_report(data.table, schema, "y").set_index("column")  # the estimator's default
    for column in ("x", "c"):
        assert marginalised.loc[column, "missing_handling"].startswith("1 missing cell(s) left out")
    assert "left out of the evaluation" in marginalised.loc["y", "missing_handling"]
    assert report.loc["y", "role"] == "label"
    assert "left out of the evaluation" in report.loc["y", "missing_handling"]
    y, note = labels_for_evaluation(data.table, "y")
    assert y.isna().sum() == 1 and note.startswith("1 row(s) have no label")


def test_fit_craft_turns_input_problems_into_messages(fig2):
    data, schema = fig2
    assert "k = 500 clusters cannot be found in 90 rows" in fit_craft(data.table, schema, FitParams(k=500)).error
    outcome = fit_craft(data.table, schema, FitParams(m=1 / 3, k=3, n_init=2))
    assert outcome.error is None and outcome.model.n_clusters_ == 3
    assert pickle.loads(pickle.dumps(outcome.model)).labels_.tolist() == outcome.model.labels_.tolist()  # for the cache
    assert all(record.labels is not None for record in outcome.model.history_)  # what Teach shows
    assert list(fitted_X(outcome.model, data.table).columns) == list(schema.used)
    assert data.label not in outcome.model.feature_names_in_


def test_fit_craft_notes_unreachable_k(monkeypatch):
    table = pd.DataFrame({"x": [0.0, 0.1, 0.2, 5.0, 5.1, 5.2]})
    data = load_upload(table.to_csv(index=False).encode(), "two.csv")
    schema, _ = fit_schema(data, {"x": "numeric"}, None)
    # A K the search cannot reach below the distinct rows is rare; the search is made to miss here.
    original = CRAFT._validated_options
    monkeypatch.setattr(CRAFT, "_validated_options", lambda self: dataclasses.replace(original(self), init="random"))
    monkeypatch.setattr(CRAFT, "_search_lambda", lambda self, data, options, target, seed: (1e6, []))
    with pytest.warns(UserWarning, match="not reachable"):
        outcome = fit_craft(data.table, schema, FitParams(m=0.5, k=3, n_init=1))
    assert outcome.model is not None
    assert any(note.startswith("k = 3 clusters were not reached") for note in outcome.notes)


def test_fit_craft_refuses_k_beyond_the_distinct_rows():
    table = pd.DataFrame({"x": [0.0, 0.0, 0.0, 1.0, 1.0, 1.0]})
    data = load_upload(table.to_csv(index=False).encode(), "two.csv")
    schema, _ = fit_schema(data, {"x": "numeric"}, None)
    outcome = fit_craft(data.table, schema, FitParams(m=0.5, k=4, n_init=1))
    assert outcome.model is None
    assert "k=4 exceeds the 2 distinct rows of the table" in outcome.error


@pytest.mark.parametrize("method", METHODS)
def test_every_method_runs_and_is_scored(fig2, method):
    data, schema = fig2
    frame = compare_methods(data.table, schema, FitParams(m=1 / 3, n_init=1), methods=(method,), k=3,
                            y=data.table[data.label])
    row = frame.iloc[0]
    assert row.method == method and row.K >= 1 and 0 <= row.purity <= 1 and row.seconds >= 0
    if method == "CRAFT":
        assert row.ari == pytest.approx(1.0)


def test_compare_on_mixed_data_without_labels():
    data = load_example("mixed_planted", n_samples=80)
    schema, _ = fit_schema(data, {}, None)
    calls = []
    frame = compare_methods(data.table, schema, FitParams(m=0.5, n_init=1), methods=("k-prototypes", "DP-RF"), k=4,
                            progress=lambda share, text: calls.append(share))
    assert frame["purity"].isna().all() and (frame["K"] >= 1).all()
    assert calls[0] == 0.0 and calls[-1] == 1.0


def test_sweep_values_validate_the_range():
    assert sweep_values("k", 2, 5, 4) == [2, 3, 4, 5]
    assert sweep_values("m", 0.0, 1.0, 5) == [0.25, 0.5, 0.75]  # the ends are not valid m
    assert sweep_values("lam", 1, 100, 3) == pytest.approx([1, 10, 100])
    assert sweep_values("rho", 0.5, 0.9, 2) == [0.5, 0.9]
    with pytest.raises(CraftInputError, match=r"No value of rho in \[1\.2, 2\] lies inside its valid range \(0, 1\)"):
        sweep_values("rho", 1.2, 2.0, 3)
    with pytest.raises(CraftInputError, match="λ must be above 0"):
        sweep_values("lam", 0, 1, 3)
    with pytest.raises(CraftInputError, match="Cannot sweep 'n_init'"):
        sweep_values("n_init", 1, 2, 2)


def test_sweep_over_k_and_rho(fig2):
    data, schema = fig2
    frame = sweep(data.table, schema, FitParams(m=1 / 3, n_init=1), "k", [2, 3], seeds=(0, 1),
                  y=data.table[data.label])
    assert frame[["value", "seed"]].values.tolist() == [[2, 0], [2, 1], [3, 0], [3, 1]]
    assert frame.groupby("value")["K"].first().tolist() == [2, 3]
    assert frame.loc[frame.value == 3, "ari"].min() == pytest.approx(1.0)
    shares = sweep(data.table, schema, FitParams(m=0.5, n_init=1), "rho", [0.2, 0.9], seeds=(0,))
    assert shares["note"].tolist() == ["", ""] and shares["K"].notna().all()


def test_align_clusters():
    assert align_clusters(np.array([0, 0, 1, 1, 2]), np.array([1, 1, 0, 0, 0])).tolist() == [1, 0]
    assert align_clusters(np.array([0, 0, 0]), np.array([0, 1, 1])).tolist() in ([0, -1], [-1, 0])


def test_distance_table_is_the_fits_cost_terms_at_an_iteration():
    data = load_example("mixed_planted", n_samples=120)
    schema, _ = fit_schema(data, {}, data.label)
    model = fit_craft(data.table, schema, FitParams(m=0.5, k=4, n_init=1)).model
    X = fitted_X(model, data.table)
    data = model.encoder_.transform(X)
    state = model.inspect_iteration(data, 1)
    assert state.objective.total == model.inspect_iteration(X, 1).objective.total == model.history_[0].objective
    table = distance_table(model, data, state, 7)
    expected = _engine.cost_matrix(data, state.clusters, model.options_.terms)[7]
    assert np.allclose(table["total"], expected)
    assert np.allclose(table[["numeric", "categorical_selected", "categorical_global", "feature_control"]].sum(axis=1),
                       table["total"])
    assert table["n_selected"].tolist() == state.selection.selected.sum(axis=1).tolist()
    with pytest.raises(CraftInputError, match=r"row=120 must lie in 0\.\.119"):
        distance_table(model, data, state, 120)
