"""How much to trust a CRAFT partition: stability under resampling, a permutation null, evidence on k.

Three questions an analyst asks of a clustering once it is fitted, answered
from refits of the same estimator (no quantity of the engine is re-derived
here: every refit is a :class:`craft.CRAFT` fit, every number is read from
its fitted attributes and inspection surface):

* :func:`bootstrap_stability`: is each cluster real? The rows are resampled
  (bootstrap or subsample; or kept, only the seed changing: the app's
  What-if), the estimator refitted, and every cluster is
  matched to its most similar cluster of the refit by the Jaccard similarity
  of their rows, as ``fpc::clusterboot`` does; how often each of its
  features stays selected in the matched cluster is counted too.
* :func:`permutation_null`: is there more structure than one cluster?
  CRAFT's objective on the data against the objective on tables drawn
  with no clusters that keep the numeric columns' covariances
  (:func:`one_cluster_reference`).
* :func:`k_evidence`: which k? The data's cost, the stability and a
  silhouette on CRAFT's own distance over a range of k, as evidence for the
  user's choice, not as an oracle.

Choices the paper leaves open, made here (also in ``docs/numerics.md``'s
terms: λ is the cost of opening a cluster, K follows from it):

* A refit is sized as the model was. A model fitted with ``k`` is refitted
  with the same ``k`` (λ searched again on the refit's rows), as
  ``fpc::clusterboot`` refits k-means with its k: holding λ at the searched
  ``lam_`` does not reproduce K, because the search keeps the run whose K is
  nearest k while the lowest objective at that λ may have another K (on
  ``mixed_planted`` with k = 4, a fit at the searched λ has K = 2). A model
  fitted with ``lam`` (or neither) is refitted at its ``lam_`` with K free:
  there K is an outcome of λ, and a cluster that dissolves or merges under
  resampling is the instability to report. The refit keeps the fitted
  schema (the same columns and roles) and every other parameter; only
  ``random_state`` (one seed per resample, drawn from ``random_state``) and,
  when given, ``n_init`` differ (:func:`refit_params`).
* The bootstrap refits every drawn row once, as ``fpc::clusterboot``'s
  default does (it removes the duplicated rows before clustering): a row
  drawn twice would otherwise weigh twice in the refit's statistics and in
  its λ search. A resample tests a cluster only if it holds a row of the
  cluster *and* a row outside it (a resample of one cluster's rows matches
  it perfectly whatever the refit does: on a 2-row table every resample of
  one distinct row would "find" its cluster again).
* How often a feature stays selected (``feature_frequency``) counts a
  resample only where the cluster's match is one-to-one with a Jaccard of
  at least :data:`MATCHED_JACCARD` (``matched``): the best match of an
  unstable cluster is often another cluster, whose features say nothing of
  this one's. The share is over the matched resamples, whose number
  (``n_matched``) is reported beside it.
* The functions take a callback ``callback(fraction, text)``, called after
  every iteration of every refit: an exception it raises stops the
  computation (it propagates), and so does returning ``False``
  (:class:`Stopped` is raised then).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import pandas as pd
from .estimator import CRAFT, _as_table
from .exceptions import CraftInputError

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


# ---------------------------------------------------------------------------
# Matching clusters by their rows


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


# ---------------------------------------------------------------------------
# Refits


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
    table = _as_table(X)
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


@dataclass(frozen=True)
class Stability:
    """Stability of a fit's clusters over refits on resampled rows (:func:`bootstrap_stability`).

    Attributes
    ----------
    method : {"bootstrap", "subsample", "seed"}
    fraction : float
        Share of the rows in each subsample (1.0 for the bootstrap, which
        draws N rows with replacement, and for seed refits, on every row).
    sizing : str
        How the refits were sized, in words: the model's ``k`` searched
        again, or its ``lam_`` held.
    jaccard : ndarray of float, shape (n_resamples, K)
        Each cluster's best-match Jaccard in each resample (0 where the
        resample holds none of its rows).
    present : ndarray of bool, shape (n_resamples, K)
        Whether the resample tests the cluster: it holds a row of the cluster
        and a row outside it (see the module's notes).
    match : ndarray of int, shape (n_resamples, K)
        The matched cluster of the refit (-1 where not present).
    selected_in_match : ndarray of bool, shape (n_resamples, K, D)
        Whether the matched cluster selects each feature (False where not present).
    resample_k : ndarray of int, shape (n_resamples,)
        K of every refit (0 for a resample that tests no cluster, not refitted).
    features : list of str
        The features, in ``feature_names_in_`` order (``feature_mask_``'s columns).
    sizes : ndarray of int, shape (K,)
        The fitted clusters' sizes.
    """

    method: str
    fraction: float
    sizing: str
    jaccard: np.ndarray
    present: np.ndarray
    match: np.ndarray
    selected_in_match: np.ndarray
    resample_k: np.ndarray
    features: list
    sizes: np.ndarray

    @property
    def n_resamples(self) -> int:
        return int(self.jaccard.shape[0])

    @property
    def n_present(self) -> np.ndarray:
        """Per cluster, the resamples that hold at least one of its rows."""
        return self.present.sum(axis=0)

    @property
    def matched(self) -> np.ndarray:
        """Per resample and cluster, whether the match is one-to-one with a Jaccard ≥ :data:`MATCHED_JACCARD`.

        One-to-one: no other cluster tested by the resample has the same
        refit cluster as its match with a Jaccard ≥ the threshold.
        """
        candidate = self.present & (self.jaccard >= MATCHED_JACCARD)
        matched = candidate.copy()
        for r in range(self.jaccard.shape[0]):
            taken, counts = np.unique(self.match[r, candidate[r]], return_counts=True)
            shared = taken[counts > 1]
            matched[r] &= ~np.isin(self.match[r], shared)
        return matched

    @property
    def n_matched(self) -> np.ndarray:
        """Per cluster, the resamples whose match is one-to-one with a Jaccard ≥ :data:`MATCHED_JACCARD`."""
        return self.matched.sum(axis=0)

    @property
    def mean_jaccard(self) -> np.ndarray:
        """Per cluster, the mean best-match Jaccard over the resamples that hold its rows (0 if none does)."""
        return self.jaccard.sum(axis=0) / np.maximum(self.n_present, 1)

    @property
    def dissolved(self) -> np.ndarray:
        """Per cluster, the resamples whose best match has a Jaccard at or below :data:`DISSOLVED_JACCARD`."""
        return ((self.jaccard <= DISSOLVED_JACCARD) & self.present).sum(axis=0)

    @property
    def unstable(self) -> np.ndarray:
        """Per cluster, whether its mean Jaccard is below :data:`UNSTABLE_JACCARD` (a cluster no resample tested is)."""
        return self.mean_jaccard < UNSTABLE_JACCARD

    @property
    def feature_frequency(self) -> pd.DataFrame:
        """Clusters × features: of the resamples matching the cluster one-to-one (:attr:`matched`), the share
        whose matched cluster selects the feature (0 where none matched: :attr:`n_matched` says how many did)."""
        counts = (self.selected_in_match & self.matched[:, :, None]).sum(axis=0)
        return pd.DataFrame(counts / np.maximum(self.n_matched, 1)[:, None], columns=self.features,
                            index=pd.RangeIndex(counts.shape[0], name="cluster"))

    def frame(self) -> pd.DataFrame:
        """One row per cluster: rows, mean Jaccard, dissolved, resamples testing it, matched one-to-one, unstable."""
        return pd.DataFrame({
            "cluster": np.arange(len(self.sizes)),
            "rows": self.sizes,
            "mean_jaccard": self.mean_jaccard,
            "dissolved": self.dissolved,
            "resamples": self.n_present,
            "matched": self.n_matched,
            "unstable": self.unstable,
        })

    def sentence(self, cluster: int) -> str:
        """What the numbers say about one cluster, in words."""
        mean, dissolved, n = self.mean_jaccard[cluster], int(self.dissolved[cluster]), int(self.n_present[cluster])
        if n == 0:
            return (f"Cluster {cluster}: no {self.method} resample held both its rows and rows outside it, so no refit "
                    "could test it; it is counted unstable.")
        verdict = UNSTABLE_MEANING if self.unstable[cluster] else (
            f"It is stable: its mean Jaccard is at least {UNSTABLE_JACCARD}, so the refits find it again.")
        return (f"Cluster {cluster}: over {n} {self.method} refits its best match shares on average {mean:.0%} of its "
                f"rows (mean Jaccard {mean:.2f}); it dissolved (Jaccard at most {DISSOLVED_JACCARD}) in {dissolved}; "
                f"{int(self.n_matched[cluster])} refits matched it one-to-one (Jaccard ≥ {MATCHED_JACCARD}), the "
                "ones its features' frequencies count. " + verdict)

    def summary(self) -> str:
        """The whole fit's stability in one or two sentences."""
        unstable = np.flatnonzero(self.unstable)
        k_values = np.unique(self.resample_k[self.resample_k > 0])
        k_text = ("no resample could be refitted" if len(k_values) == 0 else
                  f"every refit found K = {k_values[0]}" if len(k_values) == 1
                  else f"the refits found K from {k_values.min()} to {k_values.max()}")
        head = (f"{self.n_resamples} {self.method} refits ({self.sizing}): {k_text}; "
                f"{len(self.sizes) - len(unstable)} of {len(self.sizes)} clusters are stable (mean Jaccard ≥ "
                f"{UNSTABLE_JACCARD}).")
        untested = int(self.n_resamples - self.present.any(axis=1).sum())
        if untested:
            head += (f" {untested} of the resamples tested no cluster (each held one cluster's rows only) and "
                     "were not refitted.")
        if len(unstable):
            head += " Unstable: " + ", ".join(f"cluster {k}" for k in unstable) + "."
        return head


def _resample_rows(rng: np.random.Generator, n_rows: int, method: str, fraction: float) -> np.ndarray:
    """The distinct rows of a resample, sorted: a bootstrap's rows drawn twice are refitted once (clusterboot)."""
    if method == "bootstrap":
        return np.unique(rng.integers(0, n_rows, size=n_rows))
    if method == "seed":
        return np.arange(n_rows)
    return np.sort(rng.choice(n_rows, size=max(2, int(round(fraction * n_rows))), replace=False))


def bootstrap_stability(model: CRAFT, X, *, n_resamples: int = 20, method: str = "bootstrap", fraction: float = 0.8,
                        n_init=None, random_state=None, callback: Progress | None = None) -> Stability:
    """Refit ``model`` on resampled rows of ``X`` and measure how well each of its clusters is found again.

    Parameters
    ----------
    model : craft.CRAFT
        A fitted estimator.
    X : DataFrame
        The table ``model`` was fitted on (same rows, same order).
    n_resamples : int, default=20
        Refits, 1 to :data:`MAX_RESAMPLES`. The cost is that of
        ``n_resamples`` fits of ``n_init`` runs each at a fixed λ (no search).
    method : {"bootstrap", "subsample", "seed"}, default="bootstrap"
        ``"bootstrap"``: N rows drawn with replacement, each drawn row refitted
        once (as ``fpc::clusterboot``); ``"subsample"``:
        ``fraction`` of the rows without replacement; ``"seed"``: every row,
        only the refit's seed differs (what the seeding alone changes: the
        app's What-if, with ``n_init=1`` to see one run's variation).
    fraction : float, default=0.8
        In (0, 1); subsample only.
    n_init : int or None, default=None
        Runs per refit (None: the model's ``n_init``, the effort of the fit
        judged). One run per refit costs less; the seeding's variation is
        then part of the instability measured.
    random_state : int, Generator or None
        The same value gives the same resamples, refits and result.
    callback : callable or None
        ``callback(fraction_done, text)`` after every iteration of every
        refit; raising, or returning ``False``, stops (see :class:`Stopped`).

    Returns
    -------
    Stability
    """
    if method not in ("bootstrap", "subsample", "seed"):
        raise CraftInputError(f"method={method!r} must be 'bootstrap', 'subsample' or 'seed'.")
    if method == "subsample" and not (isinstance(fraction, (int, float)) and 0.0 < fraction < 1.0):
        raise CraftInputError(f"fraction={fraction!r} must be in (0, 1): the share of the rows in each subsample.")
    n_resamples = _checked_count(n_resamples, "n_resamples")
    table = _checked_table(model, X)
    _check_resamplable(model, len(table), method, fraction)
    rng = np.random.default_rng(random_state)
    reference = np.asarray(model.labels_, dtype=np.int64)
    n_clusters, n_features = model.feature_mask_.shape
    jaccard = np.zeros((n_resamples, n_clusters))
    present = np.zeros((n_resamples, n_clusters), dtype=bool)
    match = np.full((n_resamples, n_clusters), -1, dtype=np.int64)
    selected = np.zeros((n_resamples, n_clusters, n_features), dtype=bool)
    resample_k = np.zeros(n_resamples, dtype=np.int64)
    for r in range(n_resamples):
        rows = _resample_rows(rng, len(table), method, fraction)
        seed = int(rng.integers(2**31 - 1))
        report = _reporter(callback, r / n_resamples, f"refit {r + 1} of {n_resamples}")
        report()
        # A resample holding no row outside a cluster cannot test it (any refit "finds" it again); one that tests
        # no cluster is not refitted (on a tiny table it may hold a single distinct row), its K recorded as 0.
        inside = np.bincount(reference[rows][reference[rows] >= 0], minlength=n_clusters)
        testing = (inside > 0) & (inside < len(rows))
        if not testing.any():
            continue
        refit = _refit(model, table.iloc[rows], seed, n_init, report)
        jaccard[r], match[r], present[r] = best_match_jaccard(reference, rows, refit.labels_, n_clusters,
                                                              refit.n_clusters_)
        present[r] &= testing
        jaccard[r, ~present[r]], match[r, ~present[r]] = 0.0, -1
        selected[r, present[r]] = refit.feature_mask_[match[r, present[r]]]
        resample_k[r] = refit.n_clusters_
    _reporter(callback, 1.0, "done")()
    return Stability(method, float(fraction) if method == "subsample" else 1.0, sizing(model), jaccard, present,
                     match, selected, resample_k, [str(c) for c in model.feature_names_in_],
                     np.asarray(model.cluster_sizes_, dtype=np.int64))


# ---------------------------------------------------------------------------
# The null of one cluster


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


# ---------------------------------------------------------------------------
# Evidence on k


def cost_silhouette(model: CRAFT, X) -> np.ndarray:
    """Every row's silhouette on CRAFT's own distance to clusters.

    ``a`` is the row's data cost to its own cluster, ``b`` its smallest data
    cost to another cluster, and ``s = (b - a) / max(a, b)`` (0 where both
    are 0), as Rousseeuw's silhouette with the distance to a cluster in
    place of the mean distance to its rows. The data cost is the distance
    d_nk of :meth:`craft.CRAFT.cost_terms` without its feature-control term
    ``|v_k| F_Delta``: that term is a constant of the cluster, negative for
    m > 0.5, and would make the "distance" negative; the other three terms
    are ≥ 0. A fit with one cluster has no other cluster: 0 for every row;
    a noise row (label -1, ``noise=True``) has no cluster of its own: 0.

    Returns
    -------
    ndarray of float, shape (n_samples,)
    """
    _check_has_labels(model, "cost_silhouette")
    terms = model.cost_terms(X)
    cost = terms.numeric + terms.categorical_selected + terms.categorical_global
    rows = np.arange(cost.shape[0])
    own = np.asarray(model.labels_)
    if own.shape[0] != cost.shape[0]:
        raise CraftInputError(f"X has {cost.shape[0]:,} rows but the model was fitted on {own.shape[0]:,}: pass the "
                              "table it was fitted on (a row's silhouette compares it with its own cluster).")
    if cost.shape[1] < 2:
        return np.zeros(cost.shape[0])
    clustered = own >= 0
    own = np.where(clustered, own, 0)
    a = cost[rows, own]
    other = cost.copy()
    other[rows, own] = np.inf
    b = other.min(axis=1)
    scale = np.maximum(a, b)
    return np.divide(b - a, scale, out=np.zeros_like(a), where=(scale > 0) & clustered)


def _checked_ks(ks) -> list[int]:
    """The distinct values of k, sorted: integers >= 1, at most :data:`MAX_KS` of them."""
    if hasattr(ks, "__len__") and not isinstance(ks, (str, bytes)) and len(ks) > 10 * MAX_KS:
        raise CraftInputError(_too_many_ks(len(ks)))  # a huge range is refused before it is read
    try:
        values = list(ks)
    except TypeError:
        raise CraftInputError(f"ks={ks!r} must be a sequence of integers (the values of k).") from None
    if not values or any(isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)) or k < 1
                         for k in values):
        raise CraftInputError(f"ks={values[:10]!r} must hold at least one k, each an integer at least 1.")
    distinct = sorted({int(k) for k in values})
    if len(distinct) > MAX_KS:
        raise CraftInputError(_too_many_ks(len(distinct)))
    return distinct


def _too_many_ks(n: int) -> str:
    return (f"ks holds {n:,} values of k; k_evidence takes at most {MAX_KS} (as a path's values): each k is a whole "
            "fit and n_resamples refits. Choose the values worth weighing, e.g. range(1, 21).")


def _shown_ks(ks: list[int]) -> str:
    return ", ".join(map(str, ks[:5])) + (f" and {len(ks) - 5} more" if len(ks) > 5 else "")


def k_evidence(model_params: dict, X, ks: Sequence[int], *, n_resamples: int = 10, random_state=None,
               callback: Progress | None = None) -> pd.DataFrame:
    """For each k, a fit with ``k`` and what speaks for or against it.

    Parameters
    ----------
    model_params : dict
        Parameters of :class:`craft.CRAFT` (``get_params()``); ``k`` is set
        to each value and ``lam`` dropped.
    X : DataFrame
    ks : sequence of int
        The values of k (each at least 1).
    n_resamples : int, default=10
        Bootstrap refits per k for the stability.
    random_state : int or None
        Seeds the fits and the resamples (the same for every k).
    callback : callable or None
        As in :func:`bootstrap_stability`.

    Returns
    -------
    DataFrame
        One row per k: ``k``, ``K`` (the fit's; the search may not reach k),
        ``lam``, ``data_cost`` (``objective_`` without the cost of the
        clusters ``(λ + D F0) K``, which differs with λ, so comparable across
        k; it falls as k grows, look for where it stops falling much),
        ``data_cost_per_row``, ``mean_jaccard`` and ``min_jaccard`` (over
        the clusters, :func:`bootstrap_stability`), ``unstable`` (clusters)
        and ``silhouette`` (the mean of :func:`cost_silhouette`).
    """
    ks = _checked_ks(ks)
    n_resamples = _checked_count(n_resamples, "n_resamples")
    table = _as_table(X).reset_index(drop=True)
    too_many = [k for k in ks if k > 1 and len(table) < ROWS_PER_K * k]
    if too_many:
        largest = len(table) // ROWS_PER_K
        raise CraftInputError(
            f"Your table has {len(table):,} rows, too few to weigh k = {_shown_ks(too_many)}: each k is checked by "
            f"refitting it on bootstrap resamples of the rows, which repeat rows, and a resample needs at least k "
            f"different rows; that takes {ROWS_PER_K} rows per cluster. "
            + (f"Keep k <= {largest}." if largest >= 1 else "k_evidence needs a larger table.")
        )
    params = {**model_params, "lam": None, "history_labels": False}
    rows = []
    for position, k in enumerate(ks):
        share = position / len(ks)
        report = _reporter(callback, share, f"k = {k}: fitting")
        report()
        model = CRAFT(**{**params, "k": k, "random_state": random_state}).fit(table, callback=lambda record, report=report: report())

        def step(done: float, text: str, k=k, share=share):
            return None if callback is None else callback(share + done / len(ks), f"k = {k}: {text}")

        stability = bootstrap_stability(model, table, n_resamples=n_resamples, random_state=random_state, callback=step)
        terms = model.objective_terms_
        data_cost = float(model.objective_ - terms.regularization)
        rows.append(dict(k=k, K=int(model.n_clusters_), lam=float(model.lam_), data_cost=data_cost,
                         data_cost_per_row=data_cost / len(table), mean_jaccard=float(stability.mean_jaccard.mean()),
                         min_jaccard=float(stability.mean_jaccard.min()), unstable=int(stability.unstable.sum()),
                         silhouette=float(cost_silhouette(model, table).mean())))
    _reporter(callback, 1.0, "done")()
    return pd.DataFrame(rows)
