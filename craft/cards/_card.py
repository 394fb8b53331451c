"""The card: :func:`cluster_card` puts evidence, rows and rule together and says what each part means."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .. import _engine
from ._evidence import _adjusted, _has_noise, level_evidence, LEVEL_P_WORDS, MULTIPLICITY, numeric_evidence
from ._rows import _check, _row_count, border_rows, paragons
from ._rule import cluster_rule, ClusterRule, RULE_DEPTH


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
