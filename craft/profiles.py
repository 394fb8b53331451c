"""Per-cluster profiles: why each feature was (or was not) selected.

CRAFT selects a numeric feature for a cluster when its within-cluster
variance is small (the fixed budget keeps the ``round(m |Num|)`` smallest,
the approximate budget those below ``eps_v``), and a categorical feature when
the cluster's own level distribution encodes its values much more cheaply
than the global one: the gain ``G_d - G_kd`` (the budget keeps the largest
gains, the approximate budget those whose gain exceeds ``eps_c G_d``).

:func:`cluster_profiles` reads those decisions from the fitted model's
inspection surface (``selection_``, ``statistics_``): the score the rule
ranked, its rank, the quantity compared with the cut and the cut, and adds
descriptions in the table's units (means, spreads, most frequent levels)
from the same statistics, with a sentence per row. Nothing of the selection
rule is computed here. Pure pandas/NumPy: no plotting, no user interface.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import _engine

__all__ = ["cluster_profiles", "numeric_moments", "level_shares", "level_distribution", "numeric_values",
           "cluster_summary"]

PROFILE_COLUMNS = [
    "cluster", "feature", "kind", "selected", "size", "rank", "score", "criterion", "cut",
    "mean", "overall_mean", "sd", "overall_sd",
    "top_level", "top_share", "overall_share", "entropy", "overall_entropy", "reason",
]


def _nth(n: int, word: str) -> str:
    """``"the smallest"``, ``"the 2nd smallest"``, ..."""
    if n == 1:
        return f"the {word}"
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"the {n}{suffix} {word}"


def _entropy(p: np.ndarray) -> float:
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(-np.where(p > 0, p * np.log(p), 0.0).sum()) + 0.0  # no "-0.00"


def numeric_moments(model) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Mean and standard deviation of every numeric feature, per cluster and overall, as the fit used them.

    Read from ``model.statistics_`` and the encoder's global tables and
    expressed in the table's units: the cells the engine counted, so with
    ``missing="impute"`` a missing cell counts at its column's mean, and with
    ``missing="marginalise"`` only observed cells count (a cluster with no
    observed cell of a feature takes the column's mean and spread, as the
    engine does).

    Parameters
    ----------
    model : craft.CRAFT
        A fitted model (any backend).

    Returns
    -------
    mean, sd : ndarray of shape (n_clusters, n_numeric)
    overall_mean, overall_sd : ndarray of shape (n_numeric,)
        Numeric features in ``model.schema_.numeric`` order.
    """
    encoder = model.encoder_
    template = encoder.template()
    means, variances = _engine.raw_variances(model.statistics_, template)
    mean = encoder.to_original_units(means)
    sd = np.sqrt(variances) * encoder.scale_
    overall_mean = encoder.to_original_units(template.global_mean)
    overall_sd = np.sqrt(template.global_var) * encoder.scale_
    return mean, sd, overall_mean, overall_sd


def level_shares(model) -> tuple[np.ndarray, np.ndarray]:
    """Share of every categorical level per cluster and overall, as the fit counted them.

    Shares of the observed cells (all cells unless missing ones are
    marginalised; with ``missing="impute"`` a missing cell is a level of its
    own), from ``model.statistics_`` and the encoder's ``eta0``.

    Returns
    -------
    shares : ndarray of shape (n_clusters, n_levels_total)
    overall : ndarray of shape (n_levels_total,)
        Levels on the encoder's flat level axis (feature ``q`` at
        ``offsets[q]:offsets[q] + n_levels[q]`` of ``model.encoder_.template()``).
    """
    template = model.encoder_.template()
    counts = model.statistics_.level_counts
    observed = np.repeat(_engine.level_totals(template, counts), template.n_levels, axis=1)
    return counts / np.maximum(observed, 1.0), template.eta0


def cluster_profiles(model) -> pd.DataFrame:
    """Why each feature was selected in each cluster, in numbers and words.

    Parameters
    ----------
    model : craft.CRAFT
        A fitted model (any backend).

    Returns
    -------
    DataFrame
        One row per (cluster, used feature), features in the engine's order
        (numeric, then categorical). Columns:

        * ``cluster``, ``feature``, ``kind`` ("numeric"/"categorical"),
          ``selected`` (bool), ``size`` (rows in the cluster);
        * from ``model.selection_``: ``score`` (what the rule ranks: the
          within-cluster variance in encoded units, or the gain
          ``G_d - G_kd`` in nats summed over the cluster's rows), ``rank``
          (1 = chosen first among features of that kind), ``criterion``
          (the number compared with the cut: the score under the fixed
          budget; the variance or the gain's share of ``G_d`` under the
          approximate budget) and ``cut``;
        * numeric: ``mean``, ``overall_mean``, ``sd``, ``overall_sd``
          (table units, the cells the fit counted: :func:`numeric_moments`);
        * categorical: ``top_level`` (the cluster's most frequent level),
          ``top_share`` (in the cluster), ``overall_share`` (of that level),
          ``entropy``, ``overall_entropy`` (nats; :func:`level_shares`);
        * ``reason``: a sentence that says why.

    Examples
    --------
    >>> from craft import CRAFT
    >>> X = pd.DataFrame({"a": [0.0, 0.1, 5.0, 5.1], "b": [3.0, -3.0, 2.0, -2.0]})
    >>> model = CRAFT(m=0.5, k=2, random_state=0).fit(X)
    >>> cluster_profiles(model).query("selected").feature.unique().tolist()
    ['a']
    """
    frame = model.selection_frame()
    frame["size"] = model.statistics_.counts[frame["cluster"].to_numpy()].astype(np.int64)
    p = len(model.schema_.numeric)
    approximate = model.options_.budget == "approximate"
    n_keep = model.selection_.n_keep
    shrink = getattr(model.options_, "rho_selection", "paper") == "shrink"
    scored = " (shrunk towards the pooled score)" if shrink else ""
    numeric = frame["kind"].to_numpy() == "numeric"
    cluster = frame["cluster"].to_numpy()
    column = np.where(numeric, np.arange(len(frame)) % len(model.engine_features_), 0)
    for name in PROFILE_COLUMNS:
        if name not in frame:
            frame[name] = np.nan if name not in ("top_level", "reason") else None
    if p:
        mean, sd, overall_mean, overall_sd = numeric_moments(model)
        rows = np.flatnonzero(numeric)
        k, j = cluster[rows], column[rows]
        frame.loc[rows, "mean"] = mean[k, j]
        frame.loc[rows, "sd"] = sd[k, j]
        frame.loc[rows, "overall_mean"] = overall_mean[j]
        frame.loc[rows, "overall_sd"] = overall_sd[j]
    if len(model.schema_.categorical):
        names = model.encoder_.level_names()
        offsets = model.encoder_.template().offsets
        shares, overall = level_shares(model)
        # Per feature, all clusters at once (a wide table has thousands of features).
        n_clusters, n_categorical = shares.shape[0], len(names)
        top_level = np.empty((n_clusters, n_categorical), dtype=object)
        top_share, overall_share, entropy, overall_entropy = (np.zeros((n_clusters, n_categorical)) for _ in range(4))
        for q, levels in enumerate(names):
            start, width = int(offsets[q]), len(levels)
            local = shares[:, start : start + width]
            everywhere = overall[start : start + width]
            top = np.argmax(local, axis=1)
            top_level[:, q] = np.asarray(levels, dtype=object)[top]
            top_share[:, q] = local[np.arange(n_clusters), top]
            overall_share[:, q] = everywhere[top]
            entropy[:, q] = [_entropy(row) for row in local]
            overall_entropy[:, q] = _entropy(everywhere)
        rows = np.flatnonzero(~numeric)
        k, feature = cluster[rows], (rows % len(model.engine_features_)) - p
        frame.loc[rows, "top_level"] = top_level[k, feature]
        for name, values in (("top_share", top_share), ("overall_share", overall_share), ("entropy", entropy),
                             ("overall_entropy", overall_entropy)):
            frame.loc[rows, name] = values[k, feature]
    units = "a share of the overall variance" if model.standardize else "the table's units squared"
    reasons = []
    for row in frame.itertuples(index=False):
        verdict = "Selected" if row.selected else "Not selected"
        if row.kind == "numeric":
            describe = (f"σ = {row.sd:.3g} in the cluster vs {row.overall_sd:.3g} overall; "
                        f"mean {row.mean:.3g} vs {row.overall_mean:.3g} overall")
            if approximate:
                rule = (f"its variance{scored} {row.score:.3g} ({units}) is "
                        f"{'below' if row.selected else 'not below'} ε_v = {row.cut:g}")
            else:
                rule = (f"its variance{scored} {row.score:.3g} ({units}) is {_nth(int(row.rank), 'smallest')} of "
                        f"{p} numeric features, {'within' if row.selected else 'outside'} the budget of {n_keep[0]}")
        else:
            describe = (f"{row.top_level!r} is {row.top_share:.0%} of the cluster vs {row.overall_share:.0%} "
                        f"overall; entropy {row.entropy:.2f} vs {row.overall_entropy:.2f} nats")
            gain = f"the gain G_d − G_kd{scored} = {row.score:.3g} nats over its {row.size:,} rows"
            if approximate:
                rule = (f"{gain} is {row.criterion:.0%} of G_d, "
                        f"{'above' if row.selected else 'not above'} ε_c = {row.cut:g}")
            else:
                n_categorical = len(model.engine_features_) - p
                rule = (f"{gain} is {_nth(int(row.rank), 'largest')} of {n_categorical} categorical features, "
                        f"{'within' if row.selected else 'outside'} the budget of {n_keep[1]}")
        reasons.append(f"{verdict}: {rule}; {describe}.")
    frame["reason"] = reasons
    frame = frame[PROFILE_COLUMNS]
    return frame.astype({"cluster": np.int64, "size": np.int64, "rank": np.int64, "selected": bool})


def level_distribution(model, cluster: int, feature: str) -> pd.DataFrame:
    """Level shares of one categorical feature in a cluster and overall, as the fit counted them.

    Returns
    -------
    DataFrame
        Columns ``level``, ``cluster_share``, ``overall_share``,
        ``cluster_count``; levels in the encoder's order (missing last,
        when missing cells are a level). Shares are of the observed cells
        when missing cells are marginalised. Read from ``model.statistics_``
        (see :func:`level_shares`).
    """
    names = list(model.schema_.categorical)
    if feature not in names:
        raise KeyError(f"{feature!r} is not a categorical feature of the model")
    q = names.index(feature)
    start = int(model.encoder_.template().offsets[q])
    levels = model.encoder_.level_names()[q]
    window = slice(start, start + len(levels))
    shares, overall = level_shares(model)
    return pd.DataFrame(
        dict(
            level=levels,
            cluster_share=shares[cluster, window],
            overall_share=overall[window],
            cluster_count=model.statistics_.level_counts[cluster, window].astype(np.int64),
        )
    )


def numeric_values(model, X: pd.DataFrame, cluster: int, feature: str) -> tuple[np.ndarray, np.ndarray]:
    """Values of one numeric feature (table units, missing ones dropped): in the cluster, and all."""
    values = pd.to_numeric(X[feature], errors="coerce").to_numpy(dtype=np.float64)
    inside = np.asarray(model.labels_) == cluster
    finite = np.isfinite(values)
    return values[inside & finite], values[finite]


def cluster_summary(profiles: pd.DataFrame, cluster: int, *, limit: int = 8) -> str:
    """One paragraph on a cluster: its size and its most telling selected features.

    Examples
    --------
    >>> frame = pd.DataFrame(dict(cluster=[0, 0], feature=["a", "b"], kind="numeric", selected=[True, False],
    ...                           size=4, rank=[1, 2], reason=["Selected: tight.", "Not selected: wide."]))
    >>> cluster_summary(frame, 0)
    'Cluster 0 has 4 rows and selects 1 of 2 features: a.'
    """
    rows = profiles[profiles["cluster"] == cluster]
    if rows.empty:
        return f"Cluster {cluster} does not exist."
    chosen = rows[rows["selected"]].sort_values(["kind", "rank"])
    names = ", ".join(str(f) for f in chosen["feature"].head(limit))
    more = f" and {len(chosen) - limit} more" if len(chosen) > limit else ""
    size = int(rows["size"].iloc[0])
    return f"Cluster {cluster} has {size} rows and selects {len(chosen)} of {len(rows)} features: {names or 'none'}{more}."
