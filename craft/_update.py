"""The update of CRAFT, compiled with numba: statistics to cluster parameters, selection and objective.

Each pass of a run is the compiled assignment (:mod:`craft._kernels`)
followed by this update. Compiled, the update releases Python's lock, so
restarts on threads overlap the whole of a pass, not only its assignment.

The arithmetic is NumPy's, operation for operation, so that a fit is the
same bit for bit as the NumPy expressions it replaced (``docs/numerics.md``):

- elementwise steps are the same IEEE operations in the same order;
- a sum over a whole array is NumPy's pairwise summation
  (:func:`_pairwise`), a sum over a feature's levels is ``np.add.reduceat``'s
  (the first level plus the pairwise sum of the rest), a sum over clusters
  runs cluster by cluster, as NumPy reduces a row-major array over its rows;
- logarithms are taken by NumPy before the kernels run (``log_eta``,
  ``log_variances``): numba's ``log`` and NumPy's differ in the last bit on
  some inputs. The rounding of :func:`significant` uses numba's ``log10`` and
  ``pow``; it only decides ranks, at ten significant digits.

Every function here is the one implementation of its quantity: the engine's
NumPy-facing functions (``_engine.raw_variances``, ``selection_scores``,
``feature_selection``, ``objective_terms``) call these kernels.
"""

from __future__ import annotations

import numba
import numpy as np

#: ``budget`` codes of :func:`update`.
FIXED, APPROXIMATE, ALL = 0, 1, 2
#: Significant digits at which selection scores tie (``_engine.significant``).
DIGITS = 10

_njit = numba.njit(cache=True, nogil=True)


@_njit
def _pairwise_block(values, start, n):
    """NumPy's pairwise sum of at most 128 values: eight running sums, or one below eight values."""
    if n < 8:
        total = 0.0
        for i in range(start, start + n):
            total += values[i]
        return total
    r0 = values[start]
    r1 = values[start + 1]
    r2 = values[start + 2]
    r3 = values[start + 3]
    r4 = values[start + 4]
    r5 = values[start + 5]
    r6 = values[start + 6]
    r7 = values[start + 7]
    i = 8
    while i < n - (n % 8):
        r0 += values[start + i]
        r1 += values[start + i + 1]
        r2 += values[start + i + 2]
        r3 += values[start + i + 3]
        r4 += values[start + i + 4]
        r5 += values[start + i + 5]
        r6 += values[start + i + 6]
        r7 += values[start + i + 7]
        i += 8
    total = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        total += values[start + i]
        i += 1
    return total


@_njit
def _pairwise(values, start, n):
    """NumPy's pairwise sum of ``values[start:start + n]`` (``numpy/_core/src/umath/loops_utils.h.src``).

    Above 128 values NumPy sums each half (the first a multiple of eight
    long) and adds the two. The halving runs here on an explicit stack: numba
    cannot load a recursive function from its disk cache (it crashes).
    """
    if n <= 128:
        return _pairwise_block(values, start, n)
    starts = np.empty(64, dtype=np.int64)
    sizes = np.empty(64, dtype=np.int64)
    right_pending = np.zeros(64, dtype=np.bool_)
    lefts = np.empty(64)
    depth = 0
    starts[0] = start
    sizes[0] = n
    while True:
        size = sizes[depth]
        if size > 128:
            # Descend into the left half; its sum comes back to this frame.
            half = size // 2
            half -= half % 8
            right_pending[depth] = True
            depth += 1
            starts[depth] = starts[depth - 1]
            sizes[depth] = half
            continue
        value = _pairwise_block(values, starts[depth], size)
        depth -= 1
        # Hand the sum up: a left half's waits for its right half, a right half's completes its frame.
        while depth >= 0 and not right_pending[depth]:
            value = lefts[depth] + value
            depth -= 1
        if depth < 0:
            return value
        lefts[depth] = value
        right_pending[depth] = False
        half = sizes[depth] // 2
        half -= half % 8
        start_right = starts[depth] + half
        size_right = sizes[depth] - half
        depth += 1
        starts[depth] = start_right
        sizes[depth] = size_right


@_njit
def _feature_sums(values, offsets, n_levels, out):
    """``np.add.reduceat(values, offsets, axis=1)`` of (K, T) level values into ``out`` (K, Q)."""
    for k in range(values.shape[0]):
        row = values[k]
        for q in range(offsets.shape[0]):
            first = offsets[q]
            out[k, q] = row[first] + _pairwise(row, first + 1, n_levels[q] - 1)


@_njit
def moments(numeric_counts, sums, sums_sq, global_mean, global_var, means, variances):
    """Means and unfloored variances per cluster and numeric feature into ``means`` and ``variances``.

    Over each feature's observed cells in the cluster; a cluster with none
    takes the global mean and variance (it has no evidence of its own).
    """
    n_clusters, n_numeric = sums.shape
    for k in range(n_clusters):
        for j in range(n_numeric):
            count = numeric_counts[k, j]
            if count == 0:
                means[k, j] = global_mean[j]
                variances[k, j] = global_var[j]
            else:
                mean = sums[k, j] / count
                means[k, j] = mean
                variances[k, j] = max(sums_sq[k, j] / count - mean * mean, 0.0)


@_njit
def significant(values, scale, out):
    """``values`` rounded to :data:`DIGITS` significant digits of ``scale`` (see ``_engine.significant``)."""
    for k in range(values.shape[0]):
        for j in range(values.shape[1]):
            reference = abs(scale[k, j])
            magnitude = np.floor(np.log10(1.0 if reference == 0 else reference))
            quantum = 10.0 ** (magnitude - DIGITS + 1)
            out[k, j] = np.rint(values[k, j] / quantum) * quantum


@_njit
def _cluster_sums(values):
    """``values.sum(axis=0)`` of a (K, F) array: cluster by cluster, as NumPy reduces a row-major array's rows."""
    sums = np.zeros(values.shape[1])
    for k in range(values.shape[0]):
        for f in range(values.shape[1]):
            sums[f] += values[k, f]
    return sums


@_njit
def _shrunk_totals(own, rows, weight, out):
    """``weight * own + (1 - weight) * rows * pooled_per_row`` (see ``_engine.selection_scores``)."""
    n_clusters, n_features = own.shape
    pooled = _cluster_sums(own)
    total_rows = _pairwise(rows, 0, rows.shape[0])
    for q in range(n_features):
        pooled[q] = pooled[q] / total_rows
    for k in range(n_clusters):
        for q in range(n_features):
            out[k, q] = weight * own[k, q] + (1.0 - weight) * rows[k] * pooled[q]


@_njit
def _pooled_numeric(numeric_counts, values, weight, out):
    """``weight * values + (1 - weight) * (values pooled by each cluster's observed cells)``."""
    n_clusters, n_numeric = values.shape
    cells = _cluster_sums(numeric_counts)
    pooled = np.zeros(n_numeric)
    for k in range(n_clusters):
        for j in range(n_numeric):
            pooled[j] += numeric_counts[k, j] / max(cells[j], 1.0) * values[k, j]
    for k in range(n_clusters):
        for j in range(n_numeric):
            out[k, j] = weight * values[k, j] + (1.0 - weight) * pooled[j]


@_njit
def scores(counts, numeric_counts, sums_sq, variances, level_counts, log_eta, log_eta0, offsets, n_levels, shrink,
           weight, variance, variance_scale, gain, reference):
    """The selection rule's scores into ``variance``, ``variance_scale`` (K, P), ``gain``, ``reference`` (K, Q).

    ``shrink`` False: the paper's (the within-cluster variance; the gain
    ``G_d - G_kd`` against ``G_d``); True: each shrunk towards the score
    pooled over the clusters with the credibility ``weight`` (see
    ``_engine.selection_scores``).
    """
    n_clusters, n_numeric = variances.shape
    n_categorical = offsets.shape[0]
    second_moment = np.empty((n_clusters, n_numeric))
    for k in range(n_clusters):
        for j in range(n_numeric):
            second_moment[k, j] = sums_sq[k, j] / max(numeric_counts[k, j], 1.0)
    g_global = np.empty((n_clusters, n_categorical))
    gains = np.empty((n_clusters, n_categorical))
    if n_categorical:
        cost = np.empty(level_counts.shape)
        for k in range(n_clusters):
            for t in range(level_counts.shape[1]):
                cost[k, t] = level_counts[k, t] * -log_eta0[t]
        _feature_sums(cost, offsets, n_levels, g_global)
        for k in range(n_clusters):
            for t in range(level_counts.shape[1]):
                cost[k, t] = level_counts[k, t] * -log_eta[k, t]
        _feature_sums(cost, offsets, n_levels, gains)
        for k in range(n_clusters):
            for q in range(n_categorical):
                gains[k, q] = g_global[k, q] - gains[k, q]
    if not shrink:
        variance[:] = variances
        variance_scale[:] = second_moment
        gain[:] = gains
        reference[:] = g_global
        return
    _pooled_numeric(numeric_counts, variances, weight, variance)
    _pooled_numeric(numeric_counts, second_moment, weight, variance_scale)
    _shrunk_totals(gains, counts, weight, gain)
    _shrunk_totals(g_global, counts, weight, reference)


@_njit
def ranks(ranked, group, out):
    """1-based place of each entry within its row of ``ranked`` (lowest first), into ``out``.

    ``group`` (same shape; all equal without pins) orders first: lower group
    first, then lower value, then lower index (NumPy's ``lexsort``).
    """
    n_rows, n_columns = ranked.shape
    for k in range(n_rows):
        order = np.argsort(ranked[k], kind="mergesort")
        place = 1
        for level in range(3):
            for i in range(n_columns):
                column = order[i]
                if group[k, column] == level:
                    out[k, column] = place
                    place += 1


@_njit
def select(variance, variance_scale, gain, reference, pins, budget, keep_num, keep_cat, eps_v, eps_c,
            num_rank, cat_rank, selected):
    """Ranks of each kind (into ``num_rank``, ``cat_rank``) and the selection v (into ``selected``, (K, D) floats)."""
    n_clusters, n_numeric = variance.shape
    n_categorical = gain.shape[1]
    rounded = np.empty(variance.shape)
    significant(variance, variance_scale, rounded)
    group = np.empty(variance.shape, dtype=np.int64)
    for k in range(n_clusters):
        for j in range(n_numeric):
            group[k, j] = 1 - pins[k, j]  # on 0, free 1, off 2
    ranks(rounded, group, num_rank)
    rounded = np.empty(gain.shape)
    significant(gain, reference, rounded)
    group = np.empty(gain.shape, dtype=np.int64)
    for k in range(n_clusters):
        for q in range(n_categorical):
            rounded[k, q] = -rounded[k, q]
            group[k, q] = 1 - pins[k, n_numeric + q]
    ranks(rounded, group, cat_rank)
    for k in range(n_clusters):
        for d in range(n_numeric + n_categorical):
            if budget == ALL:
                chosen = True
            elif budget == FIXED:
                chosen = num_rank[k, d] <= keep_num if d < n_numeric else cat_rank[k, d - n_numeric] <= keep_cat
            elif d < n_numeric:
                chosen = variance[k, d] < eps_v
            else:
                q = d - n_numeric
                chosen = gain[k, q] > eps_c * reference[k, q]
            if budget != ALL:
                chosen = (chosen or pins[k, d] > 0) and pins[k, d] >= 0
            selected[k, d] = 1.0 if chosen else 0.0


@_njit
def update(counts, numeric_counts, sums, sums_sq, level_counts, log_eta, global_mean, global_var, log_eta0, offsets,
           n_levels, min_variance, fixed_variance, shrink, weight, budget, keep_num, keep_cat, eps_v, eps_c, pins,
           means, variances, floored, variance, variance_scale, gain, reference, num_rank, cat_rank, selected):
    """One update: every output array filled from the statistics (see ``_engine.clusters_from_statistics``).

    ``fixed_variance`` is NaN for a learned variance. ``pins`` (K, D) int8:
    +1 on, -1 off, 0 free (all zeros: the paper's selection).
    """
    moments(numeric_counts, sums, sums_sq, global_mean, global_var, means, variances)
    n_clusters, n_numeric = variances.shape
    for k in range(n_clusters):
        for j in range(n_numeric):
            if not np.isnan(fixed_variance):
                floored[k, j] = fixed_variance
            else:
                value = max(variances[k, j], min_variance * global_var[j])
                floored[k, j] = value if value > 0 else min_variance
    scores(counts, numeric_counts, sums_sq, variances, level_counts, log_eta, log_eta0, offsets, n_levels, shrink,
           weight, variance, variance_scale, gain, reference)
    select(variance, variance_scale, gain, reference, pins, budget, keep_num, keep_cat, eps_v, eps_c,
            num_rank, cat_rank, selected)


@_njit
def objective_parts(weights, floored, log_variances, log_eta, numeric_counts, variances, level_counts, log_eta0,
                    offsets, n_levels):
    """The objective's numeric and categorical terms and the numeric normaliser (see ``_engine.objective_terms``).

    Each a pairwise sum over the (K, P) or (K, T) array of its summands, as
    NumPy's ``.sum()``.
    """
    n_clusters, n_numeric = floored.shape
    n_levels_total = level_counts.shape[1]
    numeric = np.empty(n_clusters * n_numeric)
    normaliser = np.empty(n_clusters * n_numeric)
    for k in range(n_clusters):
        for j in range(n_numeric):
            weighted = weights[k, j] * numeric_counts[k, j]
            numeric[k * n_numeric + j] = weighted * variances[k, j] / (2.0 * floored[k, j])
            normaliser[k * n_numeric + j] = weighted * 0.5 * log_variances[k, j]
    categorical = np.empty(n_clusters * n_levels_total)
    for k in range(n_clusters):
        for q in range(offsets.shape[0]):
            v = weights[k, n_numeric + q]
            for t in range(offsets[q], offsets[q] + n_levels[q]):
                cost = v * -log_eta[k, t] + (1.0 - v) * -log_eta0[t]
                categorical[k * n_levels_total + t] = level_counts[k, t] * cost
    return (_pairwise(numeric, 0, numeric.shape[0]), _pairwise(categorical, 0, categorical.shape[0]),
            _pairwise(normaliser, 0, normaliser.shape[0]))
