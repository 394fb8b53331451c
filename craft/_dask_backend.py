"""The Dask backend: the partitions of one fit as ``craft._engine``'s backend interface (``_Partitions``).

Each partition is a self-contained source (its task graph, culled to it)
that a task reads, and encodes, on a worker; tasks are submitted as futures,
per-partition state stays on the workers, and reductions run in a fixed
tree, so the sums do not depend on the scheduling. The driver-side steps of
the pass (the ordered walk over the workers' proposals, the compaction of
emptied clusters) are here too; what each task computes is
``craft._partition_tasks``.
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
import operator
import uuid

import numpy as np
import pandas as pd

from . import _engine
from ._optional import missing
from ._partition_tasks import (
    _AssignContext,
    _assign_partition,
    _combine_descriptions,
    _combine_moments,
    _combine_summaries,
    _cost_sum,
    _describe,
    _distinct_digests,
    _encoder_from,
    _final_partition,
    _FinalContext,
    _finish_encoder,
    _moments,
    _NearestContext,
    _one_cluster_summary,
    _pass_partition,
    _PassContext,
    _propose,
    _Proposal,
    _relabel,
    _screen,
    _seed_resolve,
    _seed_update,
    _SeedContext,
    _Summary,
    _union_digests,
    _WalkContext,
)
from .encoding import EncodedData, Encoder
from .priors import PriorTerms

try:
    import dask.dataframe as dd
    from dask import delayed
    from dask.local import get_sync
    from dask.optimization import cull
    from distributed import Client, Future
except ImportError as error:  # pragma: no cover - depends on the installation
    raise missing("dask[dataframe,distributed]", extra="dask", needed_for="craft.distributed") from error

# Partial results are added in groups of this many, in partition order, on the workers.
_FAN_IN = 8


@dataclasses.dataclass
class _Source:
    """How to produce one partition: its task graph, culled to that partition, run on the worker."""

    graph: dict
    key: object

    @classmethod
    def of(cls, partition) -> "_Source":
        graph, _ = cull(dict(partition.__dask_graph__()), [partition.key])
        return cls(graph, partition.key)

    def __call__(self) -> pd.DataFrame:
        return get_sync(self.graph, self.key)  # type: ignore[arg-type]  # a dask key; dask's annotation is narrower


def _data(source, encoder: Encoder) -> EncodedData:
    """The encoded partition: kept in memory (``persist``) or read and encoded now."""
    if isinstance(source, EncodedData):
        return source
    return encoder.transform(source())


def _on_partition(function, source, encoder, *args):
    return function(_data(source, encoder), *args)


def _on_table(function, source, *args):
    return function(source(), *args)


class _Partitions:
    """The partitions of one fit, in global row order, and the ways to map over them.

    ``sources[p]`` is a future of partition ``p``: a :class:`_Source` that
    reads it (encoded again by each task) or, with ``persist``, the encoded
    partition itself. Tasks are submitted as futures (no graph optimisation
    per call); per-partition state (labels, distances) stays in worker memory
    as futures, next to its partition; the driver holds only what the
    methods return.
    """

    def __init__(self, client: Client, table, *, chunk_rows: int):
        self.client = client
        self.chunk_rows = chunk_rows
        self.lookahead = max(1, sum(client.nthreads().values()))
        # Keys unique across clients that share a scheduler; a counter within the fit.
        self._name = f"craft-{uuid.uuid4().hex[:16]}"
        self._count = itertools.count()
        self.sources = [self.keep(_Source.of(part), name="source") for part in table.to_delayed()]
        self.n_partitions = len(self.sources)
        self._encoder = None

    def fit_encoder(self, numeric: list, categorical: list, standardize: bool, missing: str, *, persist: bool) -> Encoder:
        """Learn the encoder with two reductions; then the partitions are encoded with it."""
        describe = self._submit_all(
            _on_table, self._constant(_describe), self.sources, self._constant(numeric), self._constant(categorical),
            name="describe",
        )
        description = self.reduce(describe, _combine_descriptions)
        self.sizes = description.n_rows
        self.starts = np.concatenate([[0], np.cumsum(self.sizes)[:-1]]).astype(np.int64)
        self.n_samples = int(self.sizes.sum())
        encoder = _encoder_from(description, numeric, categorical, standardize, missing)
        moments = self._submit_all(
            _on_table, self._constant(_moments), self.sources, self._constant(numeric), self._constant(categorical),
            self._constant(encoder.impute_), name="moments",
        )
        _finish_encoder(encoder, self.reduce(moments, _combine_moments), description.observed)
        self._encoder = self.keep(encoder, name="encoder")
        if persist:
            self.sources = self._submit_all(_data, self.sources, self._constant(self._encoder), name="encoded")
        # No rows, but the global tables (eta_0, variances, level offsets) that the driver's updates read.
        self.template = encoder.template()
        return encoder

    @property
    def n_features(self) -> int:
        return self.template.n_features

    # -- submitting ----------------------------------------------------
    def _keys(self, name: str, n: int) -> list[str]:
        return [f"{name}-{self._name}-{next(self._count)}" for _ in range(n)]

    def _submit_all(self, function, *per_partition, name=None) -> list:
        """``function(*(arg[p] for arg in per_partition))`` for every partition, as futures."""
        keys = self._keys(name or function.__name__, self.n_partitions)
        return self.client.map(function, *per_partition, key=keys, pure=False)

    def keep(self, value, *, name: str):
        """A future of ``value`` that the cluster can recompute.

        Not ``client.scatter``: scattered data lives only on the worker that
        holds it and is lost with that worker ("already forgotten"). A task
        that returns the value carries the value in its definition, so the
        scheduler reruns it on another worker, and the tasks that depend on
        it (a partition read from its source, then its labels) are
        recomputed from the source partitions.
        """
        (key,) = self._keys(name, 1)
        return self.client.submit(_identity, value, key=key, pure=False)

    def _constant(self, value) -> list:
        return [value] * self.n_partitions

    def map(self, function, *per_partition, context=None) -> list:
        """``function(data_p, *(arg[p] for arg in per_partition), context)`` on every partition.

        Every argument is a list with one item per partition. ``context`` is
        sent once and shared by all tasks. Returns one future per partition.
        """
        shared = self.keep(context, name="context") if context is not None else None
        return self._submit_all(
            _on_partition, self._constant(function), self.sources, self._constant(self._encoder), *per_partition,
            self._constant(shared), name=function.__name__,
        )

    def submit(self, function, p: int, *args):
        """``function(data_p, *args)`` for one partition; a future."""
        (key,) = self._keys(function.__name__, 1)
        return self.client.submit(_on_partition, function, self.sources[p], self._encoder, *args, key=key, pure=False)

    def apply(self, function, *args):
        """``function(*args)`` on a worker (arguments may be futures); a future."""
        (key,) = self._keys(function.__name__, 1)
        return self.client.submit(function, *args, key=key, pure=False)

    def pick(self, futures: list, index: int) -> list:
        """Item ``index`` of every tuple future, computed where the tuple lives."""
        keys = self._keys(f"item{index}", len(futures))
        return self.client.map(operator.getitem, futures, [index] * len(futures), key=keys, pure=False)

    def reduce(self, futures: list, combine):
        """``combine`` over the futures' values in order, in a fixed tree on the workers; the result."""
        return self.tree(futures, combine).result()

    def tree(self, futures: list, combine):
        """The future of a fixed reduction tree (the same sums whatever the scheduling)."""
        level = list(futures)
        while True:  # at least one combine, which also unpacks a single partition's result
            groups = [level[i : i + _FAN_IN] for i in range(0, len(level), _FAN_IN)]
            keys = self._keys(combine.__name__, len(groups))
            level = [self.client.submit(combine, *group, key=key, pure=False) for group, key in zip(groups, keys, strict=True)]
            if len(level) == 1:
                return level[0]

    def gather(self, futures):
        return self.client.gather(futures)

    # -- rows ----------------------------------------------------------
    def owner(self, rows):
        """Partition of every global row (empty partitions are skipped)."""
        return np.searchsorted(self.starts + self.sizes, rows, side="right")

    def rows(self, rows) -> EncodedData:
        """The encoded rows (global indices, increasing), gathered on the driver."""
        rows = np.asarray(rows, dtype=np.int64)
        owner = self.owner(rows)
        futures = [self.submit(_take, int(p), rows[owner == p] - self.starts[p]) for p in np.unique(owner)]
        return _concat(self.template, self.gather(futures))

    def sample(self, n_rows: int, rng: np.random.Generator) -> EncodedData:
        """A uniform sample of ``n_rows`` rows (in row order), gathered on the driver; the in-memory draw."""
        return self.rows(np.sort(rng.choice(self.n_samples, size=n_rows, replace=False)))

    def label_series(self, labels: list):
        """The labels futures as a dask Series indexed by global row position."""
        pieces = [delayed(_label_piece, pure=False)(future, int(start)) for future, start in zip(labels, self.starts, strict=True)]
        meta = pd.Series(np.zeros(0, dtype=np.int64), name="cluster")
        divisions = None
        if (self.sizes > 0).all():
            divisions = tuple(int(s) for s in self.starts) + (self.n_samples - 1,)
        return dd.from_delayed(pieces, meta=meta, divisions=divisions, verify_meta=False)

    # -- the engine's backend interface (see craft._engine.InMemory) ----
    def seed_row(self, row: int):
        owner = int(self.owner(row))
        return owner, row - int(self.starts[owner]), self.rows([row])

    def lower(self, state, seed, weights: np.ndarray, opts: _engine.Options, floor: float):
        """Each partition lowers its rows' best distances with the seed's cluster (one map)."""
        owner, local_row, seed_data = seed
        n = self.n_partitions
        states = self.map(_seed_update, state[0] if state is not None else [None] * n, [p == owner for p in range(n)],
                          [(local_row, seed_data)] * n, context=_SeedContext(weights, opts, floor))
        totals = self.gather(self.pick(states, 1))
        return (states, totals), int(sum(count for count, _, _ in totals))

    def draw(self, state, uniform: float, floor: float):
        """The engine's proportional draw, its cumulative sum carried from partition to partition."""
        states, totals = state
        starts, carry = [], 0.0
        for count, total, _ in totals:
            starts.append(carry)
            if count:
                carry = carry + total
        target = uniform * carry
        owner = next((p for p, (count, total, _) in enumerate(totals) if count and starts[p] + total > target), None)
        if owner is None:  # the end of the cumulative sum: the last row beyond
            owner = max(p for p, (count, _, _) in enumerate(totals) if count)
        row, data = self.submit(_seed_resolve, owner, states[owner], starts[owner], target, floor).result()
        return owner, row, data

    def farthest(self, state):
        """The first partition's farthest row among the partitions holding the maximum, as np.argmax."""
        _, totals = state
        values = np.array([value for _, _, (value, _, _) in totals])
        owner = int(np.argmax(values))
        _, _, (value, row, data) = totals[owner]
        return (owner, row, data), float(value)

    def initial_labels(self) -> list:
        return [None] * self.n_partitions  # the engine starts from all zeros

    def assign(self, clusters: _engine.Clusters, opts: _engine.Options, rng: np.random.Generator, labels: list):
        proposed, summary, clusters = _assignment_pass(self, clusters, opts, rng, labels)
        settled, stats, n_changed, kept = _compact(self, proposed, summary, labels)
        return settled, stats, n_changed, clusters.n_clusters, kept

    def nearest(self, clusters: _engine.Clusters, opts: _engine.Options, labels: list):
        outputs = self.map(_final_partition, labels, context=_FinalContext(clusters, opts))
        summary = self.reduce(outputs, _combine_summaries)
        return _compact(self, self.pick(outputs, 1), summary, labels)

    def kept_labels(self, labels: list) -> None:
        return None  # the labels stay on the workers

    def one_cluster_statistics(self) -> _engine.Statistics:
        return self.reduce(self.map(_one_cluster_summary), _combine_summaries).stats

    def nearest_cost_total(self, clusters: _engine.Clusters, terms: PriorTerms) -> float:
        return float(np.sum(self.gather(self.map(_cost_sum, context=_NearestContext(clusters, terms)))))

    def distinct_rows(self, at_most: int) -> int:
        """Each partition keeps its ``at_most`` smallest distinct row digests, and so does every sum of the tree:
        the count is exact below ``at_most``, and a truncated piece already holds ``at_most``."""
        return self.reduce(self.map(_distinct_digests, context=at_most), _union_digests).digests.size


def _identity(value):
    return value


def _take(data: EncodedData, rows: np.ndarray) -> EncodedData:
    return data.take(rows)


def _concat(template: EncodedData, pieces: list) -> EncodedData:
    if not pieces:
        return template
    observed = None
    if any(piece.observed is not None for piece in pieces):
        observed = np.vstack([
            np.ones(piece.numeric.shape, dtype=bool) if piece.observed is None else piece.observed for piece in pieces
        ])
    return dataclasses.replace(
        template,
        numeric=np.vstack([piece.numeric for piece in pieces]),
        observed=observed,
        codes=np.vstack([piece.codes for piece in pieces]),
    )


def _label_piece(labels: np.ndarray, start: int) -> pd.Series:
    return pd.Series(labels.astype(np.int64), index=pd.RangeIndex(start, start + labels.size), name="cluster")


# ----------------------------------------------------------------------
# Driver side: the partition-specific steps of the engine's pass, one map at a
# time. The run itself (seeding, passes, updates, objective, history, the last
# assignment) and the λ heuristics are craft._engine's, which drive
# _Partitions through the engine's backend interface.


def _assignment_pass(parts: _Partitions, clusters: _engine.Clusters, opts: _engine.Options, rng, previous):
    """:func:`craft._engine.assignment_pass` over the partitions.

    Returns the labels (futures), their summary and the clusters (old, then opened).
    """
    threshold = opts.threshold(parts.n_features)
    states = parts.map(_pass_partition, previous, context=_PassContext(clusters, opts, threshold, parts.chunk_rows))
    summary = parts.reduce(states, _combine_summaries)
    n_candidates = summary.n_candidates
    if n_candidates.sum() == 0:
        return parts.pick(states, 2), summary, clusters
    walk = _walk(parts, clusters, opts, rng, n_candidates, states)
    light = copy.copy(walk)
    light.rng = None  # type: ignore[assignment]  # the workers only assign; the random stream stays on the driver
    n_total = clusters.n_clusters + len(walk.rows)
    outputs = parts.map(
        _assign_partition, states, previous, list(parts.starts), context=_AssignContext(light, clusters, n_total)
    )
    summary = parts.reduce(outputs, _combine_summaries)
    assert walk.opened is not None  # the first candidate is beyond every old cluster, so it opened one
    return parts.pick(outputs, 1), summary, clusters.stack(walk.opened)


def _walk(parts: _Partitions, clusters, opts, rng, n_candidates, states) -> _engine.OpeningWalk:
    """The ordered walk: proposals are screened on the workers, validated here in global row order.

    The first proposals of the next ``lookahead`` partitions are screened
    while the driver validates the current one, against the clusters opened
    when they were requested (OCC: a stale screen only lets more rows
    through; the walk checks every row against all clusters opened so far).
    The driver so holds at most ``1 + lookahead`` proposals of at most
    ``chunk_rows`` rows.
    """
    walk = _engine.OpeningWalk(clusters, opts, rng)
    threshold = opts.threshold(parts.n_features)
    todo = [p for p in range(parts.n_partitions) if n_candidates[p] > 0]
    pending: dict[int, Future] = {}
    shared = {"n_opened": -1, "future": None}

    def context():
        n_opened = 0 if walk.opened is None else walk.opened.n_clusters
        if shared["n_opened"] != n_opened:
            ctx = _WalkContext(walk.opened, opts.terms, threshold, parts.chunk_rows)
            shared["future"] = parts.keep(ctx, name="walk-context")
            shared["n_opened"] = n_opened
        return shared["future"]

    def visit(p, proposal: _Proposal):
        if proposal.rows.size:
            walk.visit(proposal.data, parts.starts[p] + proposal.rows, proposal.best_old)

    for index, p in enumerate(todo):
        for q in todo[index : index + 1 + parts.lookahead]:
            if q not in pending:
                proposal = parts.apply(operator.getitem, states[q], 3)
                pending[q] = parts.apply(_screen, proposal, context())
        visit(p, pending.pop(p).result())
        position = min(int(n_candidates[p]), parts.chunk_rows)
        while position < n_candidates[p]:
            best_old = parts.apply(operator.getitem, states[p], 1)
            proposal, position = parts.submit(_propose, p, best_old, position, context()).result()
            visit(p, proposal)
    return walk


def _compact(parts: _Partitions, labels: list, summary: _Summary, previous: list):
    """:func:`craft._engine.compact_kept` over the partitions: drop empty clusters, renumber in order.

    Returns ``(labels, statistics, n_changed, kept)``, ``kept`` the numbers of the clusters kept.
    """
    stats = summary.stats
    present = stats.counts > 0
    if present.all():
        return labels, stats, summary.n_changed, np.arange(present.size)
    outputs = parts._submit_all(_relabel, labels, previous, parts._constant(present))
    n_changed = int(sum(parts.gather(parts.pick(outputs, 1))))
    stats = _engine.Statistics(*(getattr(stats, field.name)[present] for field in dataclasses.fields(stats)))
    return parts.pick(outputs, 0), stats, n_changed, np.flatnonzero(present)
