"""The Dask backend on partitioned Parquet, next to the in-memory engine.

Writes a synthetic mixed table (planted clusters over 20 numeric and 20
categorical columns by default) as Parquet files, partition by partition (the
whole table never exists in one process), fits it with ``DaskCRAFT`` on a
``LocalCluster`` of worker processes, and fits a smaller in-memory table of
the same kind with ``CRAFT``. It reports seconds per pass, the time of the
encoder's two reductions and of the seeding, and the peak resident memory of
every worker (sampled by distributed's system monitor every 0.5 s) and of the
driver.

Usage::

    python benchmarks/bench_dask.py                       # 10,000,000 rows, 40 partitions
    python benchmarks/bench_dask.py --quick               # 200,000 rows, under a minute
    python benchmarks/bench_dask.py --rows 2000000 --write-results

``--write-results`` replaces the "## Dask backend" section of
``docs/RESULTS.md`` (the other sections are left as they are).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import craft.distributed as craft_distributed  # noqa: E402
from benchmarks.common import machine, quick_or_full_main  # noqa: E402
from craft import CRAFT, _engine  # noqa: E402

N_LEVELS = 5
TITLE = "Dask backend"


# ----------------------------------------------------------------------
# Data


def plan(n_numeric: int, n_categorical: int, n_clusters: int, seed: int) -> dict:
    """Cluster means and dominant levels, the same for every partition."""
    rng = np.random.default_rng(seed)
    return {
        "means": rng.normal(0.0, 3.0, size=(n_clusters, n_numeric)),
        "relevant_numeric": rng.random((n_clusters, n_numeric)) < 0.5,
        "dominant": rng.integers(N_LEVELS, size=(n_clusters, n_categorical)),
        "relevant_categorical": rng.random((n_clusters, n_categorical)) < 0.5,
    }


def make_partition(n_rows: int, spec: dict, seed: int) -> pd.DataFrame:
    """``n_rows`` rows of planted clusters: relevant numeric features sit at the cluster's mean,
    relevant categorical ones take the cluster's level 80% of the time; the rest is noise."""
    rng = np.random.default_rng(seed)
    n_clusters, n_numeric = spec["means"].shape
    n_categorical = spec["dominant"].shape[1]
    group = rng.integers(n_clusters, size=n_rows)
    numeric = rng.normal(size=(n_rows, n_numeric))
    numeric += np.where(spec["relevant_numeric"][group], spec["means"][group], 0.0)
    noise = rng.integers(N_LEVELS, size=(n_rows, n_categorical))
    keep = (rng.random((n_rows, n_categorical)) < 0.8) & spec["relevant_categorical"][group]
    codes = np.where(keep, spec["dominant"][group], noise)
    levels = [f"L{i}" for i in range(N_LEVELS)]
    columns = {f"num{j:02d}": numeric[:, j] for j in range(n_numeric)}
    columns.update({f"cat{q:02d}": pd.Categorical.from_codes(codes[:, q], categories=levels) for q in range(n_categorical)})
    return pd.DataFrame(columns)


def write_parquet(folder: Path, n_rows: int, n_partitions: int, spec: dict, seed: int) -> float:
    """One Parquet file per partition; returns the seconds it took."""
    started = time.perf_counter()
    folder.mkdir(parents=True, exist_ok=True)
    bounds = np.linspace(0, n_rows, n_partitions + 1).astype(np.int64)
    for p in range(n_partitions):
        part = make_partition(int(bounds[p + 1] - bounds[p]), spec, seed + 1 + p)
        pq.write_table(pa.Table.from_pandas(part, preserve_index=False), folder / f"part-{p:05d}.parquet")
    return time.perf_counter() - started


# ----------------------------------------------------------------------
# Timing


class Timeline:
    """Timestamps of a fit: start, end of seeding, every pass (from the callback)."""

    def __init__(self):
        self.start = time.perf_counter()
        self.seeded: list[float] = []
        self.passes: list[tuple[float, int, int]] = []  # (time, K, points changed)
        # Set by instrument_seeding when the seeding runs.
        self.seeding_s = float("nan")
        self.seeds = 0

    def callback(self, record):
        self.passes.append((time.perf_counter(), record.n_clusters, record.n_changed))
        print(f"  pass {record.iteration}: K={record.n_clusters} changed={record.n_changed} "
              f"at {self.passes[-1][0] - self.start:.1f} s", flush=True)

    def summary(self, end: float) -> dict:
        seeded = self.seeded[0] if self.seeded else self.start
        times = [seeded] + [t for t, _, _ in self.passes]
        per_pass = np.diff(times)
        return {
            "total_s": end - self.start,
            "before_seeding_s": seeded - self.start if self.seeded else float("nan"),
            "passes": len(self.passes),
            "first_pass_s": float(per_pass[0]) if per_pass.size else float("nan"),
            "later_pass_s": float(np.median(per_pass[1:])) if per_pass.size > 1 else float("nan"),
            "mean_pass_s": float(per_pass.mean()) if per_pass.size else float("nan"),
            "k_per_pass": [k for _, k, _ in self.passes],
            "changed_per_pass": [c for _, _, c in self.passes],
        }


def instrument_seeding(timeline: Timeline, module, name: str):
    """Record when the first pass's clusters exist (the seeding's end), without changing it.

    Returns a function that puts the original back.
    """
    original = getattr(module, name)

    def timed(*args, **kwargs):
        seed_start = time.perf_counter()
        clusters = original(*args, **kwargs)
        timeline.seeded.append(time.perf_counter())
        timeline.seeding_s = timeline.seeded[-1] - seed_start
        timeline.seeds = clusters.n_clusters
        return clusters

    setattr(module, name, timed)
    return lambda: setattr(module, name, original)


def peak_rss_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


# ----------------------------------------------------------------------
# The two engines


def fit_params(args, columns) -> dict:
    """The parameters both engines get: one run at a given lambda, categorical columns by name."""
    return dict(
        lam=args.lam,
        n_init=1,
        max_iter=args.max_iter,
        init=args.init,
        categorical=[c for c in columns if c.startswith("cat")],
        random_state=0,
    )


def run_dask(folder: Path, args, spec, *, persist: bool) -> dict:
    import dask.dataframe as dd
    from distributed import Client, LocalCluster

    previous = os.environ.get("NUMBA_NUM_THREADS")
    os.environ["NUMBA_NUM_THREADS"] = "1"  # one core per worker process (inherited when they start)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cluster = LocalCluster(
                n_workers=args.workers, threads_per_worker=1, memory_limit=args.memory_limit, dashboard_address=None
            )
    finally:
        if previous is None:
            os.environ.pop("NUMBA_NUM_THREADS")
        else:
            os.environ["NUMBA_NUM_THREADS"] = previous
    with cluster, Client(cluster) as client:
        numba_threads = set(client.run(lambda: __import__("numba").get_num_threads()).values())
        table = dd.read_parquet(str(folder))
        timeline = Timeline()
        restore = instrument_seeding(timeline, _engine, "initial_clusters")  # the engine seeds every backend
        model = craft_distributed.DaskCRAFT(
            **fit_params(args, table.columns),
            chunk_rows=args.chunk_rows,
            persist=persist,
        )
        started = time.perf_counter()
        timeline.start = started
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(table, callback=timeline.callback)
        end = time.perf_counter()
        restore()

        def peak(dask_worker, since=started):
            times = np.asarray(dask_worker.monitor.quantities["time"])
            memory = np.asarray(dask_worker.monitor.quantities["memory"])
            window = memory[times >= since - 1.0] if times.size else memory
            return {"peak_gib": float(window.max() / 2**30) if window.size else float("nan"),
                    "limit_gib": float((dask_worker.memory_manager.memory_limit or 0) / 2**30)}

        # The monitor's clock is time.time(); convert the fit's start.
        since = time.time() - (end - started)
        peaks = client.run(peak, since=since)
        sizes = model.partition_sizes_
        result = timeline.summary(end)
        result.update(
            rows=int(sizes.sum()),
            partitions=int(sizes.size),
            partition_rows=int(np.median(sizes)),
            n_clusters=int(model.n_clusters_),
            objective=float(model.objective_),
            converged=bool(model.converged_),
            seeds=int(getattr(timeline, "seeds", 0)),
            seeding_s=float(getattr(timeline, "seeding_s", float("nan"))),
            worker_peak_gib=sorted(v["peak_gib"] for v in peaks.values()),
            worker_numba_threads=sorted(numba_threads),
            worker_limit_gib=max(v["limit_gib"] for v in peaks.values()),
            driver_peak_gib=peak_rss_gib(),
        )
        return result


def run_memory(n_rows: int, args, spec) -> dict:
    table = make_partition(n_rows, spec, args.seed + 10_000)
    timeline = Timeline()
    restore = instrument_seeding(timeline, _engine, "initial_clusters")
    model = CRAFT(**fit_params(args, table.columns))
    started = time.perf_counter()
    timeline.start = started
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(table, callback=timeline.callback)
    result = timeline.summary(time.perf_counter())
    restore()
    result.update(rows=n_rows, n_clusters=int(model.n_clusters_), objective=float(model.objective_),
                  converged=bool(model.converged_), seeds=int(getattr(timeline, "seeds", 0)),
                  seeding_s=float(getattr(timeline, "seeding_s", float("nan"))))
    return result


# ----------------------------------------------------------------------
# Report


def markdown(args, dask_results: dict, memory_result: dict, written_s: float) -> str:
    """The body of the "Dask backend" section (without its heading)."""
    info = machine()
    modes = list(dask_results)
    first = dask_results[modes[0]]
    m = memory_result
    n_rows = first["rows"]
    names = {"stream": "Dask, streaming", "persist": "Dask, persist=True"}
    header = "| | " + " | ".join(f"{names[mode]}, {n_rows:,} rows" for mode in modes) + f" | in memory, {m['rows']:,} rows |"

    def row(label, dask_cell, memory_cell):
        return f"| {label} | " + " | ".join(dask_cell(dask_results[mode]) for mode in modes) + f" | {memory_cell} |"

    encoded_gib = n_rows * 8 * (2 * args.numeric + args.categorical) / 2**30
    lines = [
        f"`python benchmarks/bench_dask.py {' '.join(sys.argv[1:])}`: a synthetic mixed table of {n_rows:,} rows "
        f"({args.numeric} numeric + {args.categorical} categorical columns with {N_LEVELS} levels, {args.clusters} planted "
        f"clusters) written as {first['partitions']} Parquet files of {first['partition_rows']:,} rows ({written_s:.0f} s to "
        f"write, partition by partition), fitted by `DaskCRAFT` on a `LocalCluster` of {args.workers} worker processes "
        f"(1 thread and 1 numba thread each, memory limit {args.memory_limit} per worker); the in-memory engine `CRAFT` "
        f"on {m['rows']:,} rows of the same kind in one process. All: lambda = {args.lam}, init = {args.init!r}, one run "
        f"(n_init = 1), at most {args.max_iter} passes. *Streaming* (the default) reads and encodes every partition "
        f"again in every map and keeps nothing of the table between maps; *persist=True* keeps the encoded partitions "
        f"in the workers' memory ({encoded_gib:.1f} GiB here).",
        "",
        f"Machine: {info['cpu']}, {info['cores']} cores, {info['memory']}; {info['versions']}; commit {info['commit']}. "
        f"Other work shared the machine during the run (load average {info['load_average']} at the end), so times are "
        "upper bounds.",
        "",
        header,
        "|---|" + "---|" * (len(modes) + 1),
        row("encoder (2 reductions; + encoding when persisted)", lambda d: f"{d['before_seeding_s'] - d['seeding_s']:.0f} s", "—"),
        row("seeding (craft++: one pass per seed)", lambda d: f"{d['seeding_s']:.0f} s ({d['seeds']} seeds)", f"{m['seeding_s']:.2f} s ({m['seeds']} seeds)"),
        row("first pass", lambda d: f"{d['first_pass_s']:.1f} s", f"{m['first_pass_s']:.2f} s"),
        row("**later passes (median)**", lambda d: f"**{d['later_pass_s']:.1f} s**", f"**{m['later_pass_s']:.2f} s**"),
        row("seconds per pass per million rows", lambda d: f"{d['later_pass_s'] / d['rows'] * 1e6:.2f}", f"{m['later_pass_s'] / m['rows'] * 1e6:.2f}"),
        row("passes run (converged)", lambda d: f"{d['passes']} ({'yes' if d['converged'] else 'no'})", f"{m['passes']} ({'yes' if m['converged'] else 'no'})"),
        row("K found", lambda d: str(d["n_clusters"]), str(m["n_clusters"])),
        row("whole fit", lambda d: f"{d['total_s']:.0f} s", f"{m['total_s']:.1f} s"),
        row("**peak memory per worker**", lambda d: "**" + " / ".join(f"{x:.2f}" for x in d["worker_peak_gib"]) + " GiB**", "—"),
        row("peak memory of the driver process", lambda d: f"{d['driver_peak_gib']:.2f} GiB", "(same process)"),
        "",
        f"Streaming keeps each worker near what a few partitions in flight take: about "
        f"{first['partition_rows'] * 8 * (2 * args.numeric + args.categorical) / 2**20:.0f} MiB encoded per partition, "
        f"plus the labels (4 bytes a row) and, within a pass, the distances (12 bytes a row) kept as futures, against "
        f"{encoded_gib:.1f} GiB for the encoded table. The driver holds the clusters, the reduced statistics and at most "
        "`(1 + worker threads) x chunk_rows` proposed rows (see `docs/distributed.md`); its peak includes the Python "
        "process and the in-memory comparison's libraries. A streaming pass costs one read and encoding of the whole "
        "table, which `persist=True` pays once"
        + (f" ({dask_results['stream']['later_pass_s']:.1f} s against {dask_results['persist']['later_pass_s']:.1f} s a pass)"
           if {"stream", "persist"} <= set(modes) else "")
        + ". Seeding with "
        "craft++ costs one pass per seed; the rows opened during passes are validated by the driver in order, so K does "
        "not change the number of maps of a pass.",
        "",
        "Raw numbers (JSON):",
        "",
        "```json",
        json.dumps({"dask": dask_results, "memory": m}, indent=1, default=float),
        "```",
        "",
    ]
    return "\n".join(lines)


def _options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--partitions", type=int, default=40)
    parser.add_argument("--memory-rows", type=int, default=1_000_000, help="rows of the in-memory comparison")
    parser.add_argument("--numeric", type=int, default=20)
    parser.add_argument("--categorical", type=int, default=20)
    parser.add_argument("--clusters", type=int, default=8)
    parser.add_argument("--lam", type=float, default=70.0)
    parser.add_argument("--init", choices=("craft++", "random"), default="craft++")
    parser.add_argument("--max-iter", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--memory-limit", default="4GiB")
    parser.add_argument("--chunk-rows", type=int, default=65_536)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--modes", default="stream,persist",
                        help="Dask modes to run, comma-separated: stream (read and encode every pass), persist")
    parser.add_argument("--data-dir", type=Path, default=None, help="where the Parquet files go (default: a temporary folder, removed)")


def run(quick: bool = False, **options) -> dict:
    """Write the Parquet files, fit them with Dask in each mode and a sample in memory; the numbers.

    ``options`` are the command line's (``_options``; defaults for those not given). ``quick``: 200,000 rows
    in 8 partitions, 100,000 in memory.
    """
    defaults = argparse.ArgumentParser()
    _options(defaults)
    args = argparse.Namespace(**{**vars(defaults.parse_args([])), **options})
    if quick:
        args.rows, args.partitions, args.memory_rows = 200_000, 8, 100_000

    spec = plan(args.numeric, args.categorical, args.clusters, args.seed)
    folder = args.data_dir or Path(tempfile.mkdtemp(prefix="craft-bench-dask-"))
    try:
        written = write_parquet(folder, args.rows, args.partitions, spec, args.seed)
        print(f"wrote {args.rows:,} rows in {args.partitions} files to {folder} in {written:.1f} s", flush=True)
        dask_results = {}
        for mode in args.modes.split(","):
            print(f"Dask, {mode}:", flush=True)
            dask_results[mode] = run_dask(folder, args, spec, persist=mode == "persist")
            print(f"dask {mode}:", json.dumps(dask_results[mode], default=float), flush=True)
    finally:
        if args.data_dir is None:
            shutil.rmtree(folder, ignore_errors=True)
    memory_result = run_memory(args.memory_rows, args, spec)
    print("memory:", json.dumps(memory_result, default=float), flush=True)
    return {"args": args, "dask": dask_results, "memory": memory_result, "written_s": written}


def main(argv=None) -> int:
    return quick_or_full_main(
        argv, name="dask", title=TITLE, description=__doc__.split("\n\n")[0],
        quick_help="200,000 rows in 8 partitions, 100,000 in memory", options=_options, run=run,
        markdown=lambda data, info: markdown(data["args"], data["dask"], data["memory"], data["written_s"]))


if __name__ == "__main__":
    sys.exit(main())
