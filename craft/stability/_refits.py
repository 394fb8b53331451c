"""What every question of :mod:`craft.stability` shares: its thresholds, matching clusters by their rows
(:func:`best_match_jaccard`), and refits of a model sized as it was (:func:`refit_params`)."""

from __future__ import annotations

from typing import Callable

import numpy as np
import pandas as pd

from .._tables import as_table
from ..estimator import CRAFT
from ..exceptions import CraftInputError


#: A cluster whose mean best-match Jaccard is below this is marked unstable (Hennig's reading of clusterboot).
UNSTABLE_JACCARD = 0.6
#: A resample in which a cluster's best match has a Jaccard at or below this counts as dissolving it (clusterboot:
#: ``bootbrd`` counts ``bootresult <= dissolution``).
DISSOLVED_JACCARD = 0.5
#: A refit cluster counts as the same cluster for its features (``feature_frequency``) only when the match is
#: one-to-one with at least this Jaccard: at 0.5 the refit cluster holds at least half of the union of the two.
MATCHED_JACCARD = 0.5
#: At most this many resamples or permutations in one call: each is a whole refit.
MAX_RESAMPLES = 500
#: Rows per cluster a table needs before a model fitted with k is refitted on its resamples. A bootstrap
#: resample of n rows holds about 0.63 n distinct rows (sd about 0.24 sqrt(n)); a refit with k needs k of them.
#: At n = 4k, 200,000 resamples each for k = 2, 3, 5 (and 20,000 for k = 10, 50) never held fewer than k
#: (docs/numerics.md); below it a refit fails with the resample's count, which is not the person's table.
ROWS_PER_K = 4
#: At most this many values of k in one k_evidence call, as a path's values (craft.path.MAX_VALUES):
#: each is a whole fit and n_resamples refits.
MAX_KS = 200
#: What "unstable" means, in one sentence, for the user.
UNSTABLE_MEANING = (
    f"An unstable cluster (mean Jaccard below {UNSTABLE_JACCARD}) is not reproduced when the rows are resampled: "
    "the refitted cluster most like it shares, on average, less than 60 % of its rows, so read it as a pattern of "
    "this sample rather than a group that would be found again."
)
Progress = Callable[[float, str], object]


class Stopped(Exception):
    """Raised when a callback of :func:`bootstrap_stability`, :func:`permutation_null` or :func:`k_evidence`
    returns ``False``."""


def best_match_jaccard(reference, rows, resample_labels, n_reference: int | None = None,
                       n_resample: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each reference cluster's most similar resample cluster, by the Jaccard similarity of their rows.

    As ``fpc::clusterboot``: the similarity is computed on the rows the
    resample contains (a row drawn twice counts once), so a reference
    cluster is its rows within the resample.

    Parameters
    ----------
    reference : array-like of int, shape (N,)
        Reference cluster of every row of the table.
    rows : array-like of int, shape (M,)
        The table's rows the resample holds (repeats allowed, bootstrap).
    resample_labels : array-like of int, shape (M,)
        Cluster of each resampled row in the refit. A repeated row takes the
        cluster of its first copy. -1 (noise, ``noise=True``) in either
        labelling is in no cluster: such a row counts in the other cluster's
        rows (the union), never in an intersection.
    n_reference, n_resample : int, optional
        Numbers of clusters (default: the largest label + 1).

    Returns
    -------
    jaccard : ndarray of float, shape (n_reference,)
        The best match's Jaccard similarity ``|A ∩ B| / |A ∪ B|`` (0 for a
        cluster with no row in the resample).
    match : ndarray of int, shape (n_reference,)
        The matched resample cluster (-1 for a cluster with no row in it).
    present : ndarray of bool, shape (n_reference,)
        Whether the cluster has a row in the resample.

    Examples
    --------
    >>> jac, match, present = best_match_jaccard([0, 0, 1, 1], [0, 1, 2, 3, 3], [0, 1, 1, 1, 1])
    >>> jac.round(3).tolist(), match.tolist(), present.tolist()
    ([0.5, 0.667], [0, 1], [True, True])
    """
    reference = np.asarray(reference, dtype=np.int64)
    rows = np.asarray(rows, dtype=np.int64)
    resample_labels = np.asarray(resample_labels, dtype=np.int64)
    n_ref = int(reference.max()) + 1 if n_reference is None else int(n_reference)
    n_res = int(resample_labels.max()) + 1 if n_resample is None else int(n_resample)
    unique, first = np.unique(rows, return_index=True)
    # Row and column 0 count the noise rows (label -1): in the clusters' sizes, in no intersection.
    table = np.bincount((reference[unique] + 1) * (n_res + 1) + resample_labels[first] + 1,
                        minlength=(n_ref + 1) * (n_res + 1))
    table = table.reshape(n_ref + 1, n_res + 1).astype(np.float64)
    union = table.sum(axis=1, keepdims=True)[1:] + table.sum(axis=0, keepdims=True)[:, 1:] - table[1:, 1:]
    table = table[1:, 1:]
    similarity = np.divide(table, union, out=np.zeros_like(table), where=union > 0)
    present = table.sum(axis=1) > 0
    match = np.where(present, similarity.argmax(axis=1), -1)
    return similarity.max(axis=1, initial=0.0), match, present


def _checked_count(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 1 <= value <= MAX_RESAMPLES:
        raise CraftInputError(f"{name}={value!r} must be an integer from 1 to {MAX_RESAMPLES}: each one is a whole refit.")
    return int(value)


def _check_has_labels(model: CRAFT, what: str) -> None:
    """Refuse a fitted model that holds no labels of its rows (a Dask fit's, or one loaded from its file)."""
    if getattr(model, "labels_", None) is None and hasattr(model, "clusters_"):
        raise CraftInputError(
            f"This model holds no labels of the rows it was fitted on (labels_ is None: a DaskCRAFT fit keeps them on "
            f"its workers, and a model file it wrote does not hold them); {what} compares them with other labels. "
            "Fit the model in memory (craft.CRAFT) on the table to have them."
        )


def _check_resamplable(model: CRAFT, n_rows: int, method: str, fraction: float) -> None:
    """Refuse a table too small for refits with the model's k, in the table's terms (not a resample's)."""
    k = getattr(model, "k", None)
    if k is None or k <= 1:
        return  # refitted at lam_: K follows from the resample, which any row can hold
    if method == "bootstrap" and n_rows < ROWS_PER_K * k:
        raise CraftInputError(
            f"Your table has {n_rows:,} rows and the model was fitted with k={k}: bootstrap_stability refits it with "
            f"k={k} on resamples of those rows drawn with replacement, which repeat rows, and a resample with fewer "
            f"than {k} different rows cannot be refitted with k={k}. Use a table of at least {ROWS_PER_K * k:,} rows "
            f"({ROWS_PER_K} per cluster), or a smaller k."
        )
    if method == "subsample" and int(round(fraction * n_rows)) < k:
        raise CraftInputError(
            f"Your table has {n_rows:,} rows: a subsample of fraction={fraction} holds {int(round(fraction * n_rows))} of "
            f"them, fewer than the model's k={k} clusters, so it cannot be refitted with k={k}. Raise fraction or use "
            "more rows."
        )


def _checked_table(model: CRAFT, X) -> pd.DataFrame:
    if not hasattr(model, "labels_"):
        raise CraftInputError("The model is not fitted: fit it on X first, then ask how stable its clusters are.")
    _check_has_labels(model, "bootstrap_stability")
    table = as_table(X)
    if len(table) != len(model.labels_):
        raise CraftInputError(
            f"X has {len(table):,} rows but the model was fitted on {len(model.labels_):,}: pass the table it was "
            "fitted on (its clusters are compared with the refits' row by row)."
        )
    return table.reset_index(drop=True)


def refit_params(model: CRAFT, *, random_state, n_init=None) -> dict:
    """The parameters of a refit of ``model``: its own, sized as it was, with its schema fixed.

    A model fitted with ``k`` is refitted with the same ``k`` (λ searched
    again on the refit's rows); a model fitted with ``lam`` (or neither) is
    refitted at its ``lam_``, K following from the data. The history of
    labels is not kept; ``n_init`` (None: the model's own) and
    ``random_state`` are those given.
    """
    params = model.get_params()
    params.update(categorical=model.schema_, random_state=random_state, history_labels=False)
    if model.k is None:
        params.update(lam=float(model.lam_), k=None)
    if n_init is not None:
        params["n_init"] = n_init
    return params


def sizing(model: CRAFT) -> str:
    """How :func:`refit_params` sizes a refit of ``model``, in words."""
    if model.k is None:
        return f"λ held at {model.lam_:.4g}, K free"
    return f"k = {model.k}, λ searched again on each refit's rows"


def _refit(model: CRAFT, table: pd.DataFrame, seed: int, n_init, report: Callable[[], None]) -> CRAFT:
    return CRAFT(**refit_params(model, random_state=seed, n_init=n_init)).fit(table, callback=lambda record, report=report: report())


def _reporter(callback: Progress | None, fraction: float, text: str) -> Callable[[], None]:
    def report() -> None:
        if callback is not None and callback(fraction, text) is False:
            raise Stopped(text)

    return report
