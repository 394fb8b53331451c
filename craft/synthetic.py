"""Synthetic data sets with planted cluster-specific feature subspaces.

These rebuild the data of the paper's "Exact Subspace Recovery on Synthetic
Data" experiments (Figures 1-3) and add a general mixed-type generator for
robustness tests. Every generator returns ``(X, y, true_mask)``:

``X`` : pandas.DataFrame
    Columns ``f1 .. fD`` (1-based, as the paper's figures). Binary and
    categorical columns have dtype ``category`` with string levels (``"0"`` /
    ``"1"`` for binary), numeric columns are float64, so that a schema
    inference marks them correctly.
``y`` : numpy.ndarray of int64, shape (n_samples,)
    The planted cluster of each row, ``0 .. n_clusters - 1``.
``true_mask`` : numpy.ndarray of bool, shape (n_clusters, n_features)
    ``true_mask[k, d]`` is True when feature ``d`` is in cluster ``k``'s subspace.

Layouts are written below with 1-based inclusive feature ranges (``f1-f8``).
In the figure generators rows come in cluster blocks (cluster 0 first), as in
the paper's figures; cluster sizes scale with ``n_samples`` and keep their
proportions (largest-remainder rounding). All randomness comes from
``numpy.random.defaultas_generator(random_state)``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from ._random import as_generator
from .exceptions import CraftInputError

__all__ = [
    "fig1_binary",
    "fig1_binary_modified",
    "fig2_numeric",
    "fig2_numeric_modified",
    "fig3_categorical",
    "fig3_numeric",
    "mixed_planted",
    "SYNTHETIC_DATASETS",
    "FIGURES",
]

#: Bernoulli parameter of binary cells outside every subspace (paper, Fig. 1).
BACKGROUND_P = 0.1
#: Means of the three numeric clusters inside their subspaces (paper, Fig. 2).
NUMERIC_MEANS = (1.0, 5.0, 10.0)
#: Standard deviation of numeric cells outside the subspaces (paper: 3).
NOISE_SD = 3.0

Span = tuple[int, int]  # 1-based inclusive feature range

_FIG1_LAYOUT: tuple[tuple[Span, ...], ...] = (((1, 8),), ((9, 16),), ((17, 24),))
_FIG1_MODIFIED_LAYOUT: tuple[tuple[Span, ...], ...] = (
    ((1, 4), (17, 20)),
    ((6, 13),),
    ((11, 15), (21, 23)),
)
_FIG1_MODIFIED_WEIGHTS = (0.4, 0.35, 0.25)
_FIG1_MODIFIED_NOISY_FEATURE = 16
_FIG2_LAYOUT: tuple[tuple[Span, ...], ...] = (((1, 12),), ((13, 24),), ((23, 34),))
_FIG2_PAPER_LAYOUT: tuple[tuple[Span, ...], ...] = (((1, 12),), ((13, 24),), ((22, 34),))
_FIG2_MODIFIED_LAYOUT: tuple[tuple[Span, ...], ...] = (
    ((1, 12),),
    ((9, 14), (23, 28)),
    ((21, 32),),
)
_FIG3_LAYOUT: tuple[tuple[Span, ...], ...] = (
    ((1, 9),),
    ((12, 27),),
    ((7, 10), (24, 27)),
)
_FIG3_N_FEATURES = 30


# ----------------------------------------------------------------------------
# helpers
# ----------------------------------------------------------------------------


def _check_int(value, name: str, minimum: int) -> int:
    """An integer parameter that is at least ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise CraftInputError(f"{name}={value!r} must be an integer >= {minimum}.")
    return int(value)


def _round_half_up(value: float) -> int:
    """Round to the nearest integer, halves upwards (Python's round is to even)."""
    return int(math.floor(value + 0.5))


def _cluster_sizes(n_samples: int, weights: Sequence[float]) -> np.ndarray:
    """Split ``n_samples`` in proportion to ``weights`` (largest remainder).

    Every cluster gets at least one row; otherwise CraftInputError.
    """
    n_samples = _check_int(n_samples, "n_samples", 1)
    w = np.asarray(weights, dtype=float)
    if w.ndim != 1 or w.size == 0 or not np.all(np.isfinite(w)) or np.any(w <= 0):
        raise CraftInputError(
            f"weights={list(np.ravel(w))!r} must be a non-empty list of positive finite numbers."
        )
    raw = n_samples * w / w.sum()
    sizes = np.floor(raw).astype(np.int64)
    remainder = n_samples - int(sizes.sum())
    order = np.argsort(-(raw - sizes), kind="stable")
    sizes[order[:remainder]] += 1
    if np.any(sizes == 0):
        raise CraftInputError(
            f"n_samples={n_samples} is too small for {w.size} clusters with weights "
            f"{np.round(w / w.sum(), 4).tolist()}: cluster sizes would be {sizes.tolist()}."
        )
    return sizes


def _labels(sizes: np.ndarray) -> np.ndarray:
    """Cluster labels in blocks: ``sizes[0]`` zeros, then ones, ..."""
    return np.repeat(np.arange(sizes.size, dtype=np.int64), sizes)


def _mask_from_layout(layout: Sequence[Sequence[Span]], n_features: int) -> np.ndarray:
    """Boolean (n_clusters, n_features) mask from 1-based inclusive spans."""
    mask = np.zeros((len(layout), n_features), dtype=bool)
    for k, spans in enumerate(layout):
        for first, last in spans:
            mask[k, first - 1 : last] = True
    return mask


def _feature_names(n_features: int) -> list[str]:
    return [f"f{j}" for j in range(1, n_features + 1)]


def _binary_frame(values: np.ndarray) -> pd.DataFrame:
    """Boolean matrix -> DataFrame of categorical "0"/"1" columns."""
    names = _feature_names(values.shape[1])
    codes = values.astype(np.int8)
    columns = {
        name: pd.Categorical.from_codes(codes[:, j], categories=["0", "1"])
        for j, name in enumerate(names)
    }
    return pd.DataFrame(columns)


def _numeric_frame(values: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame(values.astype(np.float64), columns=_feature_names(values.shape[1]))


def _binary_planted(
    sizes: np.ndarray,
    true_mask: np.ndarray,
    rng: np.random.Generator,
    *,
    p_inside: float = 1.0,
    p_outside: float = BACKGROUND_P,
) -> tuple[np.ndarray, np.ndarray]:
    """Rows in cluster blocks; inside cells Bernoulli(p_inside), others Bernoulli(p_outside).

    One uniform draw per cell (an ``(n, D)`` matrix, row-major), so that the
    result depends only on the seed and the layout.
    """
    y = _labels(sizes)
    inside = true_mask[y]
    uniform = rng.random(inside.shape)
    values = np.where(inside, uniform < p_inside, uniform < p_outside)
    return values, y


def _numeric_planted(
    sizes: np.ndarray,
    true_mask: np.ndarray,
    means: Sequence[float] | np.ndarray,
    rng: np.random.Generator,
    *,
    inside_sd: float = 1.0,
    outside_sd: float = NOISE_SD,
) -> tuple[np.ndarray, np.ndarray]:
    """Rows in cluster blocks; inside cells N(mean_k, inside_sd^2), others N(0, outside_sd^2)."""
    y = _labels(sizes)
    inside = true_mask[y]
    normal = rng.standard_normal(inside.shape)
    row_means = np.asarray(means, dtype=float)[y][:, None]
    values = np.where(inside, row_means + inside_sd * normal, outside_sd * normal)
    return values, y


# ----------------------------------------------------------------------------
# Figure 1: binary data, fixed budget
# ----------------------------------------------------------------------------
def fig1_binary(n_samples: int = 300, random_state=None):
    """Binary data of the paper's Figure 1(a): three disjoint 8-feature subspaces.

    Construction: ``n_samples`` rows (300 in the paper) split evenly into 3
    clusters, 24 binary features. Cluster 1's subspace is ``f1-f8``, cluster
    2's ``f9-f16``, cluster 3's ``f17-f24``. Inside its own subspace every
    cell of a cluster is 1 (deterministic, so the subspace is exactly
    identifiable); every other cell is Bernoulli(0.1). With ``m = 1/3`` the
    fixed budget ``round(m * 24) = 8`` equals each subspace's size.

    Parameters
    ----------
    n_samples : int, default 300
        Number of rows (at least 3); cluster sizes stay equal up to rounding.
    random_state : None, int or numpy.random.Generator
        Seed for ``numpy.random.default_rng``.

    Returns
    -------
    X : pandas.DataFrame of shape (n_samples, 24)
        Categorical columns with levels ``"0"`` and ``"1"``.
    y : numpy.ndarray of int64, shape (n_samples,)
    true_mask : numpy.ndarray of bool, shape (3, 24)

    Examples
    --------
    >>> X, y, mask = fig1_binary(random_state=0)
    >>> X.shape, mask.sum(axis=1).tolist()
    ((300, 24), [8, 8, 8])
    """
    rng = as_generator(random_state)
    sizes = _cluster_sizes(n_samples, (1, 1, 1))
    true_mask = _mask_from_layout(_FIG1_LAYOUT, 24)
    values, y = _binary_planted(sizes, true_mask, rng)
    return _binary_frame(values), y, true_mask


def fig1_binary_modified(n_samples: int = 300, random_state=None):
    """Binary data of the paper's Figure 1(c): the modified fixed-budget set.

    The paper lists four modifications of Figure 1(a); here is how each is
    built (24 binary features, 1-based ranges):

    (a) unequal cluster sizes: 40 %, 35 % and 25 % of the rows (120 / 105 / 75
        of 300);
    (b) fragmented subspaces for clusters 1 and 3: cluster 1 is
        ``f1-f4`` + ``f17-f20``, cluster 3 is ``f11-f15`` + ``f21-f23``;
        cluster 2 is contiguous, ``f6-f13``;
    (c) one completely noisy feature, ``f16``: Bernoulli(0.5) in every row and
        in no subspace;
    (d) an overlap between clusters 2 and 3 on ``f11-f13``.

    Each subspace has exactly 8 features, ``round(m * 24)`` for ``m = 1/3``,
    so the fixed budget can recover it exactly. ``f5`` and ``f24`` are in no
    subspace either (plain Bernoulli(0.1) background). Inside its subspace a
    cluster's cells are 1; all other cells (except ``f16``) are Bernoulli(0.1).

    The sizes are chosen so that the entropy-gain criterion can see the
    overlap: a feature that is 1 in clusters 2 and 3 carries information for
    cluster 2 only while the two clusters together are not most of the data.
    With 20/50/30 % (80 % of rows sharing ``f11-f13``), cluster 2's expected
    gain on ``f12`` (0.198 nats per point) falls below its gain on cluster
    3's ``f14`` (0.19) within sampling noise, and the fixed budget then picks
    ``f14`` instead; with 40/35/25 % every subspace feature beats every other
    feature by at least 0.13 nats per point in expectation.

    Parameters
    ----------
    n_samples : int, default 300
        Number of rows (at least 3); the 40/35/25 proportions are kept.
    random_state : None, int or numpy.random.Generator
        Seed for ``numpy.random.default_rng``.

    Returns
    -------
    X : pandas.DataFrame of shape (n_samples, 24)
    y : numpy.ndarray of int64, shape (n_samples,)
    true_mask : numpy.ndarray of bool, shape (3, 24)

    Examples
    --------
    >>> X, y, mask = fig1_binary_modified(random_state=0)
    >>> np.bincount(y).tolist(), mask.sum(axis=1).tolist()
    ([120, 105, 75], [8, 8, 8])
    """
    rng = as_generator(random_state)
    sizes = _cluster_sizes(n_samples, _FIG1_MODIFIED_WEIGHTS)
    true_mask = _mask_from_layout(_FIG1_MODIFIED_LAYOUT, 24)
    values, y = _binary_planted(sizes, true_mask, rng)
    noisy = _FIG1_MODIFIED_NOISY_FEATURE - 1
    values[:, noisy] = rng.random(values.shape[0]) < 0.5
    return _binary_frame(values), y, true_mask


# ----------------------------------------------------------------------------
# Figure 2: numeric data, fixed budget
# ----------------------------------------------------------------------------
def fig2_numeric(n_samples: int = 300, random_state=None, paper_layout: bool = False):
    """Numeric data of the paper's Figure 2(a).

    Construction: ``n_samples`` rows (300) split evenly into 3 clusters, 36
    numeric features. Inside cluster ``k``'s subspace a cell is drawn from
    N(mean_k, 1) with means 1, 5 and 10; every other cell is N(0, 3^2)
    ("isotropic noise"). Subspaces: cluster 1 ``f1-f12``, cluster 2
    ``f13-f24``, cluster 3 ``f23-f34`` (overlapping cluster 2 on ``f23-f24``);
    ``f35-f36`` are in no subspace.

    Deviation from the paper (on purpose): the paper gives cluster 3 the
    features 22-34, i.e. 13 features, while the fixed budget
    ``m * |Num| = 36 / 3 = 12``, so exact recovery is impossible as written.
    By default cluster 3 is shifted to exactly 12 features (``f23-f34``).
    ``paper_layout=True`` gives the literal layout ``f22-f34`` (its
    ``true_mask`` then has 13 features for cluster 3, overlapping cluster 2 on
    ``f22-f24``).

    Parameters
    ----------
    n_samples : int, default 300
        Number of rows (at least 3).
    random_state : None, int or numpy.random.Generator
        Seed for ``numpy.random.default_rng``.
    paper_layout : bool, default False
        Use the paper's literal 13-feature cluster 3.

    Returns
    -------
    X : pandas.DataFrame of shape (n_samples, 36), float64 columns
    y : numpy.ndarray of int64, shape (n_samples,)
    true_mask : numpy.ndarray of bool, shape (3, 36)

    Examples
    --------
    >>> X, y, mask = fig2_numeric(random_state=0)
    >>> mask.sum(axis=1).tolist()
    [12, 12, 12]
    """
    rng = as_generator(random_state)
    sizes = _cluster_sizes(n_samples, (1, 1, 1))
    layout = _FIG2_PAPER_LAYOUT if paper_layout else _FIG2_LAYOUT
    true_mask = _mask_from_layout(layout, 36)
    values, y = _numeric_planted(sizes, true_mask, NUMERIC_MEANS, rng)
    return _numeric_frame(values), y, true_mask


def fig2_numeric_modified(n_samples: int = 300, random_state=None):
    """Numeric data of the paper's Figure 2(c): non-contiguous, nested subspaces.

    Construction as :func:`fig2_numeric` (3 equal clusters, 36 features,
    inside cells N(mean_k, 1) with means 1, 5, 10, other cells N(0, 3^2)),
    with the subspaces the paper describes:

    * cluster 1: ``f1-f12``;
    * cluster 2, non-contiguous: ``f9-f14`` (overlaps cluster 1 partially, on
      ``f9-f12``) and ``f23-f28`` (subsumed completely in cluster 3's
      subspace);
    * cluster 3: ``f21-f32``;
    * extraneous features in no subspace: ``f15-f20`` and ``f33-f36`` (10).

    Each subspace has exactly 12 features (``m = 1/3`` of 36), so the fixed
    budget can recover it exactly.

    Parameters
    ----------
    n_samples : int, default 300
        Number of rows (at least 3).
    random_state : None, int or numpy.random.Generator
        Seed for ``numpy.random.default_rng``.

    Returns
    -------
    X : pandas.DataFrame of shape (n_samples, 36), float64 columns
    y : numpy.ndarray of int64, shape (n_samples,)
    true_mask : numpy.ndarray of bool, shape (3, 36)

    Examples
    --------
    >>> X, y, mask = fig2_numeric_modified(random_state=0)
    >>> (mask[1] & mask[2]).sum()
    np.int64(6)
    """
    rng = as_generator(random_state)
    sizes = _cluster_sizes(n_samples, (1, 1, 1))
    true_mask = _mask_from_layout(_FIG2_MODIFIED_LAYOUT, 36)
    values, y = _numeric_planted(sizes, true_mask, NUMERIC_MEANS, rng)
    return _numeric_frame(values), y, true_mask


# ----------------------------------------------------------------------------
# Figure 3: approximate budget
# ----------------------------------------------------------------------------
def fig3_categorical(n_samples: int = 300, random_state=None, noise_inside: float = 0.0):
    """Binary data of the paper's Figure 3(a): subspaces of unequal size.

    Construction: ``n_samples`` rows (300) split evenly into 3 clusters, 30
    binary features with the sizes the paper gives:

    * cluster 1: 9 features, ``f1-f9``;
    * cluster 2: 16 features, ``f12-f27``;
    * cluster 3: 8 features split evenly in two parts, ``f7-f10`` (overlaps
      cluster 1 on ``f7-f9``) and ``f24-f27`` (inside cluster 2's subspace);
    * ``f11`` and ``f28-f30`` are in no subspace.

    Inside its subspace a cluster's cells are 1 with probability
    ``1 - noise_inside`` (deterministic 1 by default); every other cell is
    Bernoulli(0.1). The paper's claim (exact recovery for every
    ``eps_c in [0.76, 1)`` and ``m`` in 0.2 .. 0.9) fits deterministic
    subspaces: then ``G_kd = 0`` for true features, so their ratio
    ``(G_d - G_kd) / G_d`` is 1, while a cluster's background features have a
    ratio of about 0.42 (features of one other cluster) or 0.71 (features of
    two other clusters), all below 0.76. With ``noise_inside = 0.1`` the
    true features drop to about 0.66 (0.37 where two subspaces overlap) while
    background features still reach 0.66, so no ``eps_c`` separates them:
    that is the variant to report, not to claim recovery on.

    Parameters
    ----------
    n_samples : int, default 300
        Number of rows (at least 3).
    random_state : None, int or numpy.random.Generator
        Seed for ``numpy.random.default_rng``.
    noise_inside : float, default 0.0
        In [0, 1): a subspace cell is 1 with probability ``1 - noise_inside``
        and 0 otherwise.

    Returns
    -------
    X : pandas.DataFrame of shape (n_samples, 30)
        Categorical columns with levels ``"0"`` and ``"1"``.
    y : numpy.ndarray of int64, shape (n_samples,)
    true_mask : numpy.ndarray of bool, shape (3, 30)

    Examples
    --------
    >>> X, y, mask = fig3_categorical(random_state=0)
    >>> mask.sum(axis=1).tolist()
    [9, 16, 8]
    """
    if not (isinstance(noise_inside, (int, float, np.floating)) and 0.0 <= noise_inside < 1.0):
        raise CraftInputError(f"noise_inside={noise_inside!r} must lie in [0, 1).")
    rng = as_generator(random_state)
    sizes = _cluster_sizes(n_samples, (1, 1, 1))
    true_mask = _mask_from_layout(_FIG3_LAYOUT, _FIG3_N_FEATURES)
    values, y = _binary_planted(sizes, true_mask, rng, p_inside=1.0 - float(noise_inside))
    return _binary_frame(values), y, true_mask


def fig3_numeric(n_samples: int = 300, random_state=None):
    """Numeric data of the paper's Figure 3(c): subspaces of unequal size.

    Same layout as :func:`fig3_categorical` (30 features; cluster 1 ``f1-f9``,
    cluster 2 ``f12-f27``, cluster 3 ``f7-f10`` + ``f24-f27``; ``f11`` and
    ``f28-f30`` in no subspace), 3 equal clusters. Inside cluster ``k``'s
    subspace a cell is N(mean_k, 1) with means 1, 5, 10; every other cell is
    N(0, 3^2), so the global variance of non-subspace cells is 9 as in the
    paper. The data are not standardised: the approximate-budget rule "select
    the features with within-cluster variance below ``eps_v``" separates the
    two kinds for ``eps_v`` between about 1 and 9 (the paper reports
    ``eps_v in [4, 6]``); with 100 rows per cluster a noise feature's sample
    variance falls below 6 with probability about 1 %, below 4 almost never.

    Parameters
    ----------
    n_samples : int, default 300
        Number of rows (at least 3).
    random_state : None, int or numpy.random.Generator
        Seed for ``numpy.random.default_rng``.

    Returns
    -------
    X : pandas.DataFrame of shape (n_samples, 30), float64 columns
    y : numpy.ndarray of int64, shape (n_samples,)
    true_mask : numpy.ndarray of bool, shape (3, 30)

    Examples
    --------
    >>> X, y, mask = fig3_numeric(random_state=0)
    >>> X.dtypes.unique().tolist()
    [dtype('float64')]
    """
    rng = as_generator(random_state)
    sizes = _cluster_sizes(n_samples, (1, 1, 1))
    true_mask = _mask_from_layout(_FIG3_LAYOUT, _FIG3_N_FEATURES)
    values, y = _numeric_planted(sizes, true_mask, NUMERIC_MEANS, rng)
    return _numeric_frame(values), y, true_mask


# ----------------------------------------------------------------------------
# General mixed-type generator
# ----------------------------------------------------------------------------
#: Standard deviation of numeric subspace cells in :func:`mixed_planted`.
MIXED_INSIDE_SD = 0.5
#: Spacing of the numeric cluster means in :func:`mixed_planted`.
MIXED_MEAN_STEP = 4.0
#: Probability that a categorical subspace cell takes its cluster's level.
MIXED_LEVEL_P = 0.9


def _level_names(n_levels: int) -> list[str]:
    return [f"c{t}" for t in range(n_levels)]


def mixed_planted(
    n_samples: int = 600,
    n_clusters: int = 4,
    n_numeric: int = 12,
    n_categorical: int = 12,
    n_levels: int = 4,
    subspace_fraction: float = 0.5,
    weights=None,
    random_state=None,
    shuffle: bool = True,
):
    """Mixed numeric/categorical data with a planted subspace per cluster.

    Construction, in this order of random draws:

    1. Cluster sizes: ``n_samples`` split in proportion to ``weights`` (equal
       by default), largest-remainder rounding, each cluster non-empty.
    2. Subspaces: for each cluster ``k`` in turn, ``round(subspace_fraction *
       n_numeric)`` numeric features and then ``round(subspace_fraction *
       n_categorical)`` categorical features are drawn uniformly without
       replacement (halves round up). Subspaces of different clusters may
       overlap.
    3. Numeric cells (columns ``f1 .. f{n_numeric}``): inside cluster ``k``'s
       subspace N(4 (k + 1), 0.5^2) (means 4, 8, 12, ... are 8 standard
       deviations apart); outside N(0, 3^2).
    4. Categorical cells (columns ``f{n_numeric+1} .. fD``, levels ``c0 ..
       c{n_levels-1}``): inside cluster ``k``'s subspace, on categorical
       feature ``j`` (0-based within the categorical block), the cell takes
       the cluster's level ``c{(k + j) mod n_levels}`` with probability 0.9
       and otherwise a uniform level (so the cluster's level has probability
       0.9 + 0.1 / n_levels); outside, uniform over the levels. Clusters get
       distinct levels on a shared feature whenever ``n_clusters <= n_levels``.
    5. If ``shuffle``, the rows (and ``y``) are permuted.

    Parameters
    ----------
    n_samples : int, default 600
        Number of rows (at least ``n_clusters``).
    n_clusters : int, default 4
    n_numeric, n_categorical : int, default 12
        Numbers of numeric and categorical features (either may be 0, not both).
    n_levels : int, default 4
        Levels per categorical feature (at least 2).
    subspace_fraction : float, default 0.5
        Share of each type's features in each cluster's subspace, in (0, 1].
    weights : sequence of float or None
        Relative cluster sizes (positive), length ``n_clusters``.
    random_state : None, int or numpy.random.Generator
        Seed for ``numpy.random.default_rng``.
    shuffle : bool, default True
        Permute the rows; otherwise rows come in cluster blocks.

    Returns
    -------
    X : pandas.DataFrame of shape (n_samples, n_numeric + n_categorical)
        float64 numeric columns, then categorical columns (dtype category).
    y : numpy.ndarray of int64, shape (n_samples,)
    true_mask : numpy.ndarray of bool, shape (n_clusters, n_numeric + n_categorical)

    Examples
    --------
    >>> X, y, mask = mixed_planted(random_state=0)
    >>> X.shape, mask.sum(axis=1).tolist()
    ((600, 24), [12, 12, 12, 12])
    """
    n_clusters = _check_int(n_clusters, "n_clusters", 1)
    n_numeric = _check_int(n_numeric, "n_numeric", 0)
    n_categorical = _check_int(n_categorical, "n_categorical", 0)
    n_levels = _check_int(n_levels, "n_levels", 2)
    if n_numeric + n_categorical == 0:
        raise CraftInputError("n_numeric and n_categorical are both 0; at least one feature is needed.")
    if not (isinstance(subspace_fraction, (int, float, np.floating)) and 0.0 < subspace_fraction <= 1.0):
        raise CraftInputError(f"subspace_fraction={subspace_fraction!r} must lie in (0, 1].")
    if weights is None:
        weights = np.ones(n_clusters)
    elif len(weights) != n_clusters:
        raise CraftInputError(
            f"weights has {len(weights)} entries but n_clusters={n_clusters}; they must match."
        )
    rng = as_generator(random_state)
    sizes = _cluster_sizes(n_samples, weights)
    y = _labels(sizes)
    n = int(sizes.sum())

    num_mask, cat_mask = _mixed_subspaces(
        rng, n_clusters, n_numeric, n_categorical, float(subspace_fraction)
    )
    means = MIXED_MEAN_STEP * np.arange(1, n_clusters + 1)
    numeric, _ = _numeric_planted(
        sizes, num_mask, means, rng, inside_sd=MIXED_INSIDE_SD, outside_sd=NOISE_SD
    )
    codes = _mixed_categorical_codes(rng, y, cat_mask, n_levels)

    if shuffle:
        order = rng.permutation(n)
        y, numeric, codes = y[order], numeric[order], codes[order]

    names = _feature_names(n_numeric + n_categorical)
    columns: dict[str, object] = {names[j]: numeric[:, j] for j in range(n_numeric)}
    levels = _level_names(n_levels)
    for j in range(n_categorical):
        columns[names[n_numeric + j]] = pd.Categorical.from_codes(codes[:, j], categories=levels)
    X = pd.DataFrame(columns, index=pd.RangeIndex(n))
    true_mask = np.concatenate([num_mask, cat_mask], axis=1)
    return X, y, true_mask


def _mixed_subspaces(
    rng: np.random.Generator,
    n_clusters: int,
    n_numeric: int,
    n_categorical: int,
    fraction: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Random per-cluster subspaces of each type (numeric draw, then categorical)."""
    num_mask = np.zeros((n_clusters, n_numeric), dtype=bool)
    cat_mask = np.zeros((n_clusters, n_categorical), dtype=bool)
    n_num_sel = min(n_numeric, _round_half_up(fraction * n_numeric))
    n_cat_sel = min(n_categorical, _round_half_up(fraction * n_categorical))
    for k in range(n_clusters):
        num_mask[k, rng.choice(n_numeric, size=n_num_sel, replace=False)] = True
        cat_mask[k, rng.choice(n_categorical, size=n_cat_sel, replace=False)] = True
    return num_mask, cat_mask


def _mixed_categorical_codes(
    rng: np.random.Generator, y: np.ndarray, cat_mask: np.ndarray, n_levels: int
) -> np.ndarray:
    """Level codes: cluster level w.p. 0.9 inside the subspace, else uniform."""
    n, n_cat = y.size, cat_mask.shape[1]
    uniform_codes = rng.integers(0, n_levels, size=(n, n_cat))
    keep = rng.random((n, n_cat)) < MIXED_LEVEL_P
    cluster_level = (y[:, None] + np.arange(n_cat)[None, :]) % n_levels
    use_cluster = cat_mask[y] & keep
    return np.where(use_cluster, cluster_level, uniform_codes).astype(np.int8 if n_levels < 128 else np.int32)


# ----------------------------------------------------------------------------
# Registry for the application's dataset picker
# ----------------------------------------------------------------------------
SYNTHETIC_DATASETS: dict[str, tuple[Callable, str]] = {
    "fig1_binary": (
        fig1_binary,
        "Fig. 1(a): 300 x 24 binary, 3 equal clusters, disjoint 8-feature subspaces.",
    ),
    "fig1_binary_modified": (
        fig1_binary_modified,
        "Fig. 1(c): unequal clusters, fragmented subspaces, a noisy feature, overlap of clusters 2-3.",
    ),
    "fig2_numeric": (
        fig2_numeric,
        "Fig. 2(a): 300 x 36 numeric, means 1/5/10 on 12-feature subspaces, N(0, 9) noise.",
    ),
    "fig2_numeric_modified": (
        fig2_numeric_modified,
        "Fig. 2(c): cluster 2 split, overlapping cluster 1 and nested in cluster 3; extraneous features.",
    ),
    "fig3_categorical": (
        fig3_categorical,
        "Fig. 3(a): binary, subspaces of 9/16/8 features, cluster 3 split across clusters 1 and 2.",
    ),
    "fig3_numeric": (
        fig3_numeric,
        "Fig. 3(c): numeric version of Fig. 3(a), unit variance inside, variance 9 outside.",
    ),
    "mixed_planted": (
        mixed_planted,
        "Mixed numeric/categorical data with a random planted subspace per cluster.",
    ),
}

#: Name -> generator, the same entries as :data:`SYNTHETIC_DATASETS`.
FIGURES: dict[str, Callable] = {name: entry[0] for name, entry in SYNTHETIC_DATASETS.items()}
