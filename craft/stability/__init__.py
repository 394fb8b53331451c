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

One question per module: ``_bootstrap``, ``_null`` and ``_k``; what they
share (thresholds, matching, refits) in ``_refits``. Every public name is
imported from here.
"""

from ._bootstrap import Stability, bootstrap_stability
from ._k import cost_silhouette, k_evidence
from ._null import REFERENCE_WORDS, PermutationNull, one_cluster_reference, permutation_null, shuffled_columns
from ._refits import (DISSOLVED_JACCARD, MATCHED_JACCARD, MAX_KS, MAX_RESAMPLES, ROWS_PER_K, UNSTABLE_JACCARD, UNSTABLE_MEANING,
                      Progress, Stopped, best_match_jaccard, refit_params, sizing)

__all__ = ["DISSOLVED_JACCARD", "MATCHED_JACCARD", "MAX_KS", "MAX_RESAMPLES", "REFERENCE_WORDS", "ROWS_PER_K", "UNSTABLE_JACCARD",
           "UNSTABLE_MEANING", "PermutationNull", "Progress", "Stability", "Stopped", "best_match_jaccard", "bootstrap_stability",
           "cost_silhouette", "k_evidence", "one_cluster_reference", "permutation_null", "refit_params", "shuffled_columns", "sizing"]
