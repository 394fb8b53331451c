"""Exports: formula injection neutralised, negative numbers kept, labels/masks/params round trip."""

import io
import json

import numpy as np
import pandas as pd
import pytest

from craft import CRAFT, Schema
from craft.export import (
    labels_csv,
    masks_csv,
    neutralize,
    neutralize_frame,
    params_json,
    to_csv_bytes,
)


@pytest.mark.parametrize(
    ("cell", "expected"),
    [
        ("=SUM(A1:A9)", "'=SUM(A1:A9)"),
        ("+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"),
        ("-2+3", "'-2+3"),
        ("@SUM(1)", "'@SUM(1)"),
        ("\t=1", "'\t=1"),
        ("\r=1", "'\r'=1"),  # and the line after the break
        (" =1+1", "' =1+1"),  # behind a leading space
        ("\u200b=1+1", "'\u200b=1+1"),  # behind a zero-width space
        ("\ufeff@x", "'\ufeff@x"),
        ("\uff1d1+1", "'\uff1d1+1"),  # full-width ＝
        ("\uff0bcmd", "'\uff0bcmd"),
        ("\uff0d1", "'\uff0d1"),
        ("\uff20SUM(1)", "'\uff20SUM(1)"),
        ("\ufe661+1", "'\ufe661+1"),  # small ﹦
        ("abc\r=2+2", "abc\r'=2+2"),  # after a line break inside the cell
        ("abc\n =2+2", "abc\n' =2+2"),
        ("abc\r\n@x", "abc\r\n'@x"),
        (" -1.5", " -1.5"),
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


# Cells that try to break out of their cell or run as a formula, generated here.
INJECTION_CELLS = [
    "\r=1+1", "abc\r=2+2", "\n=3+3", "x\r\n=4+4", " =5+5", "\u200b=6+6", "\ufeff+cmd", "\uff1d8+8", "\ufe66",
    "\uff0b1", "\uff0d1", "\uff20x", "a,b", 'say "hi"', '"', ",", "\r", "\n", "\r\n", "tab\there", "=HYPERLINK(\"x\")",
    "-1.5", "plain", "",
]


def _escaped(cell: str) -> str:
    """What a reader must get back for ``cell``: the cell, neutralised."""
    return neutralize(cell)


def _records(data: bytes) -> list[list[str]]:
    import csv

    return list(csv.reader(io.StringIO(data.decode("utf-8"), newline="")))


def test_labels_csv_injection_corpus_reads_back_cell_for_cell():
    cells = INJECTION_CELLS
    table = pd.DataFrame({"t": cells, "n": np.arange(len(cells), dtype=float)})
    data = labels_csv(table, np.arange(len(cells)) % 3)
    # Python's csv module: one record per row, every cell intact.
    records = _records(data)
    assert len(records) == len(cells) + 1
    assert [r[0] for r in records[1:]] == [_escaped(c) for c in cells]
    assert [r[2] for r in records[1:]] == [str(i % 3) for i in range(len(cells))]
    # pandas' C and Python parsers agree.
    for engine in ("c", "python"):
        back = pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False, engine=engine)
        assert back.shape == (len(cells), 3)
        assert back["t"].tolist() == [_escaped(c) for c in cells]
    # No line of the file starts with a formula prefix: a line break inside a
    # cell is never followed by a runnable formula.
    for line in data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        assert not line.lstrip(" \u200b\ufeff").startswith(("=", "+", "@", "\uff1d", "\uff0b", "\uff20", "\ufe66")), line
    # Every cell with a CR, LF, delimiter or quote is quoted.
    text = data.decode("utf-8")
    for cell in cells:
        if any(ch in cell for ch in "\r\n,\""):
            quoted = '"' + _escaped(cell).replace('"', '""') + '"'
            assert quoted in text, cell


def test_masks_csv_with_injection_feature_names():
    names = [c for c in INJECTION_CELLS if c.strip() and c not in ("-1.5",)]
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(40, len(names))), columns=names)
    X.iloc[:20] += 5.0
    model = CRAFT(m=0.5, k=2, n_init=1, random_state=0, categorical=[]).fit(X)
    data = masks_csv(model)
    records = _records(data)
    assert records[0][3:] == [_escaped(n) for n in names]
    assert len(records) == 1 + model.n_clusters_
    back = pd.read_csv(io.BytesIO(data))
    assert back.shape == (model.n_clusters_, 3 + len(names))


def test_report_escapes_injection_cells():
    from craft.report import Section, render_report

    table = pd.DataFrame({"</script><script>alert(1)</script>": INJECTION_CELLS})
    page = render_report("=1+1\r<b>", [Section("\r=2", ["\n@x <i>"], [table])])
    assert "<script>alert(1)" not in page and "<b>" not in page and "<i>" not in page
    assert "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in page


def _csv_cells(data: bytes) -> list[list[str]]:
    import csv

    return list(csv.reader(io.StringIO(data.decode("utf-8"), newline="")))


def _written(value) -> str:
    """A cell as the file holds it, in the labels file's spelling: missing → empty."""
    return "" if value is None else str(value)


def test_labels_csv_of_a_parquet_file_gives_back_every_cell_as_written(tmp_path):
    import pyarrow.parquet as pq

    from craft.io import read_table

    rng = np.random.default_rng(0)
    n = 200
    gaps = rng.random(n) < 0.2
    frame = pd.DataFrame({
        "f32": pd.Series(rng.normal(60, 10, n).astype(np.float32)).mask(gaps),
        "flag": pd.array(rng.random(n) < 0.5, dtype="boolean"),
        "count": pd.array(rng.integers(-5, 2**60, n), dtype="Int64"),
        "name": pd.array([f"n{i}" for i in range(n)], dtype="string"),
    })
    for column in ("flag", "count", "name"):
        frame.loc[rng.random(n) < 0.2, column] = pd.NA
    path = tmp_path / "typed.parquet"
    frame.to_parquet(path)
    source = pq.read_table(path)
    expected = [
        ["" if v is None else str(np.float32(v)) for v in source.column("f32").to_pylist()],
        *([_written(v) for v in source.column(c).to_pylist()] for c in ("flag", "count", "name")),
    ]
    cells = read_table(path.read_bytes(), name="typed.parquet", as_text=True)
    rows = _csv_cells(labels_csv(cells, np.zeros(n, dtype=int)))
    assert rows[0] == ["f32", "flag", "count", "name", "craft_cluster"]
    written = [list(column) for column in zip(*rows[1:], strict=True)][:4]
    assert written == expected
    assert "68.63013458251953" not in written[0] and "<NA>" not in written[1]


def test_labels_csv_of_a_workbook_gives_back_every_cell_as_written(tmp_path):
    import datetime

    import openpyxl

    from craft.io import read_table

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["value", "whole", "flag", "code", "day"])
    rng = np.random.default_rng(1)
    for i in range(60):
        sheet.append([None if i % 7 == 0 else float(np.float32(rng.normal(60, 10))), int(rng.integers(-9, 2**50)),
                      None if i % 5 == 0 else bool(i % 2), f"{i:05d}",
                      datetime.datetime(2020, 1, 1) + datetime.timedelta(days=i, hours=i % 3)])
    path = tmp_path / "book.xlsx"
    book.save(path)
    source = openpyxl.load_workbook(path).active
    expected = [[_written(cell.value) for cell in row] for row in source.iter_rows(min_row=2)]
    cells = read_table(path.read_bytes(), name="book.xlsx", as_text=True)
    rows = _csv_cells(labels_csv(cells, np.zeros(60, dtype=int)))
    assert [row[:5] for row in rows[1:]] == expected
