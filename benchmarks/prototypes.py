"""Study-only prototypes of two possible engine options (not part of the library).

Both follow the paper's numeric density, ``f(x | v) ∝ exp(-[v (x - zeta_k)^2 /
(2 sigma_k^2) + (1 - v) (x - zeta_0)^2 / (2 sigma_0^2)])``, which its
asymptotics (``sigma_0 -> infinity``, normalisers absorbed into theta) reduce
to the engine's "selected numeric features only" distance:

* ``selection="gain"``: choose a cluster's m|Num| numeric features by the
  likelihood gain of its own Gaussian over the global one — the numeric
  counterpart of the categorical rule ``G_d - G_kd`` — instead of the lowest
  within-cluster variance;
* ``distance="gaussian"``: keep the finite-variance model in the pass: an
  unselected numeric feature costs ``(x - zeta_0)^2 / (2 sigma_0^2) + log
  sigma_0`` (as an unselected categorical feature costs ``-log eta_0``) and a
  selected one adds ``log sigma_k``.

:func:`patched` swaps the engine functions inside a ``with`` block and
restores them afterwards; it raises ``RuntimeError`` if the engine no longer
has the functions it replaces (the study then reports the prototype as
unavailable).
"""

from __future__ import annotations

import contextlib

import numpy as np

from craft import _backend, _distance, _engine, _kernels, _pass, _seeding, _statistics

_NAMES = ("nearest_cluster", "select_features", "objective")
#: The engine's modules: each binds the functions it calls under their own names, so a prototype replaces
#: every binding (``_engine`` re-exports them for the other callers, ``_engine.nearest_cluster``).
_MODULES = (_engine, _distance, _statistics, _pass, _backend, _seeding)


def _global_mean(data) -> np.ndarray:
    # The engine standardizes by default; the encoded global mean is then 0.
    return np.zeros(data.n_numeric)


def _gaussian_nearest(original):
    def nearest(data, clusters, terms, *, rows=None, start_row=None):
        if start_row is None:
            start_row = np.full(clusters.n_clusters, -1, dtype=np.int64)
        p = data.n_numeric
        v = clusters.weights[:, :p]
        g = np.where(data.global_var > 0, data.global_var, 1.0)
        means = v * clusters.means + (1 - v) * _global_mean(data)[None, :]
        half = v / (2 * clusters.variances) + (1 - v) / (2 * g)[None, :]
        control = clusters.weights.sum(axis=1) * terms.f_delta
        control = control + (v * 0.5 * np.log(clusters.variances) + (1 - v) * 0.5 * np.log(g)[None, :]).sum(axis=1)
        columns, observed, codes = data.columns
        return _kernels.nearest(
            columns, observed, codes, data.offsets, rows, means, half, _engine.categorical_table(data, clusters),
            control, start_row,
        )

    return nearest


def _gaussian_objective(original):
    def objective(data, clusters, stats, opts, n_noise=0):
        total, nll = original(data, clusters, stats, opts, n_noise)
        p = data.n_numeric
        if p:
            v = clusters.weights[:, :p]
            g = np.where(data.global_var > 0, data.global_var, 1.0)
            mu0 = _global_mean(data)[None, :]
            spread = stats.sums_sq - 2 * mu0 * stats.sums + stats.counts[:, None] * mu0**2
            total += float(((1 - v) * spread / (2 * g)).sum())
            total += float((stats.counts[:, None] * (v * 0.5 * np.log(clusters.variances) + (1 - v) * 0.5 * np.log(g))).sum())
            nll = 0.0
        return total, nll

    return objective


def _gain_selection(original):
    def select(data, stats, variances, log_eta_k, opts, pins=None):
        weights = original(data, stats, variances, log_eta_k, opts, pins)
        p = data.n_numeric
        if not p or opts.budget != "fixed":
            return weights
        keep, _ = _engine.budget_counts(opts.terms.m, p, data.n_categorical)
        means = stats.sums / stats.counts[:, None]
        g = np.where(data.global_var > 0, data.global_var, 1.0)
        floored = np.maximum(variances, opts.min_variance * g[None, :])
        mu0 = _global_mean(data)[None, :]
        # Per point: expected cost under the global Gaussian minus under the cluster's.
        gain = (variances + (means - mu0) ** 2) / (2 * g) + 0.5 * np.log(g) - (variances / (2 * floored) + 0.5 * np.log(floored))
        numeric = np.zeros((stats.counts.shape[0], p))
        if keep:
            order = np.argsort(-_engine.significant(gain), axis=1, kind="stable")[:, :keep]
            np.put_along_axis(numeric, order, 1.0, axis=1)
        weights[:, :p] = numeric
        return weights

    return select


@contextlib.contextmanager
def patched(*, selection: str = "variance", distance: str = "paper"):
    """Run the engine with a prototype numeric selection and/or distance inside the block."""
    missing = [name for name in _NAMES if not hasattr(_engine, name)]
    if missing:
        raise RuntimeError(f"the engine no longer has {missing}; the prototypes need updating")
    saved = {name: getattr(_engine, name) for name in _NAMES}
    replaced = {}
    if selection == "gain":
        replaced["select_features"] = _gain_selection(saved["select_features"])
    if distance == "gaussian":
        replaced["nearest_cluster"] = _gaussian_nearest(saved["nearest_cluster"])
        replaced["objective"] = _gaussian_objective(saved["objective"])
    bound = [(module, name) for module in _MODULES for name in replaced if hasattr(module, name)]
    try:
        for module, name in bound:
            setattr(module, name, replaced[name])
        yield
    finally:
        for module, name in bound:
            setattr(module, name, saved[name])
