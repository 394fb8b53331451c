"""What the library's tests share (tests/library; app tests may import it too, the library's tests never
import the app's helpers).

- Engine options for tests that drive ``craft._engine`` directly, with the estimator's defaults:
  ``_engine.Options`` has no defaults of its own for what mirrors a parameter of ``craft.CRAFT``; tests take
  the estimator's, from its signature, as the CLI and ``DaskCRAFT`` do.
- The bundled examples, read and fitted with the library alone: the paper's synthetic sets
  (:data:`craft.synthetic.SYNTHETIC_DATASETS`) and the real datasets (:func:`craft.datasets.list_datasets`),
  the list the app offers. A fit asks for as many clusters as the example has planted clusters or true
  classes; every other parameter is the estimator's default unless given. The app's own presets
  (``explorer.services.PRESETS``) are the app's choice and are tested with the app.
- Issue 14's table of a categorical column with very many levels, and the peak memory of a call.
"""

from __future__ import annotations

import dataclasses
import inspect
import tracemalloc
import warnings
from typing import NamedTuple

import numpy as np
import pandas as pd

from craft import CRAFT, Schema, _engine, datasets, infer_schema, synthetic
from craft.priors import PriorTerms

#: The estimator's defaults of the options that mirror its parameters.
ESTIMATOR_DEFAULTS = {
    name: parameter.default
    for name, parameter in inspect.signature(CRAFT.__init__).parameters.items()
    if name in {field.name for field in dataclasses.fields(_engine.Options)} and name != "lam"
}


def engine_options(terms: PriorTerms, lam: float, **changes) -> _engine.Options:
    """``_engine.Options`` with the estimator's defaults, ``changes`` applied."""
    return _engine.Options(terms=terms, lam=lam, **{**ESTIMATOR_DEFAULTS, **changes})


#: Every bundled example, synthetic first, by name.
EXAMPLES: tuple[str, ...] = tuple(synthetic.SYNTHETIC_DATASETS) + tuple(datasets.list_datasets()["name"])


class Example(NamedTuple):
    """One example's fitted columns, its truth and the roles the library reads them with."""

    X: pd.DataFrame
    true_labels: np.ndarray
    #: The planted clusters' features (synthetic sets only; None for a real dataset).
    true_mask: np.ndarray | None
    schema: Schema

    @property
    def mask_features(self) -> list[str]:
        return [str(c) for c in self.X.columns]

    @property
    def n_groups(self) -> int:
        return len(np.unique(self.true_labels))


def load_example(name: str, n_samples: int = 150, seed: int = 0) -> Example:
    """The example's table without its label (``n_samples`` and ``seed`` of a synthetic set only)."""
    if name in synthetic.SYNTHETIC_DATASETS:
        generator, _ = synthetic.SYNTHETIC_DATASETS[name]
        X, y, true_mask = generator(n_samples=n_samples, random_state=seed)
        return Example(X, np.asarray(y, dtype=np.int64), np.asarray(true_mask, dtype=bool), infer_schema(X))
    X, y = datasets.load(name)
    return Example(X, pd.factorize(y, sort=True)[0], None, datasets.dataset_schema(name))


def fit_example(name: str, n_samples: int = 150, roles: dict[str, list[str]] | None = None,
                **params) -> tuple[CRAFT, pd.DataFrame]:
    """``(model, X)``: the example fitted with k = its number of groups, two restarts, seed 0, ``params`` on top.

    ``roles`` overrides the columns' roles (``Schema.override``'s keywords), as a user's choice on the Data page.
    """
    example = load_example(name, n_samples=n_samples)
    schema = example.schema.override(**roles) if roles else example.schema
    X = example.X[list(schema.used)]
    params = {"k": example.n_groups, "n_init": 2, "random_state": 0, **params}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = CRAFT(categorical=schema, history_labels=True, **params).fit(X)
    return model, X


#: Rows and levels of issue 14's table: a dense one-hot matrix of it is 30,000 x 12,000 x 8 bytes = 2.9 GB.
N_ROWS, N_LEVELS = 30_000, 12_000


def many_levels_table() -> pd.DataFrame:
    """30,000 rows: a numeric column and one 12,000-level categorical column (a 0.6 MB CSV), 3 groups."""
    rng = np.random.default_rng(0)
    group = rng.integers(3, size=N_ROWS)
    table = pd.DataFrame({
        "x": rng.normal(3.0 * group, 1.0),
        # Every level occurs; the first 3 are frequent and follow the groups.
        "code": np.where(rng.random(N_ROWS) < 0.6, group, rng.integers(N_LEVELS, size=N_ROWS)).astype(str),
    })
    table.loc[:N_LEVELS - 1, "code"] = np.arange(N_LEVELS).astype(str)
    assert table["code"].nunique() == N_LEVELS
    return table


def peak_bytes(function):
    """``(result, peak)``: what ``function()`` returns and the most bytes Python held during the call."""
    tracemalloc.start()
    try:
        result = function()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
