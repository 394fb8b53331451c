"""The Compare page's computation: CRAFT and the other methods on the same data, each scored against the label."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd
from scipy import sparse

from craft import baselines
from craft._optional import missing
from craft.encoding import Encoder
from craft.estimator import CRAFT
from craft.exceptions import CraftInputError
from craft.schema import Schema

from ._common import _scores
from .params import FitParams
from .roles import fitted_table


#: Methods of the Compare page, in display order.
METHODS: tuple[str, ...] = ("CRAFT", "DP-means", "DP-means(R)", "DP-RF", "k-means (one-hot)", "k-prototypes")


#: Most bytes one Compare method may take for a dense matrix of numbers and one-hot levels.
DENSE_LIMIT_BYTES = 512 * 2**20


def _euclidean(X: pd.DataFrame, schema: Schema, method: str, *, dense: bool = True):
    """Standardized numbers beside one-hot levels: sparse for ``dense=False``, else dense within
    :data:`DENSE_LIMIT_BYTES` (refused before allocating, with the size it would take)."""
    data = Encoder(list(schema.numeric), list(schema.categorical), True).fit_transform(X)
    if not dense:
        return sparse.hstack([sparse.csr_matrix(data.numeric), data.onehot()], format="csr")
    n_columns = data.n_numeric + data.n_levels_total
    size = data.n_samples * n_columns * 8
    if size > DENSE_LIMIT_BYTES:
        raise CraftInputError(
            f"{method} needs a dense {data.n_samples:,} x {n_columns:,} matrix of numbers and one-hot levels "
            f"({size / 2**30:.1f} GiB), more than the {DENSE_LIMIT_BYTES // 2**20} MiB one method may take here; "
            "k-means (one-hot) works on the sparse matrix, or leave out the many-level column."
        )
    return data.euclidean()


def _run_method(method: str, X: pd.DataFrame, schema: Schema, params: FitParams, k: int, seed: int) -> tuple[np.ndarray, str]:
    """Labels of one method, and a note ("" when there is nothing to say)."""
    if method == "CRAFT":
        model = CRAFT(categorical=schema, **params.replace(size_by="k", k=k, seed=seed).estimator_kwargs()).fit(X)
        return model.labels_, f"λ = {model.lam_:.4g}"
    if method in ("DP-means", "DP-means(R)"):
        model = baselines.DPMeans(k=k, init="mean" if method == "DP-means" else "random", random_state=seed)
        model.fit(_euclidean(X, schema, method))
        return model.labels_, f"λ = {model.lam_:.4g} (farthest-first for k = {k})"
    if method == "DP-RF":
        model = baselines.DPRF(m=params.m, rho=params.rho, k=k, random_state=seed).fit(_euclidean(X, schema, method))
        return model.labels_, f"λ = {model.lam_:.4g} (farthest-first for k = {k})"
    if method == "k-means (one-hot)":
        from sklearn.cluster import KMeans

        # Sparse: memory follows the cells, not rows x levels (scikit-learn's k-means takes CSR).
        model = KMeans(n_clusters=k, n_init=4, random_state=seed).fit(_euclidean(X, schema, method, dense=False))
        return model.labels_, "standardized numbers + one-hot levels"
    if method == "k-prototypes":
        return _kprototypes(X, schema, k, seed)
    raise CraftInputError(f"Unknown method {method!r}; choose among {', '.join(METHODS)}.")


def _kprototypes(X: pd.DataFrame, schema: Schema, k: int, seed: int) -> tuple[np.ndarray, str]:
    try:
        from kmodes.kmodes import KModes
        from kmodes.kprototypes import KPrototypes
    except ImportError as error:  # an installation problem, not bad input
        raise missing("kmodes", extra="baselines", needed_for="k-prototypes") from error
    encoder = Encoder(list(schema.numeric), list(schema.categorical), True)
    data = encoder.fit_transform(X)
    codes = np.where(data.codes < 0, data.n_levels[None, :], data.codes) if data.n_categorical else data.codes
    if data.n_categorical and data.n_numeric:
        matrix = np.hstack([data.numeric, codes.astype(np.float64)])
        categorical = list(range(data.n_numeric, data.n_features))
        model = KPrototypes(n_clusters=k, n_init=2, init="Cao", random_state=seed, max_iter=50)
        labels = model.fit_predict(matrix, categorical=categorical)
        return np.asarray(labels), "kmodes KPrototypes (Cao init, 2 restarts)"
    if data.n_categorical:
        model = KModes(n_clusters=k, n_init=2, init="Cao", random_state=seed, max_iter=50)
        return np.asarray(model.fit_predict(codes)), "no numeric column: kmodes KModes"
    from sklearn.cluster import KMeans

    labels = KMeans(n_clusters=k, n_init=4, random_state=seed).fit(data.numeric).labels_
    return labels, "no categorical column: k-prototypes is k-means"


def compare_methods(
    table: pd.DataFrame,
    schema: Schema,
    params: FitParams,
    *,
    methods: Sequence[str] = METHODS,
    k: int,
    seed: int = 0,
    y=None,
    progress: Callable[[float, str], None] | None = None,
) -> pd.DataFrame:
    """Run CRAFT and the other methods on the same data and score them.

    Parameters
    ----------
    table : DataFrame
    schema : Schema
        Roles (from :func:`fit_schema`); only used columns are clustered.
    params : FitParams
        CRAFT's parameters (``k`` and ``seed`` are replaced); ``m`` and
        ``rho`` also set DP-RF's.
    methods : sequence of str
        Names from :data:`METHODS`.
    k : int
        Number of clusters asked of every method (DP-means family: about k,
        through the paper's farthest-first heuristic).
    seed : int
    y : array-like or None
        True classes (missing ones are left out of the scores).
    progress : callable or None
        Called with (share done, method name) before each method.

    Returns
    -------
    DataFrame
        One row per method: ``method, K, purity, nmi, ari, seconds, note``;
        a method that fails has NaN scores and the reason in ``note``.
    """
    X, used = fitted_table(table, schema)
    rows = []
    for position, method in enumerate(methods):
        if progress is not None:
            progress(position / max(1, len(methods)), method)
        start = time.perf_counter()
        try:
            labels, note = _run_method(method, X, used, params, int(k), int(seed))
        except (CraftInputError, ImportError) as error:  # bad input, or an extra not installed: say so in the row
            rows.append(dict(method=method, K=np.nan, purity=np.nan, nmi=np.nan, ari=np.nan,
                             seconds=time.perf_counter() - start, note=str(error)))
            continue
        seconds = time.perf_counter() - start
        row = dict(method=method, K=int(len(np.unique(labels))), seconds=seconds, note=note)
        row.update(_scores(y, labels))
        rows.append(row)
    if progress is not None:
        progress(1.0, "done")
    return pd.DataFrame(rows, columns=["method", "K", "purity", "nmi", "ari", "seconds", "note"])
