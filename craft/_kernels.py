"""The hot loop of CRAFT, compiled with numba.

For every point, the smallest CRAFT distance over a set of clusters and the
cluster that attains it, without materialising the (N, K) distance matrix.
Each distance is summed in the same order as the paper's formula (numeric
features, then categorical features, then the feature-control term), so the
result is bit-for-bit that of a literal per-point loop.
"""

from __future__ import annotations

import threading
import types

import numba
import numpy as np


#: Rows whose sums one pass keeps side by side (two arrays of this many floats, 16 kB: the first-level cache).
_BLOCK = 1024


def _nearest_rows(  # noqa: C901 - the masked and unmasked, gathered and contiguous loops written out
    columns, observed, codes, offsets, rows, all_rows, means, half_precision, selected, n_selected, table, control,
    start_row, best, arg, part, level
):
    n_clusters = control.shape[0]
    n_categorical = codes.shape[0]
    n_rows = rows.shape[0]
    # Feature by feature over a block of rows: a feature's column (a row of
    # ``columns``, the table transposed) is read in order, and the rows'
    # sums, independent of one another, run side by side in the processor's
    # vector lanes. Each row still adds its terms one at a time in the
    # paper's order (selected numeric features in increasing order, then
    # categorical ones, then the feature-control term), so every distance is
    # the literal loop's bit for bit. A block's sums stay in the first-level cache.
    for block in numba.prange((n_rows + _BLOCK - 1) // _BLOCK):
        first = block * _BLOCK
        size = min(_BLOCK, n_rows - first)
        # The block's own views, indexed from 0: the compiler then knows no index is negative, which lets it
        # drop the wraparound test and run each loop in vector lanes.
        block_rows = rows[first : first + size]
        block_best = best[first : first + size]
        block_arg = arg[first : first + size]
        block_part = part[first : first + size]
        block_level = level[first : first + size]
        block_best[:] = np.inf
        block_arg[:] = -1
        start = block_rows[0]
        for k in range(n_clusters):
            block_part[:] = 0.0
            block_level[:] = 0.0
            for s in range(n_selected[k]):
                j = selected[k, s]
                mean = means[k, s]
                weight = half_precision[k, s]
                # A missing cell adds 0.0 where the literal loop adds nothing: the same sum, since each sum
                # starts at +0.0 and its terms are >= 0 (x + 0.0 == x but for x == -0.0).
                if observed is None:
                    if all_rows:
                        column = columns[j, start : start + size]
                        for i in range(size):
                            diff = column[i] - mean
                            block_part[i] += diff * diff * weight
                    else:
                        column = columns[j]
                        for i in range(size):
                            diff = column[block_rows[i]] - mean
                            block_part[i] += diff * diff * weight
                else:
                    column = columns[j]
                    seen = observed[j]
                    for i in range(size):
                        row = block_rows[i]
                        diff = column[row] - mean
                        block_part[i] += diff * diff * weight if seen[row] else 0.0
            for q in range(n_categorical):
                levels = table[k, offsets[q] :]
                if all_rows:
                    feature_codes = codes[q, start : start + size]
                    for i in range(size):
                        code = feature_codes[i]
                        # Code -1 (missing, unseen) adds 0.0 (the same sum as adding nothing, as above).
                        block_level[i] += levels[max(code, 0)] if code >= 0 else 0.0
                else:
                    feature_codes = codes[q]
                    for i in range(size):
                        code = feature_codes[block_rows[i]]
                        block_level[i] += levels[max(code, 0)] if code >= 0 else 0.0
            # A cluster opened during a pass is a candidate only after its opener.
            after = start_row[k]
            cost_of_cluster = control[k]
            for i in range(size):
                cost = block_part[i] + block_level[i] + cost_of_cluster
                if block_rows[i] > after and cost < block_best[i]:
                    block_best[i] = cost
                    block_arg[i] = k


# ``observed`` is None for a table without missing cells: numba compiles one
# variant per argument type and prunes the branch on ``observed is None`` that
# each variant does not take before typing, so such a table runs the loops with
# no mask test and no per-cell count (the code before missing cells were marginalised,
# the same sums in the same order). A table with gaps gets the masked variant.


def _compiled(function, name: str, **options):
    """``function`` compiled (and cached on disk) under its own ``name``.

    numba's disk cache files a kernel by its Python function's name and
    bytecode, not by its compile options: two dispatchers of one function
    would load each other's machine code, so whichever variant compiled first
    after an edit served both (the threaded pass ran on one thread, at half
    its speed on two cores, or small passes paid for threads).
    """
    copy = types.FunctionType(function.__code__, function.__globals__, name, function.__defaults__, function.__closure__)
    copy.__qualname__ = name
    return numba.njit(cache=True, nogil=True, **options)(copy)


# Threads pay off only on large passes; on small ones their start-up and the
# wait for a descheduled thread on a busy machine cost more than the work.
_nearest_parallel = _compiled(_nearest_rows, "_nearest_rows_parallel", parallel=True)
_nearest_serial = _compiled(_nearest_rows, "_nearest_rows_serial")
_PARALLEL_WORK = 4_000_000
#: One threaded pass at a time in the process. Where no OpenMP or TBB runtime is installed, numba falls back to
#: its "workqueue" threading layer, which aborts the whole process when two threads launch parallel kernels at
#: once (two fits at the same time: the app runs each in its own thread). One pass already fills the cores.
_PARALLEL_LAUNCH = threading.Lock()


def nearest(columns, observed, codes, offsets, rows, means, half_precision, table, control, start_row):
    """Smallest distance and its cluster for each of ``rows`` (None: every row, in order).

    ``columns`` (P, N), ``observed`` (P, N) and ``codes`` (Q, N) are the
    table transposed, C-contiguous (:attr:`craft.encoding.EncodedData.columns`).
    ``observed`` (or None: all) marks the numeric cells that count; a
    missing one, like a categorical code -1, adds nothing. ``half_precision`` is ``v_kd / (2 sigma_kd^2)`` (zero for unselected
    numeric features), ``table`` the per-cluster cost of every categorical
    level and ``control`` the feature-control term of each cluster. Cluster
    ``k`` is only a candidate for rows after ``start_row[k]`` (a cluster
    opened during a pass exists only for the points after its opener); rows
    with no candidate get ``inf`` and -1.
    """
    all_rows = rows is None
    rows = np.arange(columns.shape[1], dtype=np.int64) if all_rows else np.ascontiguousarray(rows, dtype=np.int64)
    selected, n_selected = _selected_columns(half_precision != 0.0)
    # Each cluster's selected means and weights, left-aligned (a fancy index gives a new C-ordered array).
    cluster = np.arange(control.shape[0])[:, None]
    best = np.empty(rows.shape[0])
    arg = np.empty(rows.shape[0], dtype=np.int64)
    work = rows.shape[0] * control.shape[0] * (columns.shape[0] + codes.shape[0])
    arguments = (
        columns,
        observed,
        codes,
        offsets,
        rows,
        all_rows,
        means[cluster, selected],
        half_precision[cluster, selected],
        selected,
        n_selected,
        np.ascontiguousarray(table),
        np.ascontiguousarray(control, dtype=np.float64),
        np.ascontiguousarray(start_row, dtype=np.int64),
        best,
        arg,
        np.empty(rows.shape[0]),
        np.empty(rows.shape[0]),
    )
    if work >= _PARALLEL_WORK:
        with _PARALLEL_LAUNCH:
            _nearest_parallel(*arguments)
    else:
        _nearest_serial(*arguments)
    return best, arg


def _mask(observed) -> np.ndarray | None:
    return None if observed is None else np.ascontiguousarray(observed, dtype=np.bool_)


def _selected_columns(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row of ``mask`` (clusters x numeric features), its True columns in
    increasing order, left-aligned, and how many there are."""
    n_selected = mask.sum(axis=1).astype(np.int64)
    # A stable sort puts the True columns first, each group in column order.
    selected = np.argsort(~mask, axis=1, kind="stable").astype(np.int64)
    return np.ascontiguousarray(selected), n_selected


@numba.njit(cache=True, nogil=True)
def _accumulate(numeric, observed, codes, offsets, labels, counts, numeric_counts, sums, sums_sq, level_counts):
    n_numeric = numeric.shape[1]
    n_categorical = codes.shape[1]
    for row in range(labels.shape[0]):
        k = labels[row]
        counts[k] += 1.0
        # The row's and its cluster's views, indexed from 0: the loop over the features then runs in vector lanes.
        values = numeric[row]
        cluster_sums = sums[k]
        cluster_squares = sums_sq[k]
        if observed is None:
            # Without a mask every cell counts: ``accumulate`` copies the row counts instead.
            for j in range(n_numeric):
                value = values[j]
                cluster_sums[j] += value
                cluster_squares[j] += value * value
        else:
            seen = observed[row]
            cluster_cells = numeric_counts[k]
            for j in range(n_numeric):
                if seen[j]:
                    value = values[j]
                    cluster_cells[j] += 1.0
                    cluster_sums[j] += value
                    cluster_squares[j] += value * value
        row_codes = codes[row]
        cluster_levels = level_counts[k]
        for q in range(n_categorical):
            code = row_codes[q]
            if code >= 0:
                cluster_levels[offsets[q] + code] += 1.0


def accumulate(numeric, observed, codes, offsets, labels, n_clusters, n_levels_total):
    """Counts (rows, and observed cells per numeric feature), sums, sums of
    squares and level counts per cluster, in row order; cells that are not
    ``observed`` (None: all are) and codes -1 are left out.

    Sequential on purpose: the sums then do not depend on the number of
    threads, so results are the same on every machine.
    """
    counts = np.zeros(n_clusters)
    numeric_counts = np.zeros((n_clusters, numeric.shape[1]))
    sums = np.zeros((n_clusters, numeric.shape[1]))
    sums_sq = np.zeros((n_clusters, numeric.shape[1]))
    level_counts = np.zeros((n_clusters, n_levels_total))
    labels = np.ascontiguousarray(labels, dtype=np.int64)
    _accumulate(numeric, _mask(observed), codes, offsets, labels, counts, numeric_counts, sums, sums_sq, level_counts)
    if observed is None:
        # A sum of ones is exact: the same numbers as counting every cell.
        numeric_counts[:] = counts[:, None]
    return counts, numeric_counts, sums, sums_sq, level_counts


# ---------------------------------------------------------------------------
# Encoding. The standardized copy and the variance of its columns are the
# slow steps of encoding a large table in NumPy (a transposing copy, then
# temporaries as large as the table); here each is one read of the block.
# Sums run row by row, as NumPy reduces a row-major block over its rows, so
# the results are NumPy's bit for bit.


@numba.njit(cache=True, nogil=True)
def _scan(raw, limit, n_missing, n_infinite, n_too_large):
    n_rows, n_columns = raw.shape
    for j in range(n_columns):
        for i in range(n_rows):
            value = raw[i, j]
            if np.isnan(value):
                n_missing[j] += 1
            elif np.isinf(value):
                n_infinite[j] += 1
            elif abs(value) > limit:
                n_too_large[j] += 1


def scan(raw: np.ndarray, limit: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per column of ``raw``: missing (NaN) cells, infinite cells, finite cells beyond ``limit`` in magnitude."""
    counts = np.zeros((3, raw.shape[1]), dtype=np.int64)
    _scan(raw, float(limit), counts[0], counts[1], counts[2])
    return counts[0], counts[1], counts[2]


@numba.njit(cache=True, nogil=True)
def _standardized(raw, impute, center, scale, out, sums):
    n_rows, n_columns = raw.shape
    for i in range(n_rows):
        for j in range(n_columns):
            value = raw[i, j]
            if np.isnan(value):
                value = impute[j]
            encoded = (value - center[j]) / scale[j]
            out[i, j] = encoded
            sums[j] += encoded


def standardized(raw: np.ndarray, impute: np.ndarray, center: np.ndarray, scale: np.ndarray):
    """``(x - center) / scale``, missing cells taking ``impute``, row-major; and its column sums."""
    out = np.empty(raw.shape)
    sums = np.zeros(raw.shape[1])
    impute, center, scale = (np.ascontiguousarray(values, dtype=np.float64) for values in (impute, center, scale))
    _standardized(raw, impute, center, scale, out, sums)
    return out, sums


@numba.njit(cache=True, nogil=True)
def _centred_squares(values, mean, out):
    n_rows, n_columns = values.shape
    for i in range(n_rows):
        for j in range(n_columns):
            diff = values[i, j] - mean[j]
            out[j] += diff * diff


def column_variance(values: np.ndarray, sums: np.ndarray) -> np.ndarray:
    """``values.var(axis=0)`` of a row-major block whose column sums are ``sums``."""
    n_rows, n_columns = values.shape
    if n_columns == 1 or n_rows == 0:
        # NumPy sums a lone contiguous column pairwise, not row by row.
        return values.var(axis=0)
    out = np.zeros(n_columns)
    _centred_squares(values, sums / n_rows, out)
    return out / n_rows


@numba.njit(cache=True, nogil=True)
def _gather_codes(inverse, lookup, out):
    n_rows, n_columns = out.shape
    for i in range(n_rows):
        for q in range(n_columns):
            out[i, q] = lookup[q, inverse[q, i] + 1]


def gather_codes(inverse: np.ndarray, lookup: np.ndarray) -> np.ndarray:
    """Row-major level codes from per-column factorizations.

    ``inverse`` is (n_columns, n_rows), each row a column's index into its
    distinct values (-1 for missing); ``lookup[q, u + 1]`` is the level code
    of distinct value ``u`` of column ``q`` (``lookup[q, 0]``: of a missing cell).
    """
    out = np.empty((inverse.shape[1], inverse.shape[0]), dtype=np.int64)
    _gather_codes(inverse, lookup, out)
    return out


_WARM = False


def tiny_pass(kernel, observed: np.ndarray | None) -> None:
    """``kernel`` (a compiled variant of the pass) run on two rows of one numeric and one categorical feature.

    ``observed`` is None or a (2, 1) mask of the rows' numeric cells; its
    presence picks the masked or the unmasked machine code.
    """
    kernel(np.zeros((1, 2)), None if observed is None else np.ascontiguousarray(observed.T), np.zeros((1, 2), dtype=np.int64),
           np.zeros(1, dtype=np.int64), np.arange(2, dtype=np.int64), True, np.zeros((1, 1)), np.ones((1, 1)),
           np.zeros((1, 1), dtype=np.int64), np.ones(1, dtype=np.int64), np.zeros((1, 1)), np.zeros(1),
           np.full(1, -1, dtype=np.int64), np.empty(2), np.empty(2, dtype=np.int64), np.empty(2), np.empty(2))


def warm_up() -> None:
    """Compile every kernel, or load it from numba's disk cache, on tiny inputs; once per process.

    A first fit then times its own work: without this, its first call of
    each kernel also pays the compilation (seconds) or the cache load. The
    arrays have the types and memory layouts the engine and the encoder pass.
    """
    global _WARM
    if _WARM:
        return
    numeric = np.zeros((2, 1))
    codes = np.zeros((2, 1), dtype=np.int64)
    offsets = np.zeros(1, dtype=np.int64)
    # Both variants: a table without missing cells (None) and one with them (a mask).
    for observed in (None, np.ones((2, 1), dtype=np.bool_)):
        for kernel in (_nearest_serial, _nearest_parallel):
            tiny_pass(kernel, observed)
        accumulate(numeric, observed, codes, offsets, np.zeros(2, dtype=np.int64), 1, 1)
    # pandas hands a one-dtype numeric block over column-major, a mixed one row-major.
    for raw in (np.zeros((2, 2), order="F"), np.zeros((2, 2), order="C")):
        scan(raw, 1.0)
        standardized(raw, np.zeros(2), np.zeros(2), np.ones(2))
    column_variance(np.zeros((2, 2)), np.zeros(2))
    gather_codes(np.zeros((1, 2), dtype=np.int64), np.zeros((1, 2), dtype=np.int64))
    _WARM = True
