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
  (:func:`_clustered_moments`), and the card says so.
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

Pure pandas/NumPy/SciPy/scikit-learn: no plotting, no user interface.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import special, stats
from sklearn.tree import DecisionTreeClassifier

from . import _engine
from .encoding import EncodedData
from .exceptions import CraftInputError
from .profiles import level_shares, numeric_moments

__all__ = ["ClusterCard", "ClusterRule", "CardWords", "cluster_card", "numeric_evidence", "level_evidence",
           "paragons", "border_rows", "cluster_rule", "RULE_DEPTH", "RULE_ROWS", "RULE_LEVELS", "MULTIPLICITY",
           "LEVEL_P_CONVENTION"]

#: Depth of the rule's tree: at most three conditions per path, readable in one breath.
RULE_DEPTH = 3
#: Rows the rule's tree learns from at most (a uniform sample of a larger table), and predicts at a time.
RULE_ROWS = 50_000
#: Levels of a categorical feature the tree is given at most (one-hot): those with the largest |v|.
RULE_LEVELS = 30
#: How the card's p-values are adjusted for the number of tests on it.
MULTIPLICITY = "Benjamini–Hochberg"
#: The level tests' p-value convention, as the card says it (see the module's notes and docs/numerics.md).
LEVEL_P_CONVENTION = "doubled tail"
LEVEL_P_WORDS = ("A level's p-value is the exact hypergeometric tail, doubled (catdes/descfreq's convention), not "
                 "the mid-p of recent FactoMineR: with counts, the doubled tail never rejects more often than its "
                 "level, so it does not overstate a difference; a mid-p is closer to the level on average but can "
                 "exceed it.")

NUMERIC_COLUMNS = ["feature", "selected", "rank", "n_cells", "mean", "overall_mean", "sd", "overall_sd",
                   "std_diff", "v_test", "p_value", "p_adjusted"]
LEVEL_COLUMNS = ["feature", "selected", "rank", "level", "count", "n_cells", "cluster_share", "overall_share",
                 "expected", "v_test", "p_value", "p_adjusted", "direction"]


@dataclass(frozen=True)
class ClusterRule:
    """A short rule for one cluster, and how well it agrees with CRAFT's labels.

    Attributes
    ----------
    text : str
        The paths of the tree that name the cluster, joined by " or "
        (``"every row"`` for a tree of one leaf that names it; empty when no
        leaf names it).
    paths : tuple of str
        One conjunction per leaf that names the cluster.
    features : tuple of str
        The features the tree was given (the cluster's selected features).
    n_learnt : int
        Rows the tree learnt from (every row, or a sample of :data:`RULE_ROWS`).
    n_predicted : int
        Rows the rule picks.
    precision, recall, accuracy : float
        On the fitted table against ``labels_ == cluster``: the share of the
        picked rows that are in the cluster (0 when none is picked), the
        share of the cluster that is picked, and the share of all rows on
        which rule and CRAFT agree.
    """

    text: str
    paths: tuple[str, ...]
    features: tuple[str, ...]
    n_learnt: int
    n_predicted: int
    precision: float
    recall: float
    accuracy: float


@dataclass(frozen=True)
class CardWords:
    """One sentence (or two) per part of a card, saying what its numbers mean."""

    summary: str
    numeric: str
    levels: str
    tests: str
    paragons: str
    border: str
    rule: str


@dataclass(frozen=True)
class ClusterCard:
    """Everything a card shows about one cluster (see :func:`cluster_card`).

    Attributes
    ----------
    cluster, size, n_rows : int
        The cluster, its rows and the table's rows.
    numeric : DataFrame
        :func:`numeric_evidence` with ``p_adjusted`` over the card's tests.
    levels : DataFrame
        :func:`level_evidence` with ``p_adjusted`` over the card's tests.
    paragons, border : DataFrame
        :func:`paragons` and :func:`border_rows`.
    rule : ClusterRule or None
        None when the cluster selects no feature.
    n_tests : int
        Tests adjusted together (numeric features plus levels).
    words : CardWords
    """

    cluster: int
    size: int
    n_rows: int
    numeric: pd.DataFrame
    levels: pd.DataFrame
    paragons: pd.DataFrame
    border: pd.DataFrame
    rule: ClusterRule | None
    n_tests: int
    words: CardWords


# ---------------------------------------------------------------------------
# Evidence


def _feature_order(model, cluster: int, kind: str) -> np.ndarray:
    """Engine columns of one kind, selected first, each group in the rule's rank order."""
    n_numeric = len(model.schema_.numeric)
    columns = np.arange(n_numeric) if kind == "numeric" else np.arange(n_numeric, len(model.engine_features_))
    selection = model.selection_
    keys = np.lexsort((selection.rank[cluster, columns], ~selection.selected[cluster, columns]))
    return columns[keys]


def numeric_evidence(model, cluster: int) -> pd.DataFrame:
    """The cluster against all the rows on every numeric feature: moments, standardised difference, v-test.

    Parameters
    ----------
    model : craft.CRAFT
        A fitted model.
    cluster : int

    Returns
    -------
    DataFrame
        One row per numeric feature, selected first (in the rule's rank
        order), then the others. ``n_cells`` (cells of the cluster the fit
        counted), ``mean``, ``overall_mean``, ``sd``, ``overall_sd`` (table
        units, :func:`craft.profiles.numeric_moments`), ``std_diff``
        (``(mean - overall_mean) / overall_sd``), ``v_test``, ``p_value``
        (two-sided, unadjusted) and ``p_adjusted`` (Benjamini–Hochberg over
        this table's tests alone; :func:`cluster_card` adjusts over the
        card's). A feature the test cannot judge (no counted cell in the
        cluster, none outside it, or a constant column) has ``v_test`` 0 and
        ``p_value`` 1.
    """
    columns = _feature_order(model, cluster, "numeric")
    mean, sd, overall_mean, overall_sd = numeric_moments(model)
    if _has_noise(model):
        overall_mean, overall_sd = _clustered_moments(model)
    counts = model.statistics_.numeric_counts
    n, total = counts[cluster, columns], counts[:, columns].sum(axis=0)
    spread = overall_sd[columns]
    difference = mean[cluster, columns] - overall_mean[columns]
    tested = (n > 0) & (n < total) & (spread > 0)
    # Standard error of the mean of n cells drawn without replacement from the N counted ones.
    safe_n, safe_total = np.where(tested, n, 1.0), np.where(tested, total, 2.0)
    error = np.where(tested, spread, 1.0) * np.sqrt((safe_total - safe_n) / (safe_n * (safe_total - 1.0)))
    v = np.where(tested, difference / error, 0.0)
    p = np.where(tested, 2.0 * stats.norm.sf(np.abs(v)), 1.0)
    frame = pd.DataFrame({
        "feature": [model.engine_features_[j] for j in columns],
        "selected": model.selection_.selected[cluster, columns].astype(bool),
        "rank": model.selection_.rank[cluster, columns].astype(np.int64),
        "n_cells": n.astype(np.int64),
        "mean": mean[cluster, columns],
        "overall_mean": overall_mean[columns],
        "sd": sd[cluster, columns],
        "overall_sd": spread,
        "std_diff": np.where(spread > 0, difference / np.where(spread > 0, spread, 1.0), 0.0),
        "v_test": v,
        "p_value": p,
    })
    frame["p_adjusted"] = _adjusted(frame["p_value"].to_numpy())
    return frame[NUMERIC_COLUMNS]


def level_evidence(model, cluster: int) -> pd.DataFrame:
    """The cluster against all the rows on every level of every categorical feature: shares and v-test.

    Returns
    -------
    DataFrame
        One row per level; features selected first (in the rule's rank
        order), then the others; within a feature, levels from the most
        over-represented to the most under-represented. ``count`` and
        ``n_cells`` (the level's cells and the feature's counted cells in
        the cluster), ``cluster_share``, ``overall_share``
        (:func:`craft.profiles.level_shares`), ``expected`` (the count at the
        overall share), ``v_test``, ``p_value`` (the doubled hypergeometric
        tail), ``p_adjusted`` (Benjamini–Hochberg over this table's tests
        alone) and ``direction`` ("over", "under" or "as overall").
    """
    columns = _feature_order(model, cluster, "categorical")
    if columns.size == 0:
        return pd.DataFrame({name: pd.Series(dtype=_LEVEL_DTYPES.get(name, float)) for name in LEVEL_COLUMNS})
    features = columns - len(model.schema_.numeric)
    template = model.encoder_.template()
    level_counts = model.statistics_.level_counts
    totals = _engine.level_totals(template, level_counts)
    shares, overall = level_shares(model)
    if _has_noise(model):
        # One population with the test's: the clustered rows (noise rows are in no cluster's counts).
        pooled = level_counts.sum(axis=0)
        overall = pooled / np.maximum(np.repeat(_engine.level_totals(template, pooled[None, :])[0], template.n_levels), 1.0)
    names = model.encoder_.level_names()
    # Every level of every feature at once, the features in ``columns``' order (a wide table has 10,000s).
    n_levels = template.n_levels[features]
    owner = np.repeat(np.arange(features.size), n_levels)
    first = np.cumsum(n_levels) - n_levels
    levels = template.offsets[features][owner] + np.arange(owner.size) - first[owner]
    count = np.rint(level_counts[cluster, levels])
    holding = np.rint(level_counts[:, levels].sum(axis=0))
    drawn = totals[cluster, features][owner]
    cells = totals[:, features].sum(axis=0)[owner]
    v, p = _hypergeometric_v(count, holding, drawn, cells)
    frame = pd.DataFrame({
        "feature": np.asarray(model.engine_features_, dtype=object)[columns][owner],
        "selected": model.selection_.selected[cluster, columns][owner].astype(bool),
        "rank": model.selection_.rank[cluster, columns][owner].astype(np.int64),
        "level": [name for feature in features for name in names[feature]],
        "count": count.astype(np.int64),
        "n_cells": drawn.astype(np.int64),
        "cluster_share": shares[cluster, levels],
        "overall_share": overall[levels],
        "expected": drawn * holding / np.maximum(cells, 1.0),
        "v_test": v,
        "p_value": p,
    })
    # Within a feature, from the most over- to the most under-represented level (stable among ties).
    frame = frame.iloc[np.lexsort((-v, owner))].reset_index(drop=True)
    frame["direction"] = np.select([frame["v_test"] > 0, frame["v_test"] < 0], ["over", "under"], "as overall")
    frame["p_adjusted"] = _adjusted(frame["p_value"].to_numpy())
    return frame[LEVEL_COLUMNS]


def _has_noise(model) -> bool:
    """Whether the fit left rows in no cluster (``noise=True``): its overall is then the clustered rows'."""
    return int(getattr(model, "n_noise_", 0) or 0) > 0


def _clustered_moments(model) -> tuple[np.ndarray, np.ndarray]:
    """Overall mean and sd of every numeric feature over the clustered rows (table units).

    With ``noise=True`` the noise rows are in no cluster's statistics, so
    the v-test's N (the clusters' counted cells) leaves them out; the
    overall mean and sd it compares with must be over the same rows, not the
    encoder's global tables (every row). Pooled from ``statistics_``.
    """
    stats_ = model.statistics_
    template = model.encoder_.template()
    counts = stats_.numeric_counts.sum(axis=0)
    empty = counts == 0
    safe = np.where(empty, 1.0, counts)
    mean = np.where(empty, template.global_mean, stats_.sums.sum(axis=0) / safe)
    variance = np.where(empty, template.global_var, np.maximum(stats_.sums_sq.sum(axis=0) / safe - mean * mean, 0.0))
    encoder = model.encoder_
    return encoder.to_original_units(mean), np.sqrt(variance) * encoder.scale_


_LEVEL_DTYPES = {"feature": object, "selected": bool, "rank": np.int64, "level": object, "count": np.int64,
                 "n_cells": np.int64, "direction": object}


#: Below this a tail probability is recomputed in logs (a float64 keeps 15 digits down to about 1e-307).
_SMALLEST_TAIL = 1e-300


def _hypergeometric_v(count: np.ndarray, holding: np.ndarray, drawn: np.ndarray,
                      cells: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """v-test and two-sided p of each ``count`` among ``drawn`` cells, ``holding`` of all ``cells`` having the level.

    Element-wise over the four arrays; where a feature has no counted cell
    (``drawn`` or ``cells`` 0) there is nothing to test: v = 0, p = 1.
    """
    v, p = np.zeros(count.shape), np.ones(count.shape)
    tested = (drawn > 0) & (cells > 0)
    if not tested.any():
        return v, p
    count, holding, drawn, cells = count[tested], holding[tested], drawn[tested], cells[tested]
    law = stats.hypergeom(cells.astype(np.int64), holding.astype(np.int64), drawn.astype(np.int64))
    tail = np.minimum(law.sf(count - 1.0), law.cdf(count))
    # The tails in logs only where they underflow: scipy's logsf/logcdf of the hypergeometric loop in
    # Python, about a millisecond a level (a minute for a 10,000-column table).
    tiny = tail < _SMALLEST_TAIL
    with np.errstate(divide="ignore"):
        log_tail = np.log(tail)
        if tiny.any():
            rare = stats.hypergeom(cells[tiny].astype(np.int64), holding[tiny].astype(np.int64),
                                   drawn[tiny].astype(np.int64))
            log_tail[tiny] = np.minimum(rare.logsf(count[tiny] - 1.0), rare.logcdf(count[tiny]))
    log_p = np.minimum(0.0, np.log(2.0) + log_tail)
    expected = drawn * holding / cells
    # Φ⁻¹(1 - p/2) from log p: exact where p underflows (a very large cluster, a very rare level).
    v[tested] = np.sign(count - expected) * -special.ndtri_exp(log_p - np.log(2.0)) + 0.0  # + 0.0: no "-0"
    p[tested] = np.exp(log_p)
    return v, p


def _adjusted(p: np.ndarray) -> np.ndarray:
    """Benjamini–Hochberg adjusted p-values (:data:`MULTIPLICITY`)."""
    if p.size == 0:
        return p.astype(np.float64)
    return stats.false_discovery_control(p, method="bh")


# ---------------------------------------------------------------------------
# Rows


#: Why a model without its training labels (a Dask fit's, or one loaded from the file it wrote) cannot be carded.
_NO_LABELS = ("This model holds no labels of the rows it was fitted on (labels_ is None: a DaskCRAFT fit keeps them "
              "on its workers, and a model file it wrote does not hold them); {what} needs them to tell which rows "
              "are the cluster's. Fit the model in memory (craft.CRAFT) to have them.")


def _row_count(n, name: str) -> int:
    """How many rows a card shows: an integer >= 0 (a negative one would slice off rows from the end)."""
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)) or n < 0:
        raise CraftInputError(f"{name}={n!r} must be an integer >= 0: the number of rows to show.")
    return int(n)


def _check(model, X: pd.DataFrame, cluster: int) -> np.ndarray:
    """The fitted labels, after checking that ``X`` is the fitted table and ``cluster`` exists."""
    labels = getattr(model, "labels_", None)
    if getattr(model, "clusters_", None) is None:
        raise CraftInputError("The model is not fitted: fit it before asking for a cluster card.")
    if labels is None:
        raise CraftInputError(_NO_LABELS.format(what="a cluster card"))
    labels = np.asarray(labels)
    if not isinstance(X, pd.DataFrame):
        raise CraftInputError(f"X must be the table the model was fitted on, as a DataFrame; got {type(X).__name__}.")
    if len(X) != labels.shape[0]:
        raise CraftInputError(f"X has {len(X):,} rows; the fit had {labels.shape[0]:,}: pass the fitted table.")
    absent = [name for name in model.engine_features_ if name not in X.columns]
    if absent:
        raise CraftInputError(f"X lacks the fitted column(s) {absent[:5]}: pass the fitted table.")
    if not (isinstance(cluster, (int, np.integer)) and 0 <= int(cluster) < model.n_clusters_):
        raise CraftInputError(f"cluster={cluster!r} does not exist: the fit has clusters 0..{model.n_clusters_ - 1}.")
    return labels


def _cells(model, X: pd.DataFrame, cluster: int, rows: np.ndarray) -> pd.DataFrame:
    """The rows' original cells of the fitted features, the cluster's selected features first."""
    order = [*_feature_order(model, cluster, "numeric"), *_feature_order(model, cluster, "categorical")]
    selected = model.selection_.selected[cluster]
    names = [model.engine_features_[j] for j in order if selected[j]] + [model.engine_features_[j] for j in order
                                                                         if not selected[j]]
    cells = X.iloc[rows][names]
    cells.index.name = "row"
    return cells


def _beside(measures: dict, cells: pd.DataFrame) -> pd.DataFrame:
    """``measures`` as the first columns of ``cells``; a measure named like a column of the table gets a suffix."""
    named = {}
    for name, values in measures.items():
        while name in cells.columns:
            name = f"{name} (card)"
        named[name] = values
    return pd.concat([pd.DataFrame(named, index=cells.index), cells], axis=1)


def paragons(model, X: pd.DataFrame, cluster: int, costs: np.ndarray, *, n: int = 5) -> pd.DataFrame:
    """The ``n`` members with the lowest CRAFT cost to the cluster, with their cells.

    Parameters
    ----------
    costs : ndarray of shape (n_rows, n_clusters)
        ``model.cost_terms(X).total``.

    Returns
    -------
    DataFrame
        Indexed by the rows' labels in ``X`` ("row"); ``cost`` (d_nk to the
        cluster), then the fitted features' cells (selected first). Ties go
        to the earlier row.
    """
    n = _row_count(n, "n")
    members = np.flatnonzero(np.asarray(model.labels_) == cluster)
    own = costs[members, cluster]
    order = np.lexsort((members, own))[:n]
    return _beside({"cost": own[order]}, _cells(model, X, cluster, members[order]))


def border_rows(model, X: pd.DataFrame, cluster: int, costs: np.ndarray, *, n: int = 5) -> pd.DataFrame:
    """The ``n`` members nearest to leaving: the smallest margin between another cluster's cost and theirs.

    Returns
    -------
    DataFrame
        Indexed by row label; ``cost`` (to this cluster), ``next_cluster``
        (the cheapest other cluster), ``next_cost`` and ``margin``
        (``next_cost - cost``), then the cells. Empty with one cluster.
    """
    n = _row_count(n, "n")
    members = np.flatnonzero(np.asarray(model.labels_) == cluster)
    if costs.shape[1] < 2:
        members = members[:0]
    own = costs[members, cluster]
    others = costs[members].copy()
    others[:, cluster] = np.inf
    nearest = others.argmin(axis=1) if members.size else np.zeros(0, dtype=np.int64)
    there = others[np.arange(members.size), nearest]
    order = np.lexsort((members, there - own))[:n]
    return _beside({"cost": own[order], "next_cluster": nearest[order].astype(np.int64), "next_cost": there[order],
                    "margin": (there - own)[order]}, _cells(model, X, cluster, members[order]))


# ---------------------------------------------------------------------------
# The rule


@dataclass(frozen=True)
class _Design:
    """What the rule tree is given, and what it takes to read its splits back as words.

    ``numeric``: engine columns of the selected numbers; ``levels``: per selected categorical feature (engine
    column), the level codes one-hot encoded; ``columns``: per input column, ``(feature, level)`` (level None
    for a number); ``values``: each selected number in table units over all rows (missing NaN), for the
    thresholds' digits; ``incomplete``: the features with a row that no condition on its listed values
    names (a missing cell, or a level not one-hot encoded).
    """

    numeric: list[int]
    levels: dict[int, np.ndarray]
    columns: list[tuple[str, str | None]]
    values: dict[str, np.ndarray]
    incomplete: set[str]
    level_names: dict[str, list[str]]
    #: Selected categorical features with missing cells: those a "≠"/"not in" condition takes too (marginalised,
    #: no level), or under missing="impute" the name of their missing level.
    missing_levels: dict[str, str | None] = dataclasses.field(default_factory=dict)
    #: Selected numeric features with cells imputed in the fit (missing="impute"): their column mean, where the
    #: tree learnt them.
    imputed: dict[str, float] = dataclasses.field(default_factory=dict)

    def matrix(self, model, data: EncodedData) -> np.ndarray:
        """The tree's inputs for the rows of ``data``: numbers in table units (missing NaN), levels one-hot."""
        n_numeric = len(model.schema_.numeric)
        blocks = [np.empty((data.n_samples, 0))]
        if self.numeric:
            block = data.numeric[:, self.numeric] * model.encoder_.scale_[self.numeric] + model.encoder_.center_[self.numeric]
            if data.observed is not None:
                block = np.where(data.observed[:, self.numeric], block, np.nan)
            blocks.append(block)
        # A code not listed (a missing cell, marginalised; a level left out) is a zero in every column.
        blocks += [(data.codes[:, [j - n_numeric]] == codes[None, :]).astype(np.float64) for j, codes in self.levels.items()]
        return np.hstack(blocks)


def _rule_design(model, data: EncodedData, cluster: int, levels: pd.DataFrame) -> _Design:
    """The rule's inputs for one cluster: its selected features, at most :data:`RULE_LEVELS` levels of each
    categorical one (those with the largest |v| on the card, ``levels``)."""
    n_numeric = len(model.schema_.numeric)
    selected = np.flatnonzero(model.selection_.selected[cluster])
    numeric = [int(j) for j in selected if j < n_numeric]
    columns: list[tuple[str, str | None]] = [(model.engine_features_[j], None) for j in numeric]
    values = {}
    for j in numeric:
        column = data.numeric[:, j] * model.encoder_.scale_[j] + model.encoder_.center_[j]
        values[model.engine_features_[j]] = (column if data.observed is None
                                             else np.where(data.observed[:, j], column, np.nan))
    incomplete = {feature for feature, column in values.items() if np.isnan(column).any()}
    names = model.encoder_.level_names()
    listed, level_names = {}, {}
    # Every feature's strongest levels in one sort (a wide table has 10,000s of features): by feature,
    # then by |v| from the largest, ties in the card's order.
    feature_codes = pd.factorize(levels["feature"])[0]
    ranked = levels.iloc[np.lexsort((-np.abs(levels["v_test"].to_numpy()), feature_codes))]
    strongest = ranked[ranked.groupby("feature", sort=False).cumcount().to_numpy() < RULE_LEVELS]
    strongest_levels = strongest.groupby("feature", sort=False)["level"].agg(list).to_dict()
    missing_levels: dict[str, str | None] = {}
    for j in (int(j) for j in selected if j >= n_numeric):
        feature, q = model.engine_features_[j], j - n_numeric
        chosen = sorted(names[q].index(level) for level in strongest_levels.get(feature, []))
        listed[j] = np.asarray(chosen, dtype=np.int64)
        columns += [(feature, names[q][code]) for code in chosen]
        level_names[feature] = names[q]
        if len(chosen) < len(names[q]) or (data.codes[:, q] < 0).any():
            incomplete.add(feature)
        if model.encoder_.has_missing_level_[q]:
            missing_levels[feature] = names[q][-1]  # impute: missing cells are this level
        elif (data.codes[:, q] < 0).any():
            missing_levels[feature] = None  # marginalise: a missing cell is in no level
    imputed = {model.engine_features_[j]: float(model.encoder_.impute_[j]) for j in numeric
               if model.n_imputed_.get(model.engine_features_[j], 0)}
    return _Design(numeric, listed, columns, values, incomplete, level_names, missing_levels, imputed)


def _parents(tree) -> dict[int, tuple[int, bool]]:
    """Every node's parent, and whether it is the parent's left child (the ``x <= threshold`` side)."""
    parents = {}
    for node in range(tree.node_count):
        for child, left in ((tree.children_left[node], True), (tree.children_right[node], False)):
            if child >= 0:
                parents[int(child)] = (node, left)
    return parents


def _readable(threshold: float, values: np.ndarray) -> str:
    """``threshold`` with the fewest significant digits that split ``values`` exactly as it does.

    A value ``v`` is on the same side of ``t`` and of a number ``r`` unless ``min(t, r) < v <= max(t, r)``
    (``v <= t`` is the tree's left branch), so the text picks the same rows as the tree. The numbers tried,
    at each precision: the threshold rounded, and the largest value of the data at or below it, rounded
    (the data's own precision: a threshold of 2.1999999 just below the value 2.2 is written 2.1 when 2.1
    is the value below it, where its rounding 2.2 would move the rows at 2.2).
    """
    finite = values[np.isfinite(values)]
    below = finite[finite <= threshold]
    candidates = [threshold] + ([float(below.max())] if below.size else [])
    for digits in range(1, 18):
        for candidate in candidates:
            text = np.format_float_positional(candidate, precision=digits, unique=False, fractional=False, trim="-")
            rounded = float(text)
            low, high = min(threshold, rounded), max(threshold, rounded)
            if not ((finite > low) & (finite <= high)).any():
                return text
    return repr(float(threshold))


def _conditions(tree, parents: dict, node: int, design: _Design) -> list[str]:
    """The readable conditions on the path from the root to ``node``, one per feature (in order of first use)."""
    path = []
    while node in parents:
        node, left = parents[node]
        path.append((node, left))
    # Per feature: [lower, upper, missing goes this way, column] for a number, [is, is not] for levels.
    bounds: dict[str, list] = {}
    for node, left in reversed(path):
        column = int(tree.feature[node])
        feature, level = design.columns[column]
        if level is None:
            entry = bounds.setdefault(feature, [-np.inf, np.inf, True, column])
            threshold = float(tree.threshold[node])
            if left:
                entry[1] = min(entry[1], threshold)
            else:
                entry[0] = max(entry[0], threshold)
            entry[2] = entry[2] and bool(tree.missing_go_to_left[node]) == left
        else:
            entry = bounds.setdefault(feature, [None, []])
            if left:  # one-hot <= 0.5: not this level
                entry[1].append(level)
            else:
                entry[0] = level
    return [_number_condition(feature, entry, design) if len(entry) == 4 else _level_condition(feature, entry, design)
            for feature, entry in bounds.items()]


def _number_condition(feature: str, entry: list, design: _Design) -> str:
    lower, upper, with_missing, _ = entry
    values = design.values[feature]
    if np.isfinite(lower) and np.isfinite(upper):
        text = f"{_readable(lower, values)} < {feature} ≤ {_readable(upper, values)}"
    elif np.isfinite(upper):
        text = f"{feature} ≤ {_readable(upper, values)}"
    else:
        text = f"{feature} > {_readable(lower, values)}"
    if feature in design.imputed:
        # missing="impute": the tree learnt a missing number at the column mean, so the condition takes the
        # missing cells exactly when it takes the mean.
        mean = design.imputed[feature]
        with_missing = bool(lower < mean <= upper)
        return f"({text} or {feature} missing)" if with_missing else text
    return f"({text} or {feature} missing)" if with_missing and feature in design.incomplete else text


def _level_condition(feature: str, entry: list, design: _Design) -> str:
    """``f = a``; the levels a path excludes, or (shorter, where no cell is missing) those it keeps."""
    equal, other = entry
    if equal is not None:
        return f"{feature} = {equal}"
    kept = [level for level in design.level_names[feature] if level not in other]
    if feature not in design.incomplete and len(kept) <= len(other):
        return f"{feature} = {kept[0]}" if len(kept) == 1 else f"{feature} in {{{', '.join(kept)}}}"
    text = f"{feature} ≠ {other[0]}" if len(other) == 1 else f"{feature} not in {{{', '.join(other)}}}"
    # A missing cell is in none of the excluded levels (marginalised: in no level; imputed: its own level, unless
    # excluded), so the condition takes it: say so.
    if feature in design.missing_levels and design.missing_levels[feature] not in other:
        return f"({text} or {feature} missing)"
    return text


def _naming_nodes(tree, in_cluster: int) -> list[int]:
    """The highest nodes all of whose leaves name the cluster: one path of the rule each.

    Two sibling leaves that both name it are one condition shorter as their parent.
    """
    left, right = tree.children_left, tree.children_right

    def names_it(node: int) -> bool:
        if left[node] < 0:
            return int(np.argmax(tree.value[node, 0])) == in_cluster
        return names_it(int(left[node])) and names_it(int(right[node]))

    found: list[int] = []

    def collect(node: int) -> None:
        if names_it(node):
            found.append(node)
        elif left[node] >= 0:
            collect(int(left[node]))
            collect(int(right[node]))

    collect(0)
    return found


def cluster_rule(model, data: EncodedData, cluster: int, *, levels: pd.DataFrame | None = None) -> ClusterRule | None:
    """A depth-:data:`RULE_DEPTH` tree on the cluster's selected features, one cluster against the rest, as text.

    The tree learns from every row, or from a uniform sample of :data:`RULE_ROWS` rows of a larger table
    (seed 0); its agreement with CRAFT is counted on every row. A categorical feature enters with its
    :data:`RULE_LEVELS` levels of largest |v| at most.

    Parameters
    ----------
    model : craft.CRAFT
    data : EncodedData
        ``model.encoder_.transform`` of the fitted table.
    cluster : int
    levels : DataFrame or None
        :func:`level_evidence` of the cluster (computed when None).

    Returns
    -------
    ClusterRule or None
        None when the cluster selects no feature.
    """
    if not model.selection_.selected[cluster].any():
        return None
    design = _rule_design(model, data, cluster, level_evidence(model, cluster) if levels is None else levels)
    inside = np.asarray(model.labels_) == cluster
    n_rows = inside.size
    learn = (np.sort(np.random.default_rng(0).choice(n_rows, RULE_ROWS, replace=False)) if n_rows > RULE_ROWS
             else np.arange(n_rows))
    tree = DecisionTreeClassifier(max_depth=RULE_DEPTH, class_weight="balanced", random_state=0)
    tree.fit(design.matrix(model, data.take(learn)), inside[learn])
    # Predicted a block of rows at a time: the one-hot inputs of every row at once could be large.
    picked = np.concatenate([tree.predict(design.matrix(model, data.take(np.arange(start, min(start + RULE_ROWS, n_rows)))))
                             for start in range(0, n_rows, RULE_ROWS)]).astype(bool)
    structure = tree.tree_
    # classes_ is [False, True], or [True] when the cluster holds every row.
    in_cluster = int(np.flatnonzero(tree.classes_)[0])
    parents = _parents(structure)
    paths = tuple(" and ".join(_conditions(structure, parents, node, design)) or "every row"
                  for node in _naming_nodes(structure, in_cluster))
    text = paths[0] if len(paths) == 1 else " or ".join(f"({path})" for path in paths)
    hits = int((picked & inside).sum())
    return ClusterRule(
        text=text,
        paths=paths,
        features=tuple(dict.fromkeys(feature for feature, _ in design.columns)),
        n_learnt=int(learn.size),
        n_predicted=int(picked.sum()),
        precision=hits / int(picked.sum()) if picked.any() else 0.0,
        recall=hits / max(int(inside.sum()), 1),
        accuracy=float((picked == inside).mean()),
    )


# ---------------------------------------------------------------------------
# The card


def cluster_card(model, X: pd.DataFrame, cluster: int, *, n_rows: int = 5, costs: np.ndarray | None = None) -> ClusterCard:
    """The card of one cluster: evidence per feature, paragons and border rows, a rule, and words.

    Parameters
    ----------
    model : craft.CRAFT
        A model fitted in memory.
    X : DataFrame
        The table it was fitted on.
    cluster : int
    n_rows : int, default=5
        Paragons and border rows shown.
    costs : ndarray of shape (n_rows, n_clusters) or None
        ``model.cost_terms(X).total`` when the caller already has it (the
        cards of several clusters); computed when None.

    Returns
    -------
    ClusterCard

    Raises
    ------
    CraftInputError
        If the model is not fitted, ``X`` is not its table or the cluster
        does not exist.

    Examples
    --------
    >>> from craft import CRAFT
    >>> X = pd.DataFrame({"size": [1.0, 1.2, 0.9, 8.0, 8.3, 7.9], "colour": ["red"] * 3 + ["blue"] * 3})
    >>> model = CRAFT(m=0.5, k=2, random_state=0).fit(X)
    >>> card = cluster_card(model, X, int(model.labels_[0]))
    >>> card.rule.text, card.rule.accuracy
    ('colour = red', 1.0)
    """
    n_rows = _row_count(n_rows, "n_rows")
    labels = _check(model, X, cluster)
    cluster = int(cluster)
    data = model.encoder_.transform(X[list(model.engine_features_)])
    if costs is None:
        costs = model.cost_terms(data).total
    numeric, levels = numeric_evidence(model, cluster), level_evidence(model, cluster)
    # One family: every test on the card is adjusted with every other.
    adjusted = _adjusted(np.concatenate([numeric["p_value"].to_numpy(), levels["p_value"].to_numpy()]))
    numeric["p_adjusted"] = adjusted[: len(numeric)]
    levels["p_adjusted"] = adjusted[len(numeric):]
    card_paragons = paragons(model, X, cluster, costs, n=n_rows)
    border = border_rows(model, X, cluster, costs, n=n_rows)
    rule = cluster_rule(model, data, cluster, levels=levels)
    # The cluster's size and the table's rows are the fit's (what the tests count: its statistics); the rule is
    # drawn and counted on the rows of X, which for a table on a cluster are a sample of them.
    size, n_table = int(model.cluster_sizes_[cluster]), int(np.sum(model.cluster_sizes_)) + int(getattr(model, "n_noise_", 0))
    words = _words(model, cluster, size, n_table, numeric, levels, card_paragons, border, rule,
                   rule_rows=(int((labels == cluster).sum()), len(labels)))
    return ClusterCard(cluster, size, n_table, numeric, levels, card_paragons, border, rule, adjusted.size, words)


def _words(model, cluster: int, size: int, n_rows: int, numeric: pd.DataFrame, levels: pd.DataFrame,
           card_paragons: pd.DataFrame, border: pd.DataFrame, rule: ClusterRule | None, *,
           rule_rows: tuple[int, int]) -> CardWords:
    selected = [model.engine_features_[j] for j in np.flatnonzero(model.selection_.selected[cluster])]
    shown = ", ".join(selected[:8]) + (f" and {len(selected) - 8} more" if len(selected) > 8 else "")
    summary = (f"Cluster {cluster} holds {size:,} of {n_rows:,} rows ({size / n_rows:.0%}) and selects "
               f"{len(selected)} of {len(model.engine_features_)} features: {shown or 'none'}.")
    return CardWords(
        summary=summary,
        numeric=_numeric_words(numeric),
        levels=_level_words(levels),
        tests=_test_words(model, size, len(numeric) + len(levels)),
        paragons=(f"The paragons are the {len(card_paragons)} members with the lowest CRAFT cost to cluster "
                  f"{cluster} (the distance d_nk the fit assigns rows by): its most typical rows."),
        border=(f"The border rows are the {len(border)} members whose cost to another cluster comes nearest to "
                f"their cost here (margin = cost there − cost here): a small change in their cells could move them."
                if len(border) else "With a single cluster there is no other cluster to border on."),
        rule=_rule_words(rule, cluster, *rule_rows) + _imputed_words(model, rule),
    )


def _numeric_words(numeric: pd.DataFrame) -> str:
    if numeric.empty:
        return "The fit has no numeric feature."
    what = ("Each numeric feature compares the cluster's mean with the overall mean, in overall standard "
            "deviations (the standardised difference) and as a v-test")
    chosen = numeric[numeric["selected"]]
    if chosen.empty:
        return f"{what}; the cluster selects no numeric feature."
    top = chosen.loc[chosen["std_diff"].abs().idxmax()]
    return (f"{what}. Among the selected ones {top.feature} differs most: mean {top['mean']:.4g} in the cluster "
            f"vs {top.overall_mean:.4g} overall ({top.std_diff:+.2f} sd; v = {top.v_test:.3g}).")


def _level_words(levels: pd.DataFrame) -> str:
    if levels.empty:
        return "The fit has no categorical feature."
    what = "Each level compares its share in the cluster with its share overall, with a hypergeometric v-test"
    chosen = levels[levels["selected"]]
    if chosen.empty:
        return f"{what}; the cluster selects no categorical feature."
    top = chosen.loc[chosen["v_test"].idxmax()]
    return (f"{what}. The most over-represented level of a selected feature is {top.feature} = {top.level}: "
            f"{top.cluster_share:.0%} of the cluster vs {top.overall_share:.0%} overall (v = {top.v_test:.3g}).")


def _has_missing_cells(model) -> bool:
    """Whether a cluster counted fewer cells of some feature than it has rows (missing cells marginalised)."""
    stats_ = model.statistics_
    template = model.encoder_.template()
    counts = stats_.counts[:, None]
    numeric = bool((stats_.numeric_counts < counts).any()) if stats_.numeric_counts.size else False
    totals = _engine.level_totals(template, stats_.level_counts)
    return numeric or (bool((totals < counts).any()) if totals.size else False)


def _test_words(model, size: int, n_tests: int) -> str:
    cells = ("the observed cells only (missing cells are left out, as in the fit)" if model.encoder_.marginalise
             else "every cell as the fit counted it (a missing number at its column mean, a missing level as "
                  "'(missing)')")
    drawn = (f"{size:,} rows drawn at random" if not (model.encoder_.marginalise and _has_missing_cells(model)) else
             "as many observed cells drawn at random from the feature's observed cells (where cells are missing, "
             "the cluster's observed cells of that feature, not its rows)")
    population = ("all the clustered rows (the noise rows, in no cluster, are left out of the overall mean, sd and "
                  "shares as of the counts)" if _has_noise(model) else "all the rows")
    return (f"A v-test counts the standard errors between the cluster and what {drawn} would show (FactoMineR's "
            f"catdes), against {population}; |v| > 1.96 is p < 0.05 before adjustment. p-values are two-sided, "
            f"counted on {cells}, and adjusted by {MULTIPLICITY} over the {n_tests} tests on this card. {LEVEL_P_WORDS} "
            "The clusters were found from these same data, so small p-values describe how this cluster differs from "
            "the rest; they are not evidence that the cluster exists.")


def _imputed_words(model, rule: ClusterRule | None) -> str:
    """Under missing="impute", where the rule's tree learnt the missing numbers of its features (else "")."""
    if rule is None or not rule.paths:
        return ""
    imputed = [feature for feature in rule.features if model.n_imputed_.get(feature, 0)]
    if not imputed:
        return ""
    return (f" The tree learnt the missing cells of {', '.join(imputed)} at the column mean (missing=\"impute\"), "
            "as the fit counted them: a condition says \"or … missing\" where it takes them.")


def _rule_words(rule: ClusterRule | None, cluster: int, size: int, n_rows: int) -> str:
    if rule is None:
        return f"Cluster {cluster} selects no feature, so no rule is drawn on its selected features."
    if not rule.paths:
        return (f"No depth-{RULE_DEPTH} decision tree on the selected features picks cluster {cluster} out of the "
                f"rest: a simple rule does not describe it (the tree agrees with CRAFT on {rule.accuracy:.0%} of the "
                "rows by naming no row).")
    learnt = f" (learnt on a uniform sample of {rule.n_learnt:,} rows)" if rule.n_learnt < n_rows else ""
    return (f"A depth-{RULE_DEPTH} decision tree on the selected features{learnt} describes cluster {cluster} as "
            f"“{rule.text}”. Of the {rule.n_predicted:,} rows it picks, {rule.precision:.0%} are in the cluster "
            f"(precision); it finds {rule.recall:.0%} of the cluster's {size:,} rows (recall), and agrees with "
            f"CRAFT on {rule.accuracy:.0%} of all {n_rows:,} rows (accuracy).")
