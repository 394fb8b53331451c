"""Cluster cards: what defines one cluster, in numbers, in rows and in a rule.

A card answers "what is this cluster?" for one cluster of a fitted
:class:`craft.CRAFT`, from its inspection surface and the table it was fitted
on, and says in a sentence per part what the numbers mean:

* **Evidence**, the cluster against all the rows, per feature (the selected
  ones first, in the rule's order): for a numeric feature the cluster's mean
  and spread against the overall ones, the standardised difference and the
  v-test of FactoMineR's ``catdes``; for a categorical one every level's
  share in the cluster against its share overall, with the hypergeometric
  test of ``catdes`` (its ``descfreq`` approach) as a v-test.
* **Paragons**: the members with the lowest CRAFT cost to the cluster
  (``cost_terms(X).total``, the distance the fit assigns by), and the
  **border**: the members whose cost to another cluster comes nearest.
* **A rule**: a depth-3 decision tree (scikit-learn) on the cluster's
  selected features, one cluster against the rest, written as text, with its
  precision, recall and accuracy against CRAFT's labels.

Choices the literature leaves open (also in ``docs/numerics.md``):

* Cells: every statistic counts the cells the fit counted, read from
  ``statistics_`` through :func:`craft.profiles.numeric_moments` and
  :func:`craft.profiles.level_shares`: the observed cells under
  ``missing="marginalise"`` (a missing cell is in no count); under
  ``missing="impute"`` a missing number counts at its column mean and a
  missing level is the level ``(missing)``, as the engine counted them.
* The numeric v-test (Lebart et al.; ``catdes``): with ``N`` counted cells
  overall, ``n`` in the cluster, overall mean ``x̄`` and population variance
  ``s²``, ``v = (x̄_k - x̄) / sqrt(s²/n · (N - n)/(N - 1))``, the difference
  in standard errors of the mean of ``n`` cells drawn at random without
  replacement; its p-value is the two-sided normal one.
* The level test: the cluster's count ``x`` of a level is compared with the
  hypergeometric law of ``n`` draws from ``N`` cells of which ``M`` hold the
  level. ``p = min(1, 2 · min(P(X ≤ x), P(X ≥ x)))`` (exact, doubled one-sided
  tail) and ``v = sign(x - nM/N) · Φ⁻¹(1 - p/2)``, the normal quantile with
  that p-value, as ``catdes`` reports a level's v-test. Tails are computed
  in logarithms, so a v-test stays finite where p underflows. The
  convention (:data:`LEVEL_P_CONVENTION`): the doubled tail of
  ``catdes``/``descfreq``, not the mid-p ``P(X > x) + P(X = x)/2`` of recent
  FactoMineR, because a card's words must not overstate: with a discrete
  law the doubled exact tail is conservative (its rejection rate never
  exceeds the level), while the mid-p's can; the card says which.
* Population: the overall mean, sd and share are over the rows the counts
  are over. With ``noise=True`` those are the clustered rows: the noise rows
  are in no cluster's statistics, so they are left out of the overall too
  (``_evidence._clustered_moments``), and the card says so.
* Multiplicity: Benjamini–Hochberg over every test on the card (each numeric
  feature and each level of each categorical feature), ``p_adjusted``.
* The tree: ``max_depth=3``, ``class_weight="balanced"`` (a small cluster
  against the rest would otherwise be described by "never"),
  ``random_state=0``; numbers in table units with missing cells left missing
  (scikit-learn routes them, and the rule says where; under
  ``missing="impute"`` at the column mean, as the fit counted them, and the
  rule says "or missing" where a condition takes the mean), levels one-hot (at
  most ``RULE_LEVELS`` per feature, those with the largest |v|, so a feature
  of thousands of levels stays small); it learns from every row, or from a
  uniform sample of ``RULE_ROWS`` rows of a larger table, and its agreement
  is counted on every row. A threshold is written with the fewest digits
  that pick the same rows, trying the data's value just below it too (2.1,
  not 2.1999999); a "≠"/"not in" condition that takes missing cells (in no
  level, or in the missing level it does not exclude) says "or missing".

These tests describe how far the cluster differs from the rest of the data.
The cluster was found from the same data, on its selected features above
all, so their p-values are small by construction there: they are not a test
that the cluster exists.

Pure pandas/NumPy/SciPy/scikit-learn: no plotting, no user interface. One
part per module: ``_evidence`` (the v-tests), ``_rows`` (paragons and border
rows), ``_rule`` (the tree and its text), ``_card`` (the card and its words);
every public name is imported from here.
"""

from ._card import CardWords, ClusterCard, cluster_card
from ._evidence import LEVEL_COLUMNS as LEVEL_COLUMNS  # the columns of level_evidence, public as before the split
from ._evidence import LEVEL_P_WORDS as LEVEL_P_WORDS
from ._evidence import NUMERIC_COLUMNS as NUMERIC_COLUMNS
from ._evidence import LEVEL_P_CONVENTION, MULTIPLICITY, level_evidence, numeric_evidence
from ._rows import border_rows, paragons
from ._rule import RULE_DEPTH, RULE_LEVELS, RULE_ROWS, ClusterRule, cluster_rule

__all__ = ["ClusterCard", "ClusterRule", "CardWords", "cluster_card", "numeric_evidence", "level_evidence",
           "paragons", "border_rows", "cluster_rule", "RULE_DEPTH", "RULE_ROWS", "RULE_LEVELS", "MULTIPLICITY",
           "LEVEL_P_CONVENTION"]
