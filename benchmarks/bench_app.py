"""Responsiveness of the app: a rerun that needs a new fit vs a cached one.

The target, on a 10,000-row mixed table: a slider change that needs a
new fit renders in under 1 s; a cached setting in under 0.2 s. This is a
benchmark, not a timed test: it prints the medians and writes them to
``benchmarks/out/bench_app.json``.

The table is the synthetic ``mixed_planted`` set at 10,000 rows (12 numeric +
12 categorical columns, 4 planted clusters), opened through the URL
(``?dataset=mixed_planted&syn_n=10000&k=4&m=0.5``), with the app's default
parameters otherwise (the estimator's default restarts, exact-k search). Each measurement is one
``AppTest.run()`` of the whole script (sidebar, fit through the cache, page,
figures), i.e. the server-side time of a rerun; the browser's drawing is not
included. A "new" rerun moves the m slider to a value not seen before; a
"cached" rerun moves it back to 0.5. Run with ``python -m benchmarks.bench_app``
(``--write-results`` also replaces the "App responsiveness" section of
``docs/RESULTS.md``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "out"
TITLE = "App responsiveness"
VIEWS = ("Feature masks", "Data heatmap", "Sizes & profiles", "Projection")


def _timed(at, action) -> float:
    start = time.perf_counter()
    action()
    at.run()
    elapsed = time.perf_counter() - start
    if at.exception:
        raise RuntimeError(f"the app raised: {at.exception[0].value}")
    return elapsed


def measure(view: str, m_values, rows: int) -> dict:
    """Median seconds of new-fit and cached reruns of the Tune & see page on one tab."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    st.cache_data.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    for key, value in dict(dataset="mixed_planted", syn_n=rows, k=4, m=0.5, view=view).items():
        at.query_params[key] = str(value)
    first = time.perf_counter()
    at.run()
    at.switch_page("pages/clusters.py").run()
    first = time.perf_counter() - first
    slider = lambda value: (lambda: at.slider(key="m").set_value(value))  # noqa: E731
    new, cached, fits = [], [], []
    for value in m_values:
        new.append(_timed(at, slider(value)))
        fits.append(at.session_state["ctx"].outcome.seconds)
        cached.append(_timed(at, slider(0.5)))
    return {
        "view": view,
        "rows": rows,
        "first_run_s": first,
        "new_fit_rerun_median_s": statistics.median(new),
        "new_fit_rerun_max_s": max(new),
        "fit_only_median_s": statistics.median(fits),
        "cached_rerun_median_s": statistics.median(cached),
        "cached_rerun_max_s": max(cached),
        "repeats": len(m_values),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=7, help="new / cached pairs per view")
    parser.add_argument("--views", nargs="*", default=list(VIEWS))
    parser.add_argument("--write-results", action="store_true", help="replace the section in docs/RESULTS.md")
    parser.add_argument("--results", type=Path, default=None, help="the results file --write-results updates (default docs/RESULTS.md)")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from benchmarks.common import RESULTS, machine, write_sections

    warnings.simplefilter("ignore")
    import logging

    logging.getLogger("streamlit").setLevel(logging.ERROR)
    m_values = [round(0.30 + 0.03 * i, 2) for i in range(args.repeats)]
    results = [measure(view, m_values, args.rows) for view in args.views]
    print(f"{'view':<18} {'new fit rerun':>14} {'(fit alone)':>12} {'cached rerun':>13}   (medians over {args.repeats})")
    for r in results:
        print(f"{r['view']:<18} {r['new_fit_rerun_median_s']:>13.3f}s {r['fit_only_median_s']:>11.3f}s "
              f"{r['cached_rerun_median_s']:>12.3f}s")
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "bench_app.json").write_text(json.dumps(results, indent=2))
    ok = all(r["new_fit_rerun_median_s"] < 1.0 and r["cached_rerun_median_s"] < 0.2 for r in results)
    print("targets (new < 1 s, cached < 0.2 s):", "met" if ok else "NOT met")
    if args.write_results:
        write_sections({TITLE: markdown(results, args, machine())}, args.results or RESULTS)
    return 0


def markdown(results: list[dict], args, info: dict) -> str:
    """The results section: how it was measured, then one row per view."""
    lines = [
        f"*Produced by `python -m benchmarks.bench_app --write-results` on {time.strftime('%Y-%m-%d %H:%M')}, "
        f"commit {info['commit']}, on {info['cpu']}, {info['cores']} cores (load average {info['load_average']}).*",
        "",
        f"The Tune & see page on a {args.rows:,}-row mixed table (`mixed_planted`: 12 numeric + 12 categorical "
        "columns, 4 planted clusters, k = 4, the app's default parameters), one `AppTest.run()` of the whole "
        "script per measurement: sidebar, fit through the cache, page and figures, as the server does it "
        "(the browser's drawing is not included). A *new-fit* rerun moves the m slider to a value not seen "
        f"before; a *cached* rerun moves it back to 0.5. Medians over {args.repeats} pairs per view. "
        "Targets: a new fit under 1 s, a cached setting under 0.2 s.",
        "",
        "| view | new-fit rerun, median (max) | of which the fit | cached rerun, median (max) | targets |",
        "|---|---|---|---|---|",
    ]
    for r in results:
        met = r["new_fit_rerun_median_s"] < 1.0 and r["cached_rerun_median_s"] < 0.2
        lines.append(
            f"| {r['view']} | {r['new_fit_rerun_median_s']:.3f} s ({r['new_fit_rerun_max_s']:.3f} s) | "
            f"{r['fit_only_median_s']:.3f} s | {r['cached_rerun_median_s']:.3f} s ({r['cached_rerun_max_s']:.3f} s) | "
            f"{'met' if met else 'missed'} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
