"""The runs of one fit, on either backend: λ from ``k``, the restarts, a warm run, the noise threshold, and the
run kept (:class:`_FitRuns`, a base of ``CRAFT``; ``DaskCRAFT`` drives its partitions through the same methods).

Nothing here stores a fitted attribute: ``CRAFT._fit_runs`` returns the kept
run and its λ, and the estimator's ``_store`` sets the fit from them.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from . import _engine
from ._lambda_search import SearchStep
from ._params import _LIMIT_RULE, cluster_limit
from ._threads import _Abandoned, _FitsAhead, _in_order, _threads_for
from ._warm_start import _WarmStart
from .encoding import EncodedData
from .exceptions import CraftInputError

#: Above this many rows the λ search and the restarts run on a uniform sample
#: of this many rows, and only the best run is iterated on the whole table: a
#: pass costs time in proportion to the rows, while λ and the choice among
#: restarts settle on a sample (docs/numerics.md, docs/RESULTS.md "Whole fits
#: at scale"). Both backends read it (``CRAFT._fit_runs``).
SEARCH_ROWS = 50_000


class _FitRuns:
    """The methods that run a fit's runs and choose the one kept; ``CRAFT`` inherits them.

    They read the estimator's parameters (declared here for the type
    checker; ``CRAFT.__init__`` sets them) and the callback of the fit in
    progress.
    """

    k: Any
    k_method: Any
    lam: Any
    m: Any
    n_init: Any
    max_iter: Any
    noise: Any
    n_jobs: Any

    #: The callback of the fit in progress (see :meth:`_reporting`); never a parameter, so a model pickles.
    _callback: Callable[[_engine.IterationRecord], object] | None = None

    @contextlib.contextmanager
    def _reporting(self, callback):
        """``callback`` (checked by :func:`_check_callback`) receives every iteration record while the block runs,
        and is forgotten after it."""
        self._callback = callback
        try:
            yield
        finally:
            del self._callback

    def _fit_runs(self, backend: _engine.Backend, options: _engine.Options,
                  rng: np.random.Generator, *, warm: _WarmStart | None = None) -> tuple[_engine.RunResult, float]:
        """The kept run and the lambda it used, on either backend (nothing is stored on ``self``).

        Up to ``SEARCH_ROWS`` rows the λ search and the restarts run on every
        row. Above, they run on one uniform sample of ``SEARCH_ROWS`` rows
        (drawn in row order from a child stream of the first seed's), and
        the kept run's clusters then start the passes over every row; one
        run at a given λ has nothing to choose and runs on every row.
        With ``warm``, one run from the previous partition instead
        (:meth:`_warm_run`); ``warm.used`` becomes False where it falls back.
        """
        if warm is None and options.noise and self.lam is None:
            return self._noise_fit(backend, options, rng)
        n_init = 10 if self.n_init == "auto" else self.n_init
        seeds = rng.integers(np.iinfo(np.int32).max, size=n_init)
        n_samples = backend.n_samples
        # Only the exact-k search pays for an unreachable k (dozens of fits); farthest-first warns.
        searching = self.k is not None and self.k_method == "search"
        target = self._checked_target(n_samples, backend.distinct_rows(self.k) if searching else None)
        if warm is not None:
            found = self._warm_run(backend, options, warm, seeds[0], target)
            if found is not None:
                self._warn_about(found[0], target, found[1])
                return found
            if options.pinned is not None and options.pinned.per_cluster:
                raise CraftInputError(
                    f"No λ gives k={target} clusters from the previous fit's clusters, and a cold fit does not have "
                    "them, so the pins on its clusters cannot apply: pin columns in every cluster (None), or ask for "
                    "a k the warm fit reaches."
                )
            warm.used = False
            if options.noise and self.lam is None:
                return self._noise_fit(backend, options, rng)
        # Links name rows of the whole table, so a linked fit never runs on a sample.
        sampled = n_samples > SEARCH_ROWS and options.links is None
        if sampled and (searching or len(seeds) > 1):
            search: EncodedData | _engine.Backend = backend.sample(
                SEARCH_ROWS, np.random.default_rng(np.random.SeedSequence(int(seeds[0])).spawn(1)[0])
            )
        else:
            search = backend
        runs: list[tuple[float, _engine.RunResult]] = []
        if self.lam is not None:
            lam = float(self.lam)
        elif target is None or options.noise:
            # With noise=True (trimmed=False: _noise_fit's seeded start) a target k fixes the seeds (and so K);
            # lambda then only sets the trimming threshold. (With lam given, lam is the price of a noise row too.)
            lam = _engine.default_lambda(backend, options)
        elif self.k_method == "farthest_first":
            lam = _engine.farthest_first_lambda(backend, target, options, np.random.default_rng(seeds[0]))
        else:
            lam, runs = self._search_lambda(search, options, target, seeds[0])
        lam = _checked_lambda(lam, self, target)
        options = _replace(options, lam=lam, max_clusters=_run_limit(n_samples, target))
        reused = [result for tried, result in runs if tried == lam][:1]
        # Restarts to choose among, or a search run to reuse (restart 0), run
        # where the search ran; a single run at a given λ runs on every row.
        pool = search if (reused or len(seeds) > 1) else backend
        restarts = self._restarts(pool, options, seeds, range(len(reused), len(seeds)), n_samples, target)
        results = reused + [result for result in restarts if result is not None]
        if not results:
            raise self._too_many_clusters(options.max_clusters, n_samples, lam)
        best = min(range(len(results)), key=lambda i: _ranking(results[i], target))
        result = results[best]
        if pool is not backend:
            # The kept run's clusters start the passes over every row.
            result = self._bounded_run(backend, options, seeds[best], best, n_samples, None, initial=result.clusters)
        self._warn_about(result, target, lam)
        return result, lam

    def _restarts(self, pool, options: _engine.Options, seeds: np.ndarray, restarts: range, n_samples: int,
                  target) -> list[_engine.RunResult | None]:
        """Every restart's run (None: dropped by :meth:`_bounded_run`), in restart order, on ``n_jobs`` threads.

        Each restart is a function of its own seed, so the list, and the run
        the caller keeps, do not depend on the threads. The compiled pass
        releases Python's lock, so runs overlap on several cores. A restart
        that raises (a refused fit, or the callback stopping the fit) stops
        the restarts not yet started; the first error in restart order is
        raised. Partitions on a Dask cluster run one restart at a time: the
        cluster already spreads each pass.
        """
        def one(restart: int) -> _engine.RunResult | None:
            return self._bounded_run(pool, options, seeds[restart], restart, n_samples, target)

        return _in_order(one, restarts, min(_threads_for(pool, self.n_jobs), len(restarts)))

    def _warm_run(self, backend: _engine.Backend, options: _engine.Options, warm: _WarmStart, seed,
                  target) -> tuple[_engine.RunResult, float] | None:
        """One run from the previous partition at the new parameters, and its λ; None where k is not found.

        The previous fit's statistics give its clusters recomputed under the
        new options (means, variances, level distributions and the selection
        at the new m, ρ, budget...), which start the first pass. λ is
        ``lam``, the default λ, farthest-first's, or with ``k`` and the
        search the exact-k search started at the previous ``lam_``, every
        run of it starting from that partition: usually the first λ tried
        gives k. Runs on every row (there is nothing to choose among).

        A pass opens clusters and empties them but never pools two, so a
        search from a partition with more clusters than ``k`` may never
        reach ``k``. The start then pools its cheapest pairs
        (:func:`craft._engine.cheapest_merge`) down to ``k``, and the search
        runs again from there: the other clusters keep their rows, where a
        cold fit would draw a new partition. Not with pins, links or noise
        (their clusters are the person's or the threshold's).
        """
        start_pins = None
        if options.pinned is not None:
            start_pins = options.pinned.start(warm.statistics.counts.shape[0], backend.template.n_features)
        initial = _engine.clusters_from_statistics(backend.template, warm.statistics, options, start_pins)
        pooling = options.pinned is None and options.links is None and not options.noise
        if self.lam is not None:
            lam = float(self.lam)
        elif self.noise:
            # The previous fit's noise threshold (its lam_): the refined fit finds this fit's own (_noise_fit).
            lam = warm.lam
        elif target is None:
            lam = _engine.default_lambda(backend, options)
        elif self.k_method == "farthest_first":
            lam = _engine.farthest_first_lambda(backend, target, options, np.random.default_rng(seed))
        else:
            found = self._warm_search(backend, options, target, seed, warm.lam, initial)
            if found is None and pooling and target < warm.statistics.counts.shape[0]:
                stats = warm.statistics
                searching = _replace(options, lam=warm.lam)
                while stats.counts.shape[0] > target:
                    merge = _engine.cheapest_merge(backend.template, stats, searching)
                    if merge is None:
                        return None
                    stats = _engine.merged_statistics(stats, merge[0], merge[1])
                initial = _engine.clusters_from_statistics(backend.template, stats, options)
                found = self._warm_search(backend, options, target, seed, warm.lam, initial)
            return found
        lam = _checked_lambda(lam, self, target)
        run_options = _replace(options, lam=lam, max_clusters=_run_limit(backend.n_samples, target))
        result = self._bounded_run(backend, run_options, seed, 0, backend.n_samples, target, initial=initial)
        if result is None:
            return None
        return result, lam

    def _warm_search(self, backend: _engine.Backend, options: _engine.Options, target: int, seed, start: float,
                     initial: _engine.Clusters) -> tuple[_engine.RunResult, float] | None:
        """The exact-k search from ``start``, every run from ``initial``: its run with k clusters and λ, or None."""
        lam, runs = self._search_lambda(backend, options, target, seed, start=start, initial=initial)
        result = next((run for tried, run in runs if tried == lam), None)
        if result is None or result.n_clusters != target:
            return None
        return result, lam

    def _noise_fit(self, backend: _engine.Backend, options: _engine.Options,
                   rng: np.random.Generator) -> tuple[_engine.RunResult, float]:
        """``noise=True`` without ``lam``: the fit asked for, then trimmed at the noise threshold of its clusters.

        1. Two starts: the fit as asked with ``noise=False`` (``k``: the
           exact-k search; neither: the default λ), whose clusters are those
           the user asked for, a small real segment included; and the
           trimmed fit of seeds of its own (k craft++ seeds weighted by their
           trimmed cost at the default λ), which keeps a few far rows from
           making one of the k clusters.
        2. A robust core: the passes from each start, trimming every row
           costing more than the background's typical row (the default λ,
           the mean cost of a row under one cluster), so that noise absorbed
           in step 1 stops inflating the clusters' variances.
        3. The threshold of the clusters themselves
           (:func:`_engine.noise_threshold`: a row is noise when every
           cluster's own model draws it with probability below
           ``_engine.NOISE_ALPHA``), the passes run again from the core at
           it, and again from their clusters until it settles (at most
           ``NOISE_ROUNDS``), as the reweighting step of a robust estimator
           (MCD's) takes back the rows its core's model accepts.
        4. Of the two, the one of lower trimmed objective at the larger of
           their thresholds, settled again (step 3).

        The λ returned (``lam_``) is the one whose ``λ + D F0`` is that
        threshold: under ``noise=True`` it prices a noise row (and, in the
        objective, a cluster). ``docs/numerics.md`` (*The noise threshold*).
        """
        off = _replace(options, noise=False)
        result, _ = self._fit_runs(backend, off, rng)
        seed = int(rng.integers(np.iinfo(np.int32).max))
        floor = backend.template.n_features * options.terms.f0

        def at(threshold: float) -> _engine.Options:
            return _replace(options, lam=max(float(threshold) - floor, _MIN_NOISE_LAMBDA))

        background = at(_engine.default_lambda(backend, options))
        settled = float("nan")
        for refit in range(NOISE_REFITS + 1):
            try:
                result = self._run(backend, background, seed, 0, initial=result.clusters)
            except _engine.EveryRowNoise:
                pass  # the background's typical cost is beyond every row: no core to take, start from the fit
            threshold = None
            for _ in range(NOISE_ROUNDS):
                found = _engine.noise_threshold(backend.template, result.clusters, result.stats, options,
                                                np.random.default_rng(seed))
                if threshold is not None and abs(found - threshold) <= 1e-3 * abs(threshold):
                    break  # the clusters fitted at this threshold give it back: it has settled
                threshold = found
                result = self._run(backend, at(threshold), seed, 0, initial=result.clusters)
            assert threshold is not None
            settled = threshold
            kept = _rows_kept(backend, result, at(settled).threshold(backend.template.n_features), options.terms)
            if kept is None or refit == NOISE_REFITS:
                break  # (the last round is a trimmed fit of every row, never a refit on some)
            # A cluster of far rows (one of the k the fit asked for made of outliers) is dissolved and the k
            # clusters fitted again on the other rows, so that noise does not count among the clusters asked for.
            try:
                assert isinstance(backend, _engine.InMemory)  # _rows_kept keeps none on another backend
                result, _ = self._fit_runs(_engine.InMemory(backend.data.take(kept)), off, rng)
            except CraftInputError:
                break  # too few distinct rows left for k: keep the trimmed fit
        lam = at(settled).lam
        self._warn_about(result, self.k, lam)
        return result, lam

    def _warn_about(self, result: _engine.RunResult, target, lam: float) -> None:
        """Warn when the kept run missed the asked k or did not converge."""
        if target is not None and result.n_clusters != target:
            warnings.warn(
                f"k={target} clusters were not reachable (method {self.k_method!r}); the fit has "
                f"n_clusters_={result.n_clusters} with lam_={lam:.6g}.",
                UserWarning,
                stacklevel=4,
            )
        if not result.converged:
            warnings.warn(
                f"CRAFT did not converge in max_iter={self.max_iter} passes; raise max_iter.", ConvergenceWarning, stacklevel=4
            )

    def _checked_target(self, n_samples: int, n_distinct: int | None = None):
        """``k``, refused beyond the rows, :func:`cluster_limit` or the distinct rows (when known)."""
        if self.k is None:
            return None
        if self.k > n_samples:
            raise CraftInputError(f"k={self.k} exceeds the number of rows, n_samples={n_samples}.")
        limit = cluster_limit(n_samples)
        if self.k > limit:
            raise CraftInputError(
                f"k={self.k} is more clusters than a fit on {n_samples} rows may have: at most {limit} ({_LIMIT_RULE}); "
                "with more, most clusters hold a single row. "
                f"Ask for k <= {limit}."
            )
        if n_distinct is not None and self.k > n_distinct:
            raise CraftInputError(
                f"k={self.k} exceeds the {n_distinct} distinct rows of the table: identical rows always share a "
                f"cluster, so no lambda gives k clusters (the search would try dozens of fits). Ask for "
                f"k <= {n_distinct}."
            )
        return self.k

    def _bounded_run(self, data, options, seed, restart, n_samples: int, target, *, initial=None):
        """One restart; one that opens more than ``options.max_clusters`` is refused (λ given or default)
        or, where k is the target, dropped (it is far from k; another restart or the search's run stands)."""
        try:
            return self._run(data, options, seed, restart, initial=initial)
        except _engine.TooManyClusters as exceeded:
            if target is not None:
                return None
            raise self._too_many_clusters(exceeded.args[0], n_samples, options.lam) from None

    def _too_many_clusters(self, n_clusters: int | None, n_samples: int, lam: float) -> CraftInputError:
        """The error of a fit whose λ opens more clusters than :func:`cluster_limit` allows."""
        source = f"lam={lam:.3g}" if self.lam is not None else f"the lambda derived ({lam:.3g})"
        return CraftInputError(
            f"{source} opens more than {cluster_limit(n_samples)} clusters on {n_samples} rows (the most a fit may "
            f"have: {_LIMIT_RULE}): nearly every row would be a cluster of "
            "its own, and every pass would cost rows x clusters x features. "
            + ("Ask for a smaller k." if self.k is not None else "Raise lam, or give k instead.")
        )

    def _run(self, data, options, seed, restart, *, initial: _engine.Clusters | None = None):
        return _engine.run(
            data, options, np.random.default_rng(seed), restart=restart, callback=self._callback, initial=initial
        )

    def _search_lambda(
        self, data: EncodedData | _engine.Backend, options: _engine.Options, target: int, seed, *,
        start: float | None = None, initial: _engine.Clusters | None = None,
    ) -> tuple[float, list[tuple[float, _engine.RunResult]]]:
        """Lambda whose fit (first seed) has exactly ``target`` clusters, if one is found.

        Starts from the farthest-first lambda (or ``start``), brackets by
        doubling or halving (K falls as lambda grows, though not strictly),
        then bisects on log(lambda) (:class:`craft._lambda_search.SearchStep`).
        Every run starts from its seeding, or from ``initial`` (a warm
        start). Every evaluated fit is kept so the caller can reuse it; the
        kept λ is the best of them by :func:`_ranking`.

        With more than one thread (``n_jobs``, in memory), the fits the
        search would ask for next, for either outcome of the current one,
        run ahead on the spare threads (:class:`_FitsAhead`). Each fit is a
        function of its λ alone, and only the fits the sequential search asks
        for are kept, in its order: the result does not depend on the threads.
        """
        # A lambda that is far too small opens hundreds of clusters; knowing
        # that K exceeds the target is enough, so such runs stop early.
        capped = _replace(options, max_clusters=_run_limit(data.n_samples, target))

        def evaluate(lam: float, stop: threading.Event | None = None) -> tuple[int, _engine.RunResult | None]:
            try:
                return self._search_run(data, _replace(capped, lam=lam), seed, initial, stop)
            except _engine.TooManyClusters as exceeded:
                return exceeded.args[0], None

        if start is None:
            start = _engine.farthest_first_lambda(data, target, options, np.random.default_rng(seed))
        if not (np.isfinite(start) and start > 0):
            # No row at a positive distance (possible above m = 0.5, where F_Delta < 0):
            # the search only needs somewhere to start.
            start = _checked_lambda(_engine.default_lambda(data, options), self, None)
        threads = _threads_for(data, self.n_jobs)
        tried: list[tuple[float, _engine.RunResult]] = []
        step = SearchStep("start", float(start))
        with _FitsAhead(evaluate, threads) as fits:
            while not step.done:
                fits.plan(step.lam, [following.lam for following in step.successors(target)])
                found, result = fits.result(step.lam)
                if result is not None:
                    tried.append((step.lam, result))
                step = step.after(found, target)
        if not tried:
            return step.lam, tried
        lam, _ = min(tried, key=lambda item: _ranking(item[1], target))
        return lam, tried

    def _search_run(self, data, options: _engine.Options, seed, initial, stop: threading.Event | None):
        """One run of the λ search: (K, result); a run run ahead stops at its next pass once ``stop`` is set."""
        callback = self._callback
        if stop is not None:
            def callback(record, report=self._callback):
                if stop.is_set():
                    raise _Abandoned
                if report is not None:
                    report(record)
        result = _engine.run(data, options, np.random.default_rng(seed), restart=0, callback=callback, initial=initial)
        return result.n_clusters, result


def _ranking(result: _engine.RunResult, target):
    """Sort key for runs: K nearest the target, then objective, then numeric normaliser (ties: the first run)."""
    distance = abs(result.n_clusters - target) if target is not None else 0
    # Objectives equal up to rounding are ties (a selected numeric feature adds
    # n_k/2 whatever the partition while above the variance floor), so they
    # are compared at 10 significant digits. So is the normaliser: two restarts
    # that reach one partition, numbered in two orders, differ there only in
    # the last bits, which differ again between backends (a Dask sum runs over
    # partitions); the first such restart is kept on every backend.
    return distance, float(f"{result.objective:.10g}"), float(f"{result.numeric_nll:.10g}")


def _run_limit(n_samples: int, target) -> int | None:
    """Most clusters a restart may open: :func:`cluster_limit`, or with a target k as many as the λ search allows.

    None where the limit is every row (small tables): a pass counts the
    clusters it opens before emptied ones are dropped, which may then
    exceed the rows without the fit being degenerate.
    """
    if target is not None:
        return max(2 * target, target + 10)
    limit = cluster_limit(n_samples)
    return None if limit >= n_samples else limit


#: Rounds of :meth:`CRAFT._noise_fit`'s threshold at most (it settles in two or three on the planted tables).
NOISE_ROUNDS = 6
#: Refits of :meth:`CRAFT._noise_fit` on the rows of the clusters worth their price, at most.
NOISE_REFITS = 3
#: The least λ of a noise threshold below D F0 (λ must be > 0): the threshold is then D F0.
_MIN_NOISE_LAMBDA = 1e-9
#: Above this share of noise rows a fit with noise=True warns (docs/numerics.md, *The noise threshold*).
NOISE_WARN_SHARE = 0.10


def _rows_kept(backend, result: _engine.RunResult, threshold: float, terms) -> np.ndarray | None:
    """The rows of the clusters worth their price, when a cluster is not (None when every cluster is, or on Dask).

    A cluster whose rows cost more in it than as noise (``sum of d_nk >
    (n_k - 1) T``: the cluster itself costs ``T``, each noise row ``T``) is
    not worth keeping: a lone far row, or far rows that lie far from each
    other. Only in memory: the refit on the other rows needs them.
    """
    if not isinstance(backend, _engine.InMemory) or not isinstance(result.labels, np.ndarray):
        return None
    labels = np.asarray(result.labels)
    clustered = labels >= 0
    best, _ = _engine.nearest_cluster(backend.data, result.clusters, terms)
    sizes = np.bincount(labels[clustered], minlength=result.n_clusters)
    costs = np.bincount(labels[clustered], weights=best[clustered], minlength=result.n_clusters)
    failing = np.flatnonzero((sizes > 0) & (costs > (sizes - 1) * threshold))
    if not failing.size:
        return None
    # All but the largest such cluster when several fail: clusters of far rows are small, while a cluster that
    # merged two groups (it fails for being too wide) is found again by the refit once the far rows are out.
    dissolved = failing if failing.size == 1 else np.delete(failing, np.argmax(sizes[failing]))
    kept = np.flatnonzero(clustered & ~np.isin(labels, dissolved))
    return kept if kept.size > result.n_clusters else None


def noise_share_note(n_noise: int, n_rows: int, smallest: int) -> str:
    """The warning of a fit whose noise rows exceed :data:`NOISE_WARN_SHARE` of the table, in words."""
    larger = (f", more than the smallest cluster ({smallest:,} rows), so a real segment may be among them"
              if n_noise > smallest else "")
    return (f"noise=True left {n_noise:,} of {n_rows:,} rows ({n_noise / n_rows:.0%}) in no cluster, above "
            f"{NOISE_WARN_SHARE:.0%}{larger}: look at them (labels_ == -1) before reading them as outliers.")


def _replace(options: _engine.Options, **changes) -> _engine.Options:
    return dataclasses.replace(options, **changes)


def _checked_lambda(lam: float, model: _FitRuns, target) -> float:
    """A derived lambda, refused unless finite and > 0 (the engine never sees another)."""
    if np.isfinite(lam) and lam > 0:
        return float(lam)
    if target is None:
        raise CraftInputError(
            f"The default lambda (the mean cost of a row under one cluster) is {lam:.6g} <= 0 for this "
            f"table at m={model.m!r}: every used column is constant; give lam > 0 or use other columns."
        )
    raise CraftInputError(
        f"Farthest-first found no row at a positive CRAFT distance from the first (for k={target}, m={model.m!r}): "
        "the rows are alike under this m; give lam > 0."
    )
