"""A card's evidence: each feature of the cluster against all the rows, as v-tests (``catdes``), adjusted together.

The tests and their conventions are in :mod:`craft.cards`' docstring and ``docs/numerics.md``.
"""

from __future__ import annotations


import numpy as np
import pandas as pd
from scipy import special, stats

from .. import _engine
from ..profiles import level_shares, numeric_moments


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
