"""The degenerate cases of the paper's supplement, run by the CRAFT engine.

Without feature selection (every cluster keeps every feature, F0 = F_Delta =
0) the CRAFT objective reduces to two known ones:

* binary data: Algorithm 2 of the supplement, whose distance
  ``sum_d H(mu_kd) + (mu_kd - x_nd) log(mu_kd / (1 - mu_kd))`` is the negative
  Bernoulli log-likelihood ``-sum_d [x log mu + (1 - x) log(1 - mu)]`` that the
  engine's categorical cost computes with every feature selected;
* numeric data with sigma_kd = 1/sqrt(2): DP-means (Kulis and Jordan), whose
  distance is the squared Euclidean one.

Both functions here configure the one engine for those cases; they are not
second implementations.
"""

from __future__ import annotations

import inspect

import numpy as np
import pandas as pd

from . import _engine
from .encoding import Encoder
from .estimator import CRAFT
from .exceptions import CraftInputError
from .priors import PriorTerms

#: Prior terms that switch feature selection off: nothing is paid per feature or per cluster beyond lambda.
NO_SELECTION = PriorTerms(m=1.0, rho=0.0, a0=1.0, b0=0.0, a1=2.0, b1=-1.0, f0=0.0, f_delta=0.0)


def binary_entropy(mu: np.ndarray) -> np.ndarray:
    """H(p) = -p log p - (1 - p) log(1 - p), with H(0) = H(1) = 0."""
    mu = np.asarray(mu, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = -np.where(mu > 0, mu * np.log(mu), 0.0) - np.where(mu < 1, (1 - mu) * np.log1p(-mu), 0.0)
    return terms


def binary_discrepancy(x: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """Algorithm 2's distance of rows ``x`` (N, D) to cluster means ``mu`` (K, D), as the paper writes it."""
    x = np.asarray(x, dtype=np.float64)
    mu = np.asarray(mu, dtype=np.float64)
    logit = np.log(mu / (1.0 - mu))
    # sum_d H(mu_kd) + (mu_kd - x_nd) logit_kd, expanded over n and k.
    return (binary_entropy(mu) + mu * logit).sum(axis=1)[None, :] - x @ logit.T


def _without_selection(lam: float, **changes) -> _engine.Options:
    """Engine options of a run that keeps every feature (budget "all") from a random first cluster.

    The options the supplement's special cases do not set (the selection
    cuts, which "all" never reads; the variance floor; the smoothing) are the
    estimator's defaults, read from its signature.
    """
    defaults = {name: p.default for name, p in inspect.signature(CRAFT.__init__).parameters.items()}
    unset = {name: defaults[name] for name in ("eps_c", "eps_v", "smoothing", "min_variance", "rho_selection", "noise")}
    return _engine.Options(terms=NO_SELECTION, lam=float(lam), budget="all", init="random", **{**unset, **changes})


def entropy_clustering(
    X, lam: float, *, smoothing: float = 1e-6, max_iter: int = 100, random_state=None
) -> tuple[np.ndarray, float]:
    """Algorithm 2 of the supplement: binary data, no feature selection.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features) of 0/1 values
    lam : float
        Cost of a cluster (lambda > 0).
    smoothing : float, default=1e-6
        A new cluster's mean is ``x_n`` in the paper, which puts log 0 in the
        distance of every other point; the engine's pseudo-count towards the
        global mean keeps it finite (tiny by default, so that only points
        equal to ``x_n`` can join a singleton, as in the paper).

    Returns
    -------
    labels : ndarray of shape (n_samples,)
    objective : float
        ``sum_k sum_{n in k} sum_d H(mu*_kd) + lam K`` (the supplement's
        Eq. BinaryClusterObjective2, with the unsmoothed cluster means).
    """
    values = np.asarray(X)
    if values.ndim != 2 or not np.isin(values, [0, 1]).all():
        raise CraftInputError("Algorithm 2 needs a 2-D array of 0/1 values.")
    table = pd.DataFrame(values.astype(np.int64), columns=[f"x{j}" for j in range(values.shape[1])])
    data = Encoder([], list(table.columns)).fit_transform(table)
    opts = _without_selection(lam, smoothing=smoothing, max_iter=max_iter)
    result = _engine.run(data, opts, np.random.default_rng(random_state))
    counts = np.bincount(result.labels)
    mu = np.vstack([values[result.labels == k].mean(axis=0) for k in range(counts.size)])
    objective = float((counts[:, None] * binary_entropy(mu)).sum() + lam * counts.size)
    return result.labels, objective


def dp_means(X, lam: float, *, max_iter: int = 100, random_state=None) -> tuple[np.ndarray, float]:
    """DP-means(R) as CRAFT without selection and with sigma_kd = 1/sqrt(2).

    The first cluster is a random point (the paper's "DP-means(R)"). Numeric
    values are used as given (no standardization).

    Returns
    -------
    labels : ndarray of shape (n_samples,)
    objective : float
        Within-cluster sum of squares plus ``lam K`` (DP-means' objective).
    """
    values = np.asarray(X, dtype=np.float64)
    if values.ndim != 2:
        raise CraftInputError("DP-means needs a 2-D numeric array.")
    table = pd.DataFrame(values, columns=[f"x{j}" for j in range(values.shape[1])])
    data = Encoder(list(table.columns), [], standardize=False).fit_transform(table)
    opts = _without_selection(lam, fixed_variance=0.5, max_iter=max_iter)
    result = _engine.run(data, opts, np.random.default_rng(random_state))
    return result.labels, float(result.objective)
