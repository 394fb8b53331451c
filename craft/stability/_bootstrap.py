"""Is each cluster real? :func:`bootstrap_stability`: refits on resampled rows, each cluster matched to its
refit by the Jaccard of their rows, and how often each of its features stays selected."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..estimator import CRAFT
from ..exceptions import CraftInputError
from ._refits import (DISSOLVED_JACCARD, MATCHED_JACCARD, UNSTABLE_JACCARD, UNSTABLE_MEANING, Progress, _check_resamplable,
                      _checked_count, _checked_table, _refit, _reporter, best_match_jaccard, sizing)


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
