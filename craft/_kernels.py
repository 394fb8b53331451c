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


def _nearest_rows(  # noqa: C901 - four rows unrolled by hand in one loop
    numeric, observed, codes, offsets, rows, means, half_precision, selected, n_selected, table, control, start_row, best, arg
):
    n_clusters = control.shape[0]
    n_categorical = codes.shape[1]
    n_rows = rows.shape[0]
    last = n_rows - 1
    # Four rows at a time: each row's sums are the same additions in the same
    # order as one row at a time, but the four chains of additions are
    # independent, so the processor overlaps them instead of waiting on each
    # addition (0.28 -> 0.20 ms a pass on Spambase). The last block repeats
    # the last row where rows run out, and writes only real rows.
    for block in numba.prange((n_rows + 3) // 4):
        first = 4 * block
        row0 = rows[first]
        row1 = rows[min(first + 1, last)]
        row2 = rows[min(first + 2, last)]
        row3 = rows[min(first + 3, last)]
        best0 = best1 = best2 = best3 = np.inf
        arg0 = arg1 = arg2 = arg3 = -1
        for k in range(n_clusters):
            # Only the selected numeric features, in increasing order: the
            # same sum as over all of them with zero weights, without the
            # branch per feature. ``means`` and ``half_precision`` hold the
            # selected features' values left-aligned (column s is feature
            # ``selected[k, s]``), read in order rather than gathered.
            part0 = part1 = part2 = part3 = 0.0
            for s in range(n_selected[k]):
                j = selected[k, s]
                mean = means[k, s]
                weight = half_precision[k, s]
                if observed is None:
                    diff = numeric[row0, j] - mean
                    part0 += diff * diff * weight
                    diff = numeric[row1, j] - mean
                    part1 += diff * diff * weight
                    diff = numeric[row2, j] - mean
                    part2 += diff * diff * weight
                    diff = numeric[row3, j] - mean
                    part3 += diff * diff * weight
                else:
                    if observed[row0, j]:
                        diff = numeric[row0, j] - mean
                        part0 += diff * diff * weight
                    if observed[row1, j]:
                        diff = numeric[row1, j] - mean
                        part1 += diff * diff * weight
                    if observed[row2, j]:
                        diff = numeric[row2, j] - mean
                        part2 += diff * diff * weight
                    if observed[row3, j]:
                        diff = numeric[row3, j] - mean
                        part3 += diff * diff * weight
            # The row's level columns are looked up for every cluster: an array
            # holding them per row would be an allocation per row, which cost
            # more than the work on small tables.
            level0 = level1 = level2 = level3 = 0.0
            for q in range(n_categorical):
                offset = offsets[q]
                code = codes[row0, q]
                if code >= 0:
                    level0 += table[k, offset + code]
                code = codes[row1, q]
                if code >= 0:
                    level1 += table[k, offset + code]
                code = codes[row2, q]
                if code >= 0:
                    level2 += table[k, offset + code]
                code = codes[row3, q]
                if code >= 0:
                    level3 += table[k, offset + code]
            # A cluster opened during a pass is a candidate only after its opener.
            after = start_row[k]
            cost = part0 + level0 + control[k]
            if row0 > after and cost < best0:
                best0 = cost
                arg0 = k
            cost = part1 + level1 + control[k]
            if row1 > after and cost < best1:
                best1 = cost
                arg1 = k
            cost = part2 + level2 + control[k]
            if row2 > after and cost < best2:
                best2 = cost
                arg2 = k
            cost = part3 + level3 + control[k]
            if row3 > after and cost < best3:
                best3 = cost
                arg3 = k
        best[first] = best0
        arg[first] = arg0
        if first + 1 <= last:
            best[first + 1] = best1
            arg[first + 1] = arg1
        if first + 2 <= last:
            best[first + 2] = best2
            arg[first + 2] = arg2
        if first + 3 <= last:
            best[first + 3] = best3
            arg[first + 3] = arg3


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


def nearest(numeric, observed, codes, offsets, rows, means, half_precision, table, control, start_row):
    """Smallest distance and its cluster for each of ``rows``.

    ``observed`` (or None: all) marks the numeric cells that count; a
    missing one, like a categorical code -1, adds nothing. ``half_precision`` is ``v_kd / (2 sigma_kd^2)`` (zero for unselected
    numeric features), ``table`` the per-cluster cost of every categorical
    level and ``control`` the feature-control term of each cluster. Cluster
    ``k`` is only a candidate for rows after ``start_row[k]`` (a cluster
    opened during a pass exists only for the points after its opener); rows
    with no candidate get ``inf`` and -1.
    """
    selected, n_selected = _selected_columns(half_precision != 0.0)
    # Each cluster's selected means and weights, left-aligned (a fancy index gives a new C-ordered array).
    cluster = np.arange(control.shape[0])[:, None]
    best = np.empty(rows.shape[0])
    arg = np.empty(rows.shape[0], dtype=np.int64)
    work = rows.shape[0] * control.shape[0] * (numeric.shape[1] + codes.shape[1])
    arguments = (
        numeric,
        _mask(observed),
        codes,
        offsets,
        np.ascontiguousarray(rows, dtype=np.int64),
        means[cluster, selected],
        half_precision[cluster, selected],
        selected,
        n_selected,
        np.ascontiguousarray(table),
        np.ascontiguousarray(control, dtype=np.float64),
        np.ascontiguousarray(start_row, dtype=np.int64),
        best,
        arg,
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
        for j in range(n_numeric):
            # Without a mask (None) every cell counts: ``accumulate`` copies the row counts instead.
            if observed is not None:
                if not observed[row, j]:
                    continue
                numeric_counts[k, j] += 1.0
            value = numeric[row, j]
            sums[k, j] += value
            sums_sq[k, j] += value * value
        for q in range(n_categorical):
            code = codes[row, q]
            if code >= 0:
                level_counts[k, offsets[q] + code] += 1.0


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
            kernel(numeric, observed, codes, offsets, np.arange(2, dtype=np.int64), np.zeros((1, 1)), np.ones((1, 1)),
                   np.zeros((1, 1), dtype=np.int64), np.ones(1, dtype=np.int64), np.zeros((1, 1)), np.zeros(1),
                   np.full(1, -1, dtype=np.int64), np.empty(2), np.empty(2, dtype=np.int64))
        accumulate(numeric, observed, codes, offsets, np.zeros(2, dtype=np.int64), 1, 1)
    # pandas hands a one-dtype numeric block over column-major, a mixed one row-major.
    for raw in (np.zeros((2, 2), order="F"), np.zeros((2, 2), order="C")):
        scan(raw, 1.0)
        standardized(raw, np.zeros(2), np.zeros(2), np.ones(2))
    column_variance(np.zeros((2, 2)), np.zeros(2))
    gather_codes(np.zeros((1, 2), dtype=np.int64), np.zeros((1, 2), dtype=np.int64))
    _WARM = True
