"""Server memory over many fits: the app's fit store bounded by bytes against entries alone.

One process plays a server with one session fitting ``--fits`` different
fits (the seed changes) of one table through :mod:`explorer.cache`, with the
profiles and projection each fit's pages ask for, and records its resident
memory (VmRSS) after every fit. Two runs, each in a fresh process:
``bytes`` (the store's default budget, a share of the machine's memory) and
``entries`` (``CRAFT_APP_CACHE_MB`` set beyond reach, so only the entry
counts bound the store: the behaviour before the store was sized by bytes).

``python -m benchmarks.bench_cache --write-results`` replaces the "App memory
over many fits" section of ``docs/RESULTS.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

TITLE = "App memory over many fits"


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS"):
            return int(line.split()[1]) / 1024
    return float("nan")


def one_server(n_fits: int, n_rows: int) -> dict:
    """Run in the child process: the fits, and memory after each."""
    import warnings

    from explorer import cache, services

    warnings.simplefilter("ignore")
    data = services.load_example("mixed_planted", n_samples=n_rows, seed=0)
    schema, _ = services.fit_schema(data, {}, data.label)
    X = data.table[list(schema.numeric) + list(schema.categorical)]
    memory = [rss_mib()]
    for seed in range(n_fits):
        params = services.FitParams(k=4, seed=seed, n_init=2)
        outcome = cache.fit(data.key, tuple(schema.numeric), tuple(schema.categorical), params, data.table, schema)
        assert outcome is not None  # no one cancels these fits
        key = cache.fit_key(data.key, schema, params)
        cache.cluster_profiles(key, outcome.model)
        cache.projection(key, 2000, outcome.model, X)
        memory.append(rss_mib())
    return {"rss_mib": memory, "store_mib": cache.STORE.n_bytes / 2**20, "entries": len(cache.STORE),
            "budget_mib": cache.STORE.max_bytes / 2**20}


def run(n_fits: int, n_rows: int, budget_mb: float | None) -> dict:
    results = {}
    for mode, budget in (("entries", "1000000"), ("bytes", None if budget_mb is None else str(budget_mb))):
        env = dict(os.environ)
        env.pop("CRAFT_APP_CACHE_MB", None)
        if budget:
            env["CRAFT_APP_CACHE_MB"] = budget
        code = f"import json, benchmarks.bench_cache as b; print(json.dumps(b.one_server({n_fits}, {n_rows})))"
        started = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        results[mode] = json.loads(out.stdout.strip().splitlines()[-1])
        results[mode]["seconds"] = time.perf_counter() - started
        print(f"  {mode}: {results[mode]['rss_mib'][-1]:.0f} MiB after {n_fits} fits", flush=True)
    return results


def markdown(results: dict, n_fits: int, n_rows: int) -> str:
    from benchmarks.common import machine, md_table, produced_by

    info = machine()
    marks = sorted({1, *range(10, n_fits + 1, 10), n_fits})
    rows = []
    for mode, label in (("entries", "entries only"), ("bytes", "bytes and entries")):
        rss = results[mode]["rss_mib"]
        rows.append([label, f"{rss[0]:.0f}", *(f"{rss[m]:.0f}" for m in marks),
                     f"{results[mode]['store_mib']:.0f} MiB in {results[mode]['entries']}"])
    headers = ["store bounded by", "start", *(f"after {m}" for m in marks), "store at the end"]
    return "\n\n".join([
        f"One process plays a server in which one session makes {n_fits} different fits (seeds 0..{n_fits - 1}, "
        f"k = 4, n_init = 2) of the {n_rows:,}-row `mixed_planted` table through `explorer.cache`, with each fit's "
        "profiles and projection; resident memory (VmRSS, MiB) after every fit. `bytes and entries`: a budget of "
        f"{results['bytes']['budget_mib']:.0f} MiB (the default is a sixteenth of the memory available at start, "
        "within 64-512 MiB; `CRAFT_APP_CACHE_MB` sets it, as here, to show the bound within a short run); "
        "`entries only` sets the budget beyond reach, so that Streamlit's `max_entries` alone bounds the store.",
        md_table(headers, rows),
        "With entries only, memory grows with every fit kept (a fit keeps its per-iteration labels); with the "
        "byte budget it levels off once the store is full: evicted entries' memory is reused for new ones.",
        produced_by("bench_cache", info),
    ])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fits", type=int, default=70)
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--budget-mb", type=float, default=None, help="the bytes run's budget (default: the store's)")
    parser.add_argument("--write-results", action="store_true")
    args = parser.parse_args(argv)
    results = run(args.fits, args.rows, args.budget_mb)
    from benchmarks.common import publish

    publish("bench_cache", results, TITLE, markdown(results, args.fits, args.rows), write=args.write_results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
