"""Real labelled datasets bundled with CRAFT (from the UCI repository).

The files are package data (``craft/data/*.csv``, read with
:mod:`importlib.resources`, so they load from an installed wheel as from the
repository); set the environment variable ``CRAFT_DATASETS_DIR`` to read them
from another folder. Each file has one row per item, the features first and
the true class last, in a column named ``class``. The class is for evaluation
only: never fit on it. Provenance and licences: ``craft/data/README.md``.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

from .exceptions import CraftInputError
from .schema import Schema

__all__ = ["list_datasets", "load", "dataset_schema"]

ENV_VAR = "CRAFT_DATASETS_DIR"
TARGET = "class"


@dataclass(frozen=True)
class _Dataset:
    file: str
    description: str
    source: str
    # (X) -> {column: (role, reason)}, in column order.
    roles: Callable[[pd.DataFrame], dict[str, tuple[str, str]]]
    integer_codes: bool = False  # features are categorical integer codes


def _levels(column: pd.Series) -> str:
    values = column.dropna()
    return f"{values.nunique()} levels ({values.min()}–{values.max()})"


def _spambase_roles(X: pd.DataFrame) -> dict[str, tuple[str, str]]:
    roles = {}
    for column in X.columns:
        if column.startswith("capital"):
            what = "length of runs of capital letters"
        elif column.startswith("char"):
            what = "frequency of a character (% of characters)"
        else:
            what = "frequency of a word (% of words)"
        roles[column] = ("numeric", f"bundled dataset: {what} → numeric")
    return roles


def _splice_roles(X: pd.DataFrame) -> dict[str, tuple[str, str]]:
    return {
        column: ("categorical",
                 "bundled dataset: nucleotide (A, C, G or T) at this position → categorical")
        for column in X.columns
    }


def _soybean_roles(X: pd.DataFrame) -> dict[str, tuple[str, str]]:
    return {
        column: ("categorical",
                 f"bundled dataset: categorical attribute coded as integers, "
                 f"{_levels(X[column])} → categorical")
        for column in X.columns
    }


def _zoo_roles(X: pd.DataFrame) -> dict[str, tuple[str, str]]:
    roles = {}
    for column in X.columns:
        if column == "legs":
            values = ", ".join(str(v) for v in sorted(X[column].unique()))
            roles[column] = (
                "categorical",
                f"bundled dataset: number of legs takes only {X[column].nunique()} "
                f"values ({values}) → categorical; it is a count, so numeric is fair "
                f"too (override to use it as a number)",
            )
        else:
            roles[column] = ("categorical", "bundled dataset: yes/no attribute → categorical")
    return roles


def _credit_roles(X: pd.DataFrame) -> dict[str, tuple[str, str]]:
    roles = {}
    for column in X.columns:
        if pd.api.types.is_numeric_dtype(X[column].dtype):
            values = X[column]
            roles[column] = (
                "numeric",
                f"bundled dataset: numeric attribute ({values.min():g}–{values.max():g}) "
                f"→ numeric",
            )
        else:
            roles[column] = (
                "categorical",
                f"bundled dataset: categorical attribute with {X[column].nunique()} "
                f"levels → categorical",
            )
    return roles


def _wine_roles(X: pd.DataFrame) -> dict[str, tuple[str, str]]:
    return {
        column: ("numeric", "bundled dataset: chemical measurement → numeric")
        for column in X.columns
    }


_DATASETS: dict[str, _Dataset] = {
    "spambase": _Dataset(
        file="spambase.csv",
        description="E-mails: 57 word/character frequencies and capital-run lengths; "
        "spam or not",
        source="UCI Spambase (Hopkins, Reeber, Forman, Suermondt, 1999)",
        roles=_spambase_roles,
    ),
    "splice": _Dataset(
        file="splice.csv",
        description="DNA sequences: nucleotides at 60 positions around a splice "
        "junction; exon/intron, intron/exon or neither",
        source="UCI Molecular Biology (Splice-junction Gene Sequences), StatLog coding",
        roles=_splice_roles,
    ),
    "soybean": _Dataset(
        file="soybean.csv",
        description="Soybean plants: 35 categorical symptoms coded as small integers, "
        "with missing cells; 19 diseases",
        source="UCI Soybean (Large)",
        roles=_soybean_roles,
        integer_codes=True,
    ),
    "zoo": _Dataset(
        file="zoo.csv",
        description="Animals: 15 yes/no attributes and the number of legs; "
        "7 classes",
        source="UCI Zoo",
        roles=_zoo_roles,
    ),
    "credit-g": _Dataset(
        file="credit-g.csv",
        description="Loan applicants: 13 categorical and 7 numeric attributes; "
        "good or bad credit risk",
        source="UCI Statlog (German Credit Data)",
        roles=_credit_roles,
    ),
    "wine": _Dataset(
        file="wine.csv",
        description="Wines: 13 chemical measurements; 3 cultivars",
        source="UCI Wine, via scikit-learn load_wine",
        roles=_wine_roles,
    ),
}


def _override_dir() -> str | None:
    """The folder named by ``CRAFT_DATASETS_DIR``, or None for the bundled files."""
    override = os.environ.get(ENV_VAR)
    return str(Path(override).expanduser()) if override else None


def _info(name: str) -> _Dataset:
    if not isinstance(name, str) or name not in _DATASETS:
        valid = ", ".join(repr(n) for n in _DATASETS)
        raise CraftInputError(f"unknown dataset {name!r}; valid names are {valid}")
    return _DATASETS[name]


@functools.lru_cache(maxsize=16)
def _read(folder: str | None, file: str, integer_codes: bool) -> pd.DataFrame:
    """The file as a frame (cached: never hand it out without copying).

    ``folder`` None reads the package's own copy through
    :mod:`importlib.resources` (a real file for any installed wheel).
    """
    try:
        if folder is None:
            with resources.as_file(resources.files("craft").joinpath("data", file)) as path:
                df = pd.read_csv(path, keep_default_na=False, na_values=[""])
        else:
            df = pd.read_csv(Path(folder) / file, keep_default_na=False, na_values=[""])
    except FileNotFoundError:
        where = f"folder {folder!r}" if folder is not None else "the installed package (craft/data)"
        raise CraftInputError(
            f"bundled dataset file {file!r} is missing from {where}; reinstall craft-explorer "
            f"or point {ENV_VAR} at a folder that holds it"
        ) from None
    if TARGET not in df.columns:
        raise CraftInputError(f"bundled dataset file {file!r} has no {TARGET!r} column")
    if integer_codes:
        features = [c for c in df.columns if c != TARGET]
        # Nullable integers: codes stay integers around the missing cells.
        df[features] = df[features].astype("Int64")
    return df


def _frame(name: str) -> pd.DataFrame:
    info = _info(name)
    return _read(_override_dir(), info.file, info.integer_codes)


def load(name: str, *, as_frame: bool = True) -> tuple[pd.DataFrame, pd.Series]:
    """Load a bundled dataset as features and true classes.

    Parameters
    ----------
    name : str
        One of ``list_datasets()["name"]``: ``"spambase"``, ``"splice"``,
        ``"soybean"``, ``"zoo"``, ``"credit-g"``, ``"wine"``.
    as_frame : bool, default=True
        If False, return NumPy arrays (``X`` of dtype object when the
        features have mixed types) instead of a DataFrame and a Series.

    Returns
    -------
    X : pandas.DataFrame of shape (n_samples, n_features)
        Features with dtypes that suit :func:`craft.schema.infer_schema`:
        floats, integers, booleans, text; soybean's integer codes are
        nullable ``Int64`` because of its missing cells.
    y : pandas.Series of shape (n_samples,)
        True class labels (text), named ``"class"``. For evaluation only.

    Both are fresh copies: changing them does not change later loads.

    Raises
    ------
    CraftInputError
        If ``name`` is not a bundled dataset, or its file is missing.

    Examples
    --------
    >>> X, y = load("wine")
    >>> X.shape, y.nunique()
    ((178, 13), 3)
    """
    df = _frame(name)
    X = df.drop(columns=TARGET).copy(deep=True)
    y = df[TARGET].copy(deep=True)
    if not as_frame:
        return X.to_numpy(), y.to_numpy()
    return X, y


def dataset_schema(name: str) -> Schema:
    """The recommended column roles for a bundled dataset.

    These follow what the data mean rather than how they are stored:
    soybean's integer codes and zoo's ``legs`` are categorical, spambase and
    wine are all numeric, splice all categorical, credit-g has 13
    categorical and 7 numeric columns. Every reason starts with
    ``"bundled dataset:"``.

    Parameters
    ----------
    name : str
        A bundled dataset's name.

    Returns
    -------
    Schema
        Roles for every feature column of ``load(name)[0]``; nothing
        ignored.

    Raises
    ------
    CraftInputError
        If ``name`` is not a bundled dataset.

    Examples
    --------
    >>> s = dataset_schema("zoo")
    >>> len(s.categorical), s.numeric
    (16, ())
    """
    info = _info(name)
    X = _frame(name).drop(columns=TARGET)
    roles = info.roles(X)
    by_role: dict[str, list[str]] = {"numeric": [], "categorical": [], "ignored": []}
    for column, (role, _) in roles.items():
        by_role[role].append(column)
    return Schema(
        numeric=tuple(by_role["numeric"]),
        categorical=tuple(by_role["categorical"]),
        ignored=tuple(by_role["ignored"]),
        reasons={column: reason for column, (_, reason) in roles.items()},
    )


def list_datasets() -> pd.DataFrame:
    """The bundled datasets, one row each.

    Returns
    -------
    pandas.DataFrame
        Columns ``name``, ``rows``, ``features``, ``numeric``,
        ``categorical`` (counts under :func:`dataset_schema`), ``classes``,
        ``description`` and ``source``.

    Examples
    --------
    >>> table = list_datasets().set_index("name")
    >>> table.loc["credit-g", ["rows", "features", "numeric", "categorical", "classes"]].tolist()
    [1000, 20, 7, 13, 2]
    """
    rows = []
    for name, info in _DATASETS.items():
        df = _frame(name)
        schema = dataset_schema(name)
        rows.append(
            {
                "name": name,
                "rows": int(df.shape[0]),
                "features": int(df.shape[1] - 1),
                "numeric": len(schema.numeric),
                "categorical": len(schema.categorical),
                "classes": int(df[TARGET].nunique()),
                "description": info.description,
                "source": info.source,
            }
        )
    frame = pd.DataFrame(rows)
    for column in ("rows", "features", "numeric", "categorical", "classes"):
        frame[column] = frame[column].astype(np.int64)
    return frame
