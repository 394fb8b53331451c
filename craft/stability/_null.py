"""Is there more structure than one cluster? :func:`permutation_null`: the objective on the data against the
objective on tables drawn with no clusters (:func:`one_cluster_reference`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from ..estimator import CRAFT
from ._refits import _checked_count, _checked_table, _refit, _reporter, Progress


@dataclass(frozen=True)
class PermutationNull:
    """CRAFT's objective on the data against tables drawn with no clusters (:func:`permutation_null`).

    The question asked is "is there more structure than one blob?", not
    "are the columns independent?": shuffling every column on its own (the
    earlier reference, still :func:`shuffled_columns`) breaks the columns'
    dependence, so a single correlated Gaussian blob (300 × 6, correlation
    0.9, no clusters) beat every shuffled table. The reference tables
    (:func:`one_cluster_reference`) keep what one cluster can have:

    * numeric columns drawn from one Gaussian with the data's means and
      covariance matrix, exactly (the draws are whitened and recoloured),
      so their linear dependence is kept and no group is in them (the
      parametric-bootstrap reference of a one-component Gaussian mixture;
      the gap statistic's reference in the principal-component frame,
      Tibshirani et al. 2001, keeps the same axes but draws uniformly, which
      makes any Gaussian blob look clustered against it);
    * categorical (and ignored) columns shuffled independently: each keeps
      its values (one multinomial per column, at the data's frequencies).
      For categorical columns, independence *is* the one-cluster model:
      CRAFT, as a latent-class model, explains any dependence between
      categorical columns by clusters. Numeric-categorical dependence is
      broken for the same reason.

    Each reference table keeps the data's missing cells where they are.
    Every table is fitted as the model was (:func:`refit_params`), on the
    same number of rows; the encoder's global tables (means, variances,
    level frequencies) are the data's (up to the missing cells' share), so
    the cost of one global cluster is the same and only what clustering
    gains differs. What is compared (``compared``):

    * a model sized by ``lam``: the whole ``objective_`` at the same λ. K is
      free on both sides (a reference table usually opens fewer clusters)
      and its cost ``(λ + D F0) K`` is inside the objective, so neither side
      gains by having more clusters;
    * a model sized by ``k``: the objective without the clusters' cost
      ``(λ + D F0) K`` (``objective_terms_.regularization``), because each
      table's λ is searched again and differs; both sides then have k
      clusters (the search's K, in ``observed_k`` and ``null_k``), so the
      data cost of the same number of clusters is compared.

    Attributes
    ----------
    observed : float
        The compared quantity on the data, refitted with the null's settings
        (``n_init``; the model's ``random_state``).
    null : ndarray of float, shape (n_permutations,)
        The same quantity for each reference table.
    null_k : ndarray of int, shape (n_permutations,)
    observed_k : int
    n_rows : int
    compared : str
        What ``observed`` and ``null`` are, in words.
    reference : str
        What the reference tables are, in words.
    """

    observed: float
    null: np.ndarray
    null_k: np.ndarray
    observed_k: int
    n_rows: int
    compared: str
    reference: str = ""

    @property
    def z_score(self) -> float:
        """``(observed - mean(null)) / sd(null)``: negative is more structure than one cluster (0 without spread)."""
        spread = float(np.std(self.null, ddof=1)) if len(self.null) > 1 else 0.0
        return 0.0 if spread == 0.0 else (self.observed - float(np.mean(self.null))) / spread

    @property
    def p_value(self) -> float:
        """``(1 + #{null ≤ observed}) / (1 + n)``: the share of reference tables fitting at least as well."""
        return (1 + int(np.sum(self.null <= self.observed))) / (1 + len(self.null))

    @property
    def gain_per_row(self) -> float:
        """How much lower the data's quantity is than the null's mean, per row."""
        return (float(np.mean(self.null)) - self.observed) / self.n_rows

    def sentence(self) -> str:
        """The verdict, in words."""
        n = len(self.null)
        better = int(np.sum(self.null <= self.observed))
        verdict = ("The data has more structure than one cluster" if better == 0 else
                   "The data is not clearly more structured than one cluster")
        z_text = "" if self.z_score == 0.0 else f", z = {self.z_score:.1f}"
        return (f"{verdict}: compared is {self.compared}. The data gives {self.observed:,.6g} (K = {self.observed_k}); "
                f"{n} tables drawn with no clusters ({self.reference}) give {np.mean(self.null):,.6g} on average "
                f"(K from {self.null_k.min()} to {self.null_k.max()}), {self.gain_per_row:.3g} more per row, and "
                f"{better} of them fit at least as well (p = {self.p_value:.3g}{z_text}). "
                f"With {n} tables p cannot go below {1 / (1 + n):.3g}.")


#: :attr:`PermutationNull.reference` of :func:`one_cluster_reference`, in words.
REFERENCE_WORDS = ("numeric columns from one Gaussian with the data's means and covariances, categorical columns "
                   "shuffled independently, missing cells where they were")


def _compared(model: CRAFT) -> float:
    """The quantity :class:`PermutationNull` compares for a fit sized like ``model``."""
    if model.k is None:
        return float(model.objective_)
    return float(model.objective_ - model.objective_terms_.regularization)


def shuffled_columns(table: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """``table`` with each column's values permuted independently (its values, missing cells included, kept)."""
    return pd.DataFrame({c: table[c].to_numpy()[rng.permutation(len(table))] for c in table.columns},
                        columns=table.columns)


def _symmetric_root(matrix: np.ndarray, inverse: bool = False) -> np.ndarray:
    """``matrix ** ±1/2`` of a symmetric matrix, its negative eigenvalues (pairwise covariances) clipped to 0."""
    values, vectors = np.linalg.eigh(matrix)
    values = np.clip(values, 0.0, None)
    if inverse:
        values = np.divide(1.0, np.sqrt(values), out=np.zeros_like(values), where=values > 1e-12 * values.max(initial=0))
        return (vectors * values) @ vectors.T
    return (vectors * np.sqrt(values)) @ vectors.T


def one_cluster_reference(table: pd.DataFrame, numeric: Sequence[str], rng: np.random.Generator) -> pd.DataFrame:
    """A table like ``table`` with no clusters: the reference of :func:`permutation_null`.

    The ``numeric`` columns are drawn from one multivariate Gaussian with
    the data's means and covariance matrix (pairwise over observed cells,
    its negative eigenvalues clipped). The draws are centred, whitened and
    recoloured, so the reference's means and covariance equal the data's
    exactly when no cell is missing (the engine's global tables are then
    the data's). Every other column is shuffled on its own. A cell missing
    in the data is missing in the reference.
    """
    reference = shuffled_columns(table, rng)
    numeric = [c for c in numeric if c in table.columns]
    if not numeric:
        return reference
    values = table[numeric].apply(pd.to_numeric, errors="coerce").astype(np.float64)
    n_rows, n_columns = values.shape
    mean = values.mean().fillna(0.0).to_numpy()
    covariance = values.cov().fillna(0.0).to_numpy()
    draws = rng.standard_normal((n_rows, n_columns))
    draws -= draws.mean(axis=0)
    if n_rows > n_columns + 1:
        draws = draws @ _symmetric_root(np.cov(draws, rowvar=False).reshape(n_columns, n_columns), inverse=True)
    drawn = draws @ _symmetric_root(covariance) + mean
    drawn[values.isna().to_numpy()] = np.nan
    for j, column in enumerate(numeric):
        reference[column] = drawn[:, j]
    return reference


def permutation_null(model: CRAFT, X, *, n_permutations: int = 20, n_init=None, random_state=None,
                     callback: Progress | None = None) -> PermutationNull:
    """Fit ``n_permutations`` tables drawn with no clusters (:func:`one_cluster_reference`), sized as ``model``.

    The null hypothesis is "one cluster": numeric columns one Gaussian blob
    keeping the data's covariances, categorical columns independent (see
    :class:`PermutationNull`). The name is kept from the earlier reference
    (every column shuffled, which tested only the columns' independence).

    Parameters
    ----------
    model : craft.CRAFT
        A fitted estimator.
    X : DataFrame
        The table it was fitted on.
    n_permutations : int, default=20
        Reference tables, 1 to :data:`MAX_RESAMPLES`; the smallest p-value is ``1 / (1 + n)``.
    n_init : int or None, default=None
        Runs per fit (None: the model's own), the same for the data and
        every reference table, so both get the same search effort.
    random_state : int, Generator or None
    callback : callable or None
        As in :func:`bootstrap_stability`.

    Returns
    -------
    PermutationNull
    """
    n_permutations = _checked_count(n_permutations, "n_permutations")
    table = _checked_table(model, X)
    rng = np.random.default_rng(random_state)
    total = n_permutations + 1
    observed = _refit(model, table, model.random_state if model.random_state is not None else 0, n_init,
                      _reporter(callback, 0.0, "the data"))
    null = np.zeros(n_permutations)
    null_k = np.zeros(n_permutations, dtype=np.int64)
    numeric = list(model.schema_.numeric)
    for r in range(n_permutations):
        drawn = one_cluster_reference(table, numeric, rng)
        report = _reporter(callback, (r + 1) / total, f"reference table {r + 1} of {n_permutations}")
        fitted = _refit(model, drawn, int(rng.integers(2**31 - 1)), n_init, report)
        null[r], null_k[r] = _compared(fitted), fitted.n_clusters_
    _reporter(callback, 1.0, "done")()
    compared = ("the objective at the same λ" if model.k is None else
                f"the data cost of k = {model.k} clusters (the objective without the clusters' cost, λ being searched "
                "for each table)")
    return PermutationNull(_compared(observed), null, null_k, int(observed.n_clusters_), len(table), compared,
                           REFERENCE_WORDS)
