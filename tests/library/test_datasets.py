"""The bundled datasets: documented shapes and classes, recommended schemas,
caching that cannot be corrupted by callers, and the folder override."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from craft import datasets
from craft.datasets import dataset_schema, list_datasets, load
from craft.exceptions import CraftInputError
from craft.schema import infer_schema

# name: (rows, features, classes, numeric, categorical)
DOCUMENTED = {
    "spambase": (4601, 57, 2, 57, 0),
    "splice": (3186, 60, 3, 0, 60),
    "soybean": (683, 35, 19, 0, 35),
    "zoo": (101, 16, 7, 0, 16),
    "credit-g": (1000, 20, 2, 7, 13),
    "wine": (178, 13, 3, 13, 0),
}


@pytest.mark.parametrize("name", DOCUMENTED)
def test_load_has_the_documented_shape_and_classes(name):
    rows, features, classes, _, _ = DOCUMENTED[name]
    X, y = load(name)
    assert isinstance(X, pd.DataFrame) and isinstance(y, pd.Series)
    assert X.shape == (rows, features)
    assert y.name == "class" and len(y) == rows
    assert y.nunique() == classes
    assert "class" not in X.columns
    assert all(isinstance(c, str) for c in X.columns)


@pytest.mark.parametrize("name", DOCUMENTED)
def test_dataset_schema_covers_every_column(name):
    _, _, _, numeric, categorical = DOCUMENTED[name]
    X, _ = load(name)
    schema = dataset_schema(name)
    assert schema.columns == tuple(X.columns)
    assert len(schema.numeric) == numeric and len(schema.categorical) == categorical
    assert schema.ignored == ()
    assert all(r.startswith("bundled dataset: ") for r in schema.reasons.values())


def test_list_datasets_matches_the_files():
    table = list_datasets()
    assert list(table.columns) == [
        "name", "rows", "features", "numeric", "categorical", "classes", "description",
        "source",
    ]
    assert sorted(table["name"]) == sorted(DOCUMENTED)
    for row in table.itertuples(index=False):
        assert (row.rows, row.features, row.classes, row.numeric, row.categorical) == \
            DOCUMENTED[row.name]
        assert row.description and row.source


def test_known_values():
    X, y = load("wine")
    assert list(X.columns[:3]) == ["alcohol", "malic_acid", "ash"]
    assert X.loc[0, "alcohol"] == 14.23 and X.loc[0, "proline"] == 1065.0
    assert sorted(y.unique()) == ["class_0", "class_1", "class_2"]
    assert y.value_counts().to_dict() == {"class_1": 71, "class_0": 59, "class_2": 48}
    X, y = load("spambase")
    assert y.value_counts().to_dict() == {"nonspam": 2788, "spam": 1813}
    X, y = load("splice")
    assert set(np.unique(X.to_numpy())) == {"A", "C", "G", "T"}
    assert y.value_counts()["n"] == 1654


def test_soybean_codes_are_nullable_integers_with_the_missing_cells():
    X, _ = load("soybean")
    assert all(str(dtype) == "Int64" for dtype in X.dtypes)
    assert int(X.isna().sum().sum()) == 2337
    # With those dtypes, inference agrees with the recommendation.
    assert infer_schema(X).categorical == dataset_schema("soybean").categorical


def test_zoo_legs_is_categorical_with_a_reason():
    schema = dataset_schema("zoo")
    assert "legs" in schema.categorical
    reason = schema.reasons["legs"]
    assert "0, 2, 4, 5, 6, 8" in reason and "numeric is fair" in reason
    X, _ = load("zoo")
    assert X["hair"].dtype == bool


def test_credit_g_roles_follow_the_types():
    X, _ = load("credit-g")
    schema = dataset_schema("credit-g")
    assert schema.numeric == (
        "duration", "credit_amount", "installment_commitment", "residence_since", "age",
        "existing_credits", "num_dependents",
    )
    assert "checking_status" in schema.categorical
    # "none" is a level here, not a missing marker.
    assert X.isna().sum().sum() == 0 and (X["other_parties"] == "none").sum() > 0


def test_returned_frames_are_copies():
    X, y = load("zoo")
    X.loc[0, "legs"] = 99
    del X["hair"]
    y.iloc[0] = "changed"
    X2, y2 = load("zoo")
    assert X2.loc[0, "legs"] == 4 and "hair" in X2.columns and y2.iloc[0] == "mammal"


def test_as_frame_false_returns_arrays():
    X, y = load("wine", as_frame=False)
    assert isinstance(X, np.ndarray) and X.shape == (178, 13) and X.dtype == np.float64
    assert isinstance(y, np.ndarray) and y[0] == "class_0"


@pytest.mark.parametrize("bad", ["iris", "Wine", "", None])
def test_unknown_name_lists_the_valid_ones(bad):
    with pytest.raises(CraftInputError, match=r"unknown dataset .*'spambase'.*'wine'"):
        load(bad)
    with pytest.raises(CraftInputError, match="unknown dataset"):
        dataset_schema(bad)


def test_datasets_are_package_data():
    """The files ship inside the package (a wheel carries them); assets/datasets points there."""
    folder = Path(datasets.__file__).resolve().parent / "data"
    for name in DOCUMENTED:
        assert (folder / f"{name}.csv").is_file()
    assert (folder / "README.md").is_file()
    repository = Path(datasets.__file__).resolve().parent.parent
    assert (repository / "assets" / "datasets").resolve() == folder
    # pyproject ships exactly these as package data (the wheel check in .ci/run loads one).
    pyproject = (repository / "pyproject.toml").read_text()
    assert '"data/*.csv"' in pyproject and '"py.typed"' in pyproject
    assert (Path(datasets.__file__).resolve().parent / "py.typed").is_file()


def test_environment_override(tmp_path, monkeypatch):
    shutil.copy(Path(datasets.__file__).resolve().parent / "data" / "zoo.csv", tmp_path / "zoo.csv")
    monkeypatch.setenv("CRAFT_DATASETS_DIR", str(tmp_path))
    X, _ = load("zoo")
    assert X.shape == (101, 16)
    with pytest.raises(CraftInputError, match=r"wine\.csv.*is missing.*CRAFT_DATASETS_DIR"):
        load("wine")
