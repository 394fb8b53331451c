"""Exports: formula injection neutralised, negative numbers kept, labels/masks/params round trip."""

import io
import json

import numpy as np
import pandas as pd
import pytest

from craft import CRAFT, Schema
from craft.export import labels_csv, masks_csv, neutralize, neutralize_frame, params_json, to_csv_bytes


@pytest.mark.parametrize(
    ("cell", "expected"),
    [
        ("=SUM(A1:A9)", "'=SUM(A1:A9)"),
        ("+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"),
        ("-2+3", "'-2+3"),
        ("@SUM(1)", "'@SUM(1)"),
        ("\t=1", "'\t=1"),
        ("\r=1", "'\r=1"),
        ("-1.5", "-1.5"),  # a plain negative number stays a number
        ("+7", "+7"),
        ("-3e5", "-3e5"),
        ("plain", "plain"),
        ("a=b", "a=b"),
        ("", ""),
    ],
)
def test_neutralize_cells(cell, expected):
    assert neutralize(cell) == expected


def test_neutralize_leaves_non_strings_alone():
    assert neutralize(-2.5) == -2.5
    assert neutralize(None) is None
    assert np.isnan(neutralize(np.nan))


def test_neutralize_frame_keeps_numbers_and_escapes_text_and_names():
    frame = pd.DataFrame(
        {
            "=HYPERLINK(\"x\")": [1, -2],
            "value": [-1.5, 2.0],
            "text": ["=1+1", "-7"],
            "level": pd.Categorical(["@evil", "ok"]),
        }
    )
    out = neutralize_frame(frame)
    assert list(out.columns) == ["'=HYPERLINK(\"x\")", "value", "text", "level"]
    assert out["value"].tolist() == [-1.5, 2.0] and out["value"].dtype == np.float64
    assert out.iloc[:, 0].tolist() == [1, -2]
    assert out["text"].tolist() == ["'=1+1", "-7"]
    assert out["level"].tolist() == ["'@evil", "ok"]
    assert frame["text"].tolist() == ["=1+1", "-7"]  # the input is not changed


def test_csv_keeps_negative_numbers_numeric():
    text = to_csv_bytes(pd.DataFrame({"x": [-1.25, 3.0], "s": ["-", "=cmd"]})).decode()
    assert text.splitlines() == ["x,s", "-1.25,'-", "3.0,'=cmd"]
    back = pd.read_csv(io.StringIO(text))
    assert back["x"].dtype == np.float64 and back["x"].tolist() == [-1.25, 3.0]


@pytest.fixture
def fitted():
    table = pd.DataFrame(
        {
            "size": [0.0, 0.1, 0.2, 5.0, 5.1, 5.2],
            "=colour": ["=red", "=red", "=red", "blue", "blue", "blue"],
            "id": ["a", "b", "c", "d", "e", "f"],
        }
    )
    schema = Schema(numeric=("size",), categorical=("=colour",), ignored=(),
                    reasons={"size": "numeric", "=colour": "categorical"})
    model = CRAFT(m=0.5, k=2, n_init=1, random_state=0, categorical=schema).fit(table[["size", "=colour"]])
    return table, model


def test_labels_csv_has_original_rows_and_clusters(fitted):
    table, model = fitted
    back = pd.read_csv(io.BytesIO(labels_csv(table, model.labels_)))
    assert list(back.columns) == ["size", "'=colour", "id", "craft_cluster"]
    assert back["size"].tolist() == table["size"].tolist()
    assert back["id"].tolist() == table["id"].tolist()
    assert back["'=colour"].tolist()[:3] == ["'=red"] * 3
    assert back["craft_cluster"].tolist() == model.labels_.tolist()
    clash = labels_csv(table.assign(craft_cluster=1), model.labels_).decode().splitlines()[0]
    assert clash.endswith("craft_cluster,craft_cluster_")
    with pytest.raises(ValueError, match="5 labels for a table of 6 rows"):
        labels_csv(table, model.labels_[:5])


def test_masks_csv(fitted):
    _, model = fitted
    back = pd.read_csv(io.BytesIO(masks_csv(model)))
    assert list(back.columns) == ["cluster", "n_rows", "n_selected", "size", "'=colour"]
    assert back[["size", "'=colour"]].to_numpy().tolist() == model.feature_mask_.astype(int).tolist()
    assert back["n_rows"].tolist() == model.cluster_sizes_.tolist()
    assert back["n_selected"].tolist() == model.feature_mask_.sum(axis=1).tolist()
    clash = CRAFT(m=0.5, k=2, n_init=1, random_state=0).fit(pd.DataFrame({"cluster": [0.0, 0.1, 5.0, 5.1]}))
    assert masks_csv(clash).decode().splitlines()[0] == "cluster_,n_rows,n_selected,cluster"


def test_params_json_round_trip(fitted):
    _, model = fitted
    text = params_json(
        {"m": 0.5, "rho": None, "k": np.int64(2)},
        dataset={"name": "t.csv", "rows": 6},
        schema=model.schema_,
        result={"lam_used": np.float64(model.lam_), "objective": float("nan"), "sizes": model.cluster_sizes_},
    )
    document = json.loads(text)
    assert document["parameters"] == {"m": 0.5, "rho": None, "k": 2}
    assert document["schema"] == {"numeric": ["size"], "categorical": ["=colour"], "ignored": []}
    assert document["result"]["objective"] is None
    assert document["result"]["sizes"] == model.cluster_sizes_.tolist()
    assert document["dataset"]["name"] == "t.csv"
    assert "craft_version" in document
