"""A card's rule: a shallow decision tree, one cluster against the rest, written as text with its agreement."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.tree import DecisionTreeClassifier

from ..encoding import EncodedData
from ._evidence import level_evidence


#: Depth of the rule's tree: at most three conditions per path, readable in one breath.
RULE_DEPTH = 3
#: Rows the rule's tree learns from at most (a uniform sample of a larger table), and predicts at a time.
RULE_ROWS = 50_000
#: Levels of a categorical feature the tree is given at most (one-hot): those with the largest |v|.
RULE_LEVELS = 30


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
