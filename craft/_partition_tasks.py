"""What one partition's task computes on a worker, and how the tasks' results add up.

Every function here takes one partition (its rows as a table, or encoded)
and returns a small result; the ``_combine_*`` functions add such results
in a fixed tree (``craft._dask_backend._Partitions.tree``). They are the
per-partition halves of the encoder's two reductions, of the pass (nearest
cluster, candidates, proposals screened against the clusters opened so far,
the final labels and their sufficient statistics), of the seeding and
farthest-first steps, and of the distinct-row count. None holds state
between tasks: what a partition keeps (labels, best distances) stays in the
worker's memory as the future of a task's result.
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import pandas as pd

from . import _engine
from .encoding import EncodedData, Encoder, level_sort_key, check_observed
from .priors import PriorTerms


@dataclasses.dataclass
class _Digests:
    digests: np.ndarray  # sorted, distinct, at most at_most of them
    at_most: int


def _distinct_digests(data: EncodedData, at_most: int) -> _Digests:
    return _Digests(_engine.distinct_digests(data)[:at_most], at_most)


def _union_digests(*pieces: _Digests) -> _Digests:
    at_most = pieces[0].at_most
    return _Digests(_engine.unique_sorted(np.concatenate([piece.digests for piece in pieces]))[:at_most], at_most)


# ----------------------------------------------------------------------
# The encoder, learnt with two reductions


@dataclasses.dataclass
class _Description:
    """Pass 1 of the encoder: rows per partition, observed numeric sums, level counts."""

    n_rows: np.ndarray  # (partitions covered,)
    observed: np.ndarray  # (P,) non-missing numeric cells
    totals: np.ndarray  # (P,) their sums
    levels: list  # per categorical column: {level: count}
    n_missing: np.ndarray  # (Q,) missing categorical cells


def _describe(table: pd.DataFrame, numeric: list, categorical: list) -> _Description:
    raw = Encoder(numeric, categorical)._numeric_block(table)
    missing = np.isnan(raw)
    levels, n_missing = [], []
    for name in categorical:
        column = table[name]
        counts = column.value_counts(dropna=True, sort=False)
        counts = counts[counts > 0]  # a category dtype lists its unused categories too
        levels.append(dict(zip(counts.index.tolist(), counts.to_numpy(dtype=np.int64).tolist(), strict=True)))
        n_missing.append(int(column.isna().sum()))
    return _Description(
        n_rows=np.array([len(table)], dtype=np.int64),
        observed=(~missing).sum(axis=0),
        totals=np.where(missing, 0.0, raw).sum(axis=0),
        levels=levels,
        n_missing=np.array(n_missing, dtype=np.int64),
    )


def _combine_descriptions(*parts: _Description) -> _Description:
    levels: list[dict] = [dict() for _ in parts[0].levels]
    for part in parts:
        for merged, counts in zip(levels, part.levels, strict=True):
            for level, count in counts.items():
                merged[level] = merged.get(level, 0) + count
    return _Description(
        n_rows=np.concatenate([part.n_rows for part in parts]),
        observed=functools.reduce(np.add, [part.observed for part in parts]),
        totals=functools.reduce(np.add, [part.totals for part in parts]),
        levels=levels,
        n_missing=functools.reduce(np.add, [part.n_missing for part in parts]),
    )


@dataclasses.dataclass
class _Moments:
    """Pass 2: count, sum and centred sum of squares of the imputed numeric columns."""

    n: int
    total: np.ndarray
    m2: np.ndarray


def _moments(table: pd.DataFrame, numeric: list, categorical: list, impute: np.ndarray) -> _Moments:
    raw = Encoder(numeric, categorical)._numeric_block(table)
    filled = np.where(np.isnan(raw), impute[None, :], raw)
    n = filled.shape[0]
    total = filled.sum(axis=0)
    if n == 0:
        return _Moments(0, total, np.zeros_like(total))
    return _Moments(n, total, ((filled - total / n) ** 2).sum(axis=0))


def _combine_moments(*parts: _Moments) -> _Moments:
    # Chan, Golub and LeVeque's pairwise update, in partition order.
    result = parts[0]
    for part in parts[1:]:
        if part.n == 0:
            continue
        if result.n == 0:
            result = part
            continue
        n = result.n + part.n
        delta = part.total / part.n - result.total / result.n
        result = _Moments(n, result.total + part.total, result.m2 + part.m2 + delta * delta * (result.n * part.n / n))
    return result


def _encoder_from(description: _Description, numeric: list, categorical: list, standardize: bool, missing: str) -> Encoder:
    """The levels, level frequencies and imputation values that ``Encoder.fit_transform`` learns."""
    n_rows = int(description.n_rows.sum())
    encoder = Encoder(numeric, categorical, standardize, missing)
    observed = description.observed
    n_missing = {name: int(n_rows - n) for name, n in zip(numeric, observed, strict=True) if n_rows - n}
    n_missing.update((name, int(n)) for name, n in zip(categorical, description.n_missing, strict=True) if n)
    encoder.n_imputed_ = {} if encoder.marginalise else {name: n for name, n in n_missing.items() if name in numeric}
    encoder.n_marginalised_ = n_missing if encoder.marginalise else {}
    if encoder.marginalise:
        check_observed(numeric + categorical, [int(n) for n in observed] + [n_rows - int(n) for n in description.n_missing])
    encoder.impute_ = np.divide(description.totals, observed, out=np.zeros(len(numeric)), where=observed > 0)
    encoder.levels_ = [sorted(counts, key=level_sort_key) for counts in description.levels]
    encoder.has_missing_level_ = [bool(n) and not encoder.marginalise for n in description.n_missing]
    eta0: list[float] = []
    for levels, seen, n_missing_q in zip(encoder.levels_, description.levels, description.n_missing, strict=True):
        # As Encoder.fit_transform: over the observed cells when they are marginalised.
        total = n_rows - int(n_missing_q) if encoder.marginalise else n_rows
        eta0.extend(seen[level] / max(total, 1) for level in levels)
        if n_missing_q and not encoder.marginalise:
            eta0.append(int(n_missing_q) / max(total, 1))
    encoder.fitted_eta0_ = np.array(eta0, dtype=np.float64)
    return encoder


def _finish_encoder(encoder: Encoder, moments: _Moments, observed: np.ndarray) -> None:
    """Centres, scales and the variance of the encoded columns, from the imputed columns' moments.

    Imputed cells sit at the column's observed mean, so they add nothing to
    the centred sum of squares: the observed cells' variance (marginalised
    missing cells) is the same sum over the observed count.
    """
    n_rows = moments.n
    variance = moments.m2 / np.maximum(observed if encoder.marginalise else n_rows, 1)
    if encoder.standardize:
        encoder.center_ = moments.total / max(n_rows, 1)
        spread = np.sqrt(variance)
        encoder.scale_ = np.where(spread > 0, spread, 1.0)
    else:
        encoder.center_ = np.zeros(len(encoder.numeric))
        encoder.scale_ = np.ones(len(encoder.numeric))
    encoder.fitted_var_ = variance / (encoder.scale_ * encoder.scale_)


# ----------------------------------------------------------------------
# Per-partition steps (run on the workers)


@dataclasses.dataclass
class _Summary:
    """Sufficient statistics of a labelling, labels changed, candidates per partition; added across partitions."""

    stats: _engine.Statistics
    n_changed: int
    n_candidates: np.ndarray  # (partitions covered,)


def _summary(data: EncodedData, labels: np.ndarray, n_clusters: int, previous, n_candidates: int = 0) -> _Summary:
    stats = _engine.statistics(data, labels, n_clusters)
    before = 0 if previous is None else previous
    return _Summary(stats, int(np.count_nonzero(labels != before)), np.array([n_candidates], dtype=np.int64))


def _combine_summaries(*pieces) -> _Summary:
    parts = [piece[0] if isinstance(piece, tuple) else piece for piece in pieces]
    first = parts[0].stats
    rest = [part.stats for part in parts[1:]]
    return _Summary(
        _engine.Statistics(
            functools.reduce(np.add, [stats.counts for stats in rest], first.counts.copy()),
            functools.reduce(np.add, [stats.numeric_counts for stats in rest], first.numeric_counts.copy()),
            functools.reduce(np.add, [stats.sums for stats in rest], first.sums.copy()),
            functools.reduce(np.add, [stats.sums_sq for stats in rest], first.sums_sq.copy()),
            functools.reduce(np.add, [stats.level_counts for stats in rest], first.level_counts.copy()),
        ),
        sum(part.n_changed for part in parts),
        np.concatenate([part.n_candidates for part in parts]),
    )


@dataclasses.dataclass
class _Proposal:
    """Rows of one partition proposed as openers: local indices, their data, distance to the old clusters."""

    rows: np.ndarray
    data: EncodedData
    best_old: np.ndarray


@dataclasses.dataclass
class _PassContext:
    clusters: _engine.Clusters
    opts: _engine.Options
    threshold: float
    chunk_rows: int


def _pass_partition(data: EncodedData, previous, ctx: _PassContext):
    """First map of a pass: nearest old cluster, candidates, speculative statistics, first proposals.

    Returns ``(summary, best_old, labels, proposal)``; the statistics are the
    pass's if no partition has a candidate. Under ``noise=True`` the
    candidates are labelled noise (:func:`craft._engine.nearest_or_noise`)
    and none is proposed: that pass opens no cluster.
    """
    best_old, labels = _engine.nearest_or_noise(data, ctx.clusters, ctx.opts)
    candidates = np.zeros(0, dtype=np.int64) if ctx.opts.noise else _engine.opening_candidates(data, best_old, ctx.threshold)
    summary = _summary(data, labels, ctx.clusters.n_clusters, previous, candidates.size)
    keep = candidates[: ctx.chunk_rows]
    return summary, best_old, labels.astype(np.int32), _Proposal(keep, data.take(keep), best_old[keep])


@dataclasses.dataclass
class _WalkContext:
    opened: _engine.Clusters | None
    terms: PriorTerms
    threshold: float
    chunk_rows: int


def _screen(proposal: _Proposal, ctx: _WalkContext) -> _Proposal:
    """The proposals still beyond the threshold once the clusters opened so far are counted."""
    if ctx.opened is None:
        return proposal
    best = np.minimum(proposal.best_old, _engine.nearest_cluster(proposal.data, ctx.opened, ctx.terms)[0])
    keep = np.flatnonzero(best > ctx.threshold)
    return _Proposal(proposal.rows[keep], proposal.data.take(keep), proposal.best_old[keep])


def _propose(data: EncodedData, best_old: np.ndarray, position: int, ctx: _WalkContext):
    """Up to ``chunk_rows`` candidates from the ``position``-th on, screened against ``ctx.opened``.

    Returns the proposal and the position of the first candidate not yet examined.
    """
    candidates = _engine.opening_candidates(data, best_old, ctx.threshold)
    kept, n_kept = [], 0
    while position < candidates.size and n_kept < ctx.chunk_rows:
        window = candidates[position : position + ctx.chunk_rows]
        best = best_old[window]
        if ctx.opened is not None:
            best = np.minimum(best, _engine.nearest_cluster(data, ctx.opened, ctx.terms, rows=window)[0])
        keep = window[best > ctx.threshold]
        room = ctx.chunk_rows - n_kept
        if keep.size > room:
            keep = keep[:room]
            position += int(np.searchsorted(window, keep[-1])) + 1
        else:
            position += window.size
        kept.append(keep)
        n_kept += keep.size
    rows = np.concatenate(kept) if kept else np.zeros(0, dtype=np.int64)
    return _Proposal(rows, data.take(rows), best_old[rows]), position


@dataclasses.dataclass
class _AssignContext:
    walk: _engine.OpeningWalk
    clusters: _engine.Clusters
    n_clusters: int


def _assign_partition(data: EncodedData, state, previous, row_offset, ctx: _AssignContext):
    """Second map of a pass that opened clusters: final labels (old and new clusters) and statistics."""
    _, best_old, labels, _ = state
    labels, _ = ctx.walk.assign(data, labels.astype(np.int64), best_old, ctx.clusters, row_offset=int(row_offset))
    return _summary(data, labels, ctx.n_clusters, previous), labels.astype(np.int32)


def _relabel(labels: np.ndarray, previous, present: np.ndarray):
    new = _engine.renumber(labels, present).astype(np.int32)
    before = 0 if previous is None else previous
    return new, int(np.count_nonzero(new != before))


@dataclasses.dataclass
class _NearestContext:
    clusters: _engine.Clusters
    terms: PriorTerms


@dataclasses.dataclass
class _FinalContext:
    clusters: _engine.Clusters
    opts: _engine.Options


def _final_partition(data: EncodedData, previous, ctx: _FinalContext):
    """Assignment to the nearest cluster, without opening (the end of an unconverged run); noise stays noise."""
    _, labels = _engine.nearest_or_noise(data, ctx.clusters, ctx.opts)
    return _summary(data, labels, ctx.clusters.n_clusters, previous), labels.astype(np.int32)


def _one_cluster_summary(data: EncodedData, ctx) -> _Summary:
    """Statistics of the labelling with every row in one cluster (default lambda)."""
    return _summary(data, np.zeros(data.n_samples, dtype=np.int64), 1, None)


def _cost_sum(data: EncodedData, ctx: _NearestContext) -> float:
    return float(_engine.nearest_cluster(data, ctx.clusters, ctx.terms)[0].sum())


# Seeding and farthest-first: a per-row "best distance so far" lives on the workers.


@dataclasses.dataclass
class _SeedContext:
    """A new seed cluster, built on every worker from the seed row's data and the driver's v."""

    weights: np.ndarray
    opts: _engine.Options
    floor: float  # rows whose best distance exceeds this may be drawn next


def _beyond_total(best: np.ndarray, floor: float) -> tuple[int, float]:
    beyond = np.flatnonzero(best > floor)
    if beyond.size == 0:
        return 0, 0.0
    return int(beyond.size), float(np.cumsum(best[beyond])[-1])


def _lower(data: EncodedData, state, owner: bool, seed: tuple, ctx: _SeedContext) -> np.ndarray:
    """``min(best, d(x, seed))``, the seed's own row set to -inf where this partition holds it.

    ``seed`` is ``(local row in its partition, EncodedData of that row)``.
    """
    local_row, seed_data = seed
    cluster = _engine.new_clusters(seed_data, np.array([0]), ctx.weights, ctx.opts)
    distance = _engine.nearest_cluster(data, cluster, ctx.opts.terms)[0]
    best = np.minimum(distance, ctx.opts.seeding_cap(data.n_features)) if state is None else np.minimum(state[0], distance)
    if owner:
        best[local_row] = -np.inf
    best[~_engine.has_observed_cell(data)] = -np.inf
    return best


def _seed_update(data: EncodedData, state, owner: bool, seed: tuple, ctx: _SeedContext):
    """Lower the best distances with the new seed; then how many rows lie beyond the floor, their
    total (craft++'s draw) and the farthest row (farthest-first)."""
    best = _lower(data, state, owner, seed, ctx)
    count, total = _beyond_total(best, ctx.floor)
    if best.size == 0:
        return best, (count, total, (-np.inf, -1, None))
    i = int(np.argmax(best))
    return best, (count, total, (float(best[i]), i, data.take(np.array([i]))))


def _seed_resolve(data: EncodedData, state, start: float, target: float, floor: float):
    """The row that ``sample_proportional`` picks here, with the cumulative sum carried in ``start``."""
    best = state[0]
    beyond = np.flatnonzero(best > floor)
    cumulative = start + np.cumsum(best[beyond])
    index = min(int(np.searchsorted(cumulative, target, side="right")), beyond.size - 1)
    row = int(beyond[index])
    return row, data.take(np.array([row]))
