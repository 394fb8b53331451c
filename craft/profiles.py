"""Per-cluster profiles: why each feature was (or was not) selected.

CRAFT selects a numeric feature for a cluster when its within-cluster
variance is small (the fixed budget keeps the ``round(m |Num|)`` smallest,
the approximate budget those below ``eps_v``), and a categorical feature when
the cluster's own level distribution encodes its values much more cheaply
than the global one: the gain ``G_d - G_kd`` (the budget keeps the largest
gains, the approximate budget those above ``eps_c G_d``).

:func:`cluster_profiles` computes these quantities for every cluster and
feature of a fitted model, in the table's units, with a sentence per row.
Pure pandas/NumPy: no plotting, no user interface.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import _engine

__all__ = ["cluster_profiles", "level_distribution", "numeric_values", "cluster_summary"]

PROFILE_COLUMNS = [
    "cluster", "feature", "kind", "selected", "size", "rank",
    "mean", "overall_mean", "sd", "overall_sd", "sd_ratio", "variance_used",
    "top_level", "top_share", "overall_share", "entropy", "overall_entropy",
    "g_d", "g_kd", "gain", "gain_share", "reason",
]


def _nth(n: int, word: str) -> str:
    """``"the smallest"``, ``"the 2nd smallest"``, ..."""
    if n == 1:
        return f"the {word}"
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"the {n}{suffix} {word}"


def _ranks(values: np.ndarray, *, descending: bool) -> np.ndarray:
    """1-based rank of every entry within its row, ties to the lower index."""
    keyed = _engine.significant(-values if descending else values)
    order = np.argsort(keyed, axis=1, kind="stable")
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(1, values.shape[1] + 1)[None, :].repeat(values.shape[0], 0), axis=1)
    return ranks


def _entropy(p: np.ndarray, axis=-1) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return -np.where(p > 0, p * np.log(p), 0.0).sum(axis=axis)


def cluster_profiles(model, X: pd.DataFrame) -> pd.DataFrame:
    """Why each feature was selected in each cluster, in numbers and words.

    Parameters
    ----------
    model : craft.CRAFT
        A fitted model.
    X : DataFrame
        The table it was fitted on (at least its used columns).

    Returns
    -------
    DataFrame
        One row per (cluster, used feature), features in the engine's order
        (numeric, then categorical). Columns:

        * ``cluster``, ``feature``, ``kind`` ("numeric"/"categorical"),
          ``selected`` (bool), ``size`` (rows in the cluster), ``rank``
          (1 = most selectable: lowest variance or highest gain among
          features of that kind);
        * numeric: ``mean``, ``overall_mean``, ``sd``, ``overall_sd`` (table
          units), ``sd_ratio`` (sigma_kd / sigma_d), ``variance_used`` (the
          within-cluster variance the engine ranks, encoded units);
        * categorical: ``top_level``, ``top_share`` (in the cluster),
          ``overall_share`` (of that level), ``entropy``,
          ``overall_entropy`` (nats), ``g_d`` and ``g_kd`` (cost in nats per
          row of coding the feature with the global and with the cluster's
          distribution), ``gain`` (``g_d - g_kd``), ``gain_share``
          (``gain / g_d``, the approximate budget's criterion);
        * ``reason``: a sentence that says why.

    Examples
    --------
    >>> from craft import CRAFT
    >>> X = pd.DataFrame({"a": [0.0, 0.1, 5.0, 5.1], "b": [3.0, -3.0, 2.0, -2.0]})
    >>> model = CRAFT(m=0.5, k=2, random_state=0).fit(X)
    >>> cluster_profiles(model, X).query("selected").feature.unique().tolist()
    ['a']
    """
    data = model.encoder_.transform(X[[str(c) for c in model.engine_features_]])
    labels = np.asarray(model.labels_, dtype=np.int64)
    n_clusters = int(model.n_clusters_)
    # The engine's own statistics: over each feature's observed cells when missing ones are marginalised.
    stats = _engine.statistics(data, labels, n_clusters)
    counts = stats.counts
    clusters = model.clusters_
    opts = model.options_
    p, q = data.n_numeric, data.n_categorical
    numeric_names = list(model.schema_.numeric)
    categorical_names = list(model.schema_.categorical)
    keep_num, keep_cat = _engine.budget_counts(opts.terms.m, p, q)
    approximate = opts.budget == "approximate"
    weights = clusters.weights > 0.5
    rows: list[dict] = []

    if p:
        mean_enc, var_enc = _engine.raw_variances(stats, data)
        scale, center = model.encoder_.scale_, model.encoder_.center_
        mean = mean_enc * scale + center
        sd = np.sqrt(var_enc) * scale
        overall_mean = data.global_mean * scale + center
        overall_sd = np.sqrt(data.global_var) * scale
        global_var = np.where(data.global_var > 0, data.global_var, 1.0)
        ratio = np.sqrt(var_enc / global_var)
        # The engine ranks (and thresholds) the within-cluster variances before
        # the variance floor, in encoded units.
        used_var = var_enc
        ranks = _ranks(used_var, descending=False)
        units = "a share of the overall variance" if model.standardize else "the table's units squared"
        for k in range(n_clusters):
            for j, name in enumerate(numeric_names):
                chosen = bool(weights[k, j])
                spread = f"σ = {sd[k, j]:.3g} in the cluster vs {overall_sd[j]:.3g} overall ({ratio[k, j]:.0%})"
                where = f"mean {mean[k, j]:.3g} vs {overall_mean[j]:.3g} overall"
                if approximate:
                    rule = (f"its variance {used_var[k, j]:.3g} ({units}) is "
                            f"{'below' if chosen else 'not below'} ε_v = {opts.eps_v:g}")
                else:
                    rule = (f"{_nth(int(ranks[k, j]), 'smallest')} variance of {p} numeric features, "
                            f"{'within' if chosen else 'outside'} the budget of {keep_num}")
                verdict = "Selected" if chosen else "Not selected"
                rows.append(dict(
                    cluster=k, feature=name, kind="numeric", selected=chosen, size=int(counts[k]),
                    rank=int(ranks[k, j]), mean=mean[k, j], overall_mean=overall_mean[j], sd=sd[k, j],
                    overall_sd=overall_sd[j], sd_ratio=ratio[k, j], variance_used=used_var[k, j],
                    reason=f"{verdict}: {spread}, {rule}; {where}.",
                ))

    if q:
        observed = np.repeat(_engine.level_totals(data, stats.level_counts), data.n_levels, axis=1)
        shares = stats.level_counts / np.maximum(observed, 1.0)
        eta0 = data.eta0
        names = model.encoder_.level_names()
        cost0 = -data.log_eta0
        cost_k = -clusters.log_eta
        g_d = _engine.feature_sums(data, shares * cost0[None, :])
        g_kd = _engine.feature_sums(data, shares * cost_k)
        gain = g_d - g_kd
        gain_share = np.divide(gain, g_d, out=np.zeros_like(gain), where=g_d > 0)
        ranks = _ranks(gain, descending=True)
        for k in range(n_clusters):
            for j, name in enumerate(categorical_names):
                start, width = int(data.offsets[j]), int(data.n_levels[j])
                local = shares[k, start : start + width]
                overall = eta0[start : start + width]
                top = int(np.argmax(local))
                chosen = bool(weights[k, p + j])
                entropy = float(_entropy(local)) + 0.0  # no "-0.00"
                overall_entropy = float(_entropy(overall)) + 0.0
                describe = (f"{names[j][top]!r} is {local[top]:.0%} of the cluster vs {overall[top]:.0%} overall; "
                            f"entropy {entropy:.2f} vs {overall_entropy:.2f} nats")
                if approximate:
                    rule = (f"the gain G_d − G_kd = {gain[k, j]:.3g} nats per row is {gain_share[k, j]:.0%} of G_d, "
                            f"{'above' if chosen else 'not above'} ε_c = {opts.eps_c:g}")
                else:
                    rule = (f"the gain G_d − G_kd = {gain[k, j]:.3g} nats per row is "
                            f"{_nth(int(ranks[k, j]), 'largest')} of {q} categorical features, "
                            f"{'within' if chosen else 'outside'} the budget of {keep_cat}")
                verdict = "Selected" if chosen else "Not selected"
                rows.append(dict(
                    cluster=k, feature=name, kind="categorical", selected=chosen, size=int(counts[k]),
                    rank=int(ranks[k, j]), top_level=names[j][top], top_share=float(local[top]),
                    overall_share=float(overall[top]), entropy=entropy, overall_entropy=overall_entropy,
                    g_d=float(g_d[k, j]), g_kd=float(g_kd[k, j]), gain=float(gain[k, j]),
                    gain_share=float(gain_share[k, j]), reason=f"{verdict}: {describe}; {rule}.",
                ))
    frame = pd.DataFrame(rows, columns=PROFILE_COLUMNS)
    return frame.astype({"cluster": np.int64, "size": np.int64, "rank": np.int64, "selected": bool})


def level_distribution(model, X: pd.DataFrame, cluster: int, feature: str) -> pd.DataFrame:
    """Level shares of one categorical feature in a cluster and overall.

    Returns
    -------
    DataFrame
        Columns ``level``, ``cluster_share``, ``overall_share``,
        ``cluster_count``; levels in the encoder's order (missing last,
        when missing cells are a level). Shares are of the observed cells
        when missing cells are marginalised.
    """
    names = list(model.schema_.categorical)
    if feature not in names:
        raise KeyError(f"{feature!r} is not a categorical feature of the model")
    j = names.index(feature)
    data = model.encoder_.transform(X[[str(c) for c in model.engine_features_]])
    codes = data.codes[:, j]
    n_levels = int(data.n_levels[j])
    inside = np.asarray(model.labels_) == cluster
    seen = codes >= 0
    cluster_counts = np.bincount(codes[inside & seen], minlength=n_levels)
    overall_counts = np.bincount(codes[seen], minlength=n_levels)
    return pd.DataFrame(
        dict(
            level=model.encoder_.level_names()[j],
            cluster_share=cluster_counts / max(1, int(cluster_counts.sum())),
            overall_share=overall_counts / max(1, int(overall_counts.sum())),
            cluster_count=cluster_counts.astype(np.int64),
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
