"""The app on a Parquet folder on a local Dask cluster: ``craft app FOLDER --local-workers 2``, in Chromium.

Writes a folder of ``--rows`` rows × ``--columns`` columns (half numeric with 3 planted groups, half
categorical, one Parquet file per ``--part-rows`` rows) unless it exists, starts the command, and measures

* the time from the command's start to the first drawn mask heatmap on Tune & see (the workers start,
  count the rows, draw the sample, fit on every row with DaskCRAFT, the page draws);
* a cached revisit: k is set to another value (with ``--new-fit`` its fit on the cluster is timed too;
  without, k is set back as soon as that fit has started), then back; the time from setting it back to
  the redrawn heatmap of the fit of every row, from the cache;
* the peak resident memory (``VmHWM``) of the command's own process (the server, the scheduler and the
  app's sample; the two worker processes are not counted).

Usage: ``python -m benchmarks.bench_cluster_app --rows 10000000 --columns 40 --folder /tmp/big``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.app_server import ServerProcess, free_port
from benchmarks.bench_browser import CHROMIUM_ARGS, _chromium, set_number

ROOT = Path(__file__).resolve().parent.parent

_MASKS_JS = """
() => {
  const graph = document.querySelector('.st-key-fig_masks .js-plotly-plot');
  if (!graph || !graph.data) return null;
  const traces = graph.data.filter((d) => d.type === 'heatmap');
  return traces.length ? traces[traces.length - 1].y.length : null;
}
"""


def write_folder(folder: Path, n_rows: int, n_columns: int, part_rows: int, seed: int = 0) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir(parents=True)
    rng = np.random.default_rng(seed)
    n_numeric = n_columns // 2
    for i, start in enumerate(range(0, n_rows, part_rows)):
        n = min(part_rows, n_rows - start)
        group = rng.integers(3, size=n)
        columns = {f"x{j}": rng.normal(2.0 * group * (j % 3 == 0), 1.0) for j in range(n_numeric)}
        levels = np.array(["a", "b", "c", "d"])
        for j in range(n_columns - n_numeric):
            planted = (group + j) % 4 if j % 2 == 0 else rng.integers(4, size=n)
            columns[f"c{j}"] = levels[planted]
        pq.write_table(pa.Table.from_pandas(pd.DataFrame(columns), preserve_index=False),
                       folder / f"part-{i:04d}.parquet")


def _peak_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


def _heatmap_rows(page, until, timeout_s: float) -> int:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        rows = page.evaluate(_MASKS_JS)
        if rows is not None and until(rows):
            return rows
        page.wait_for_timeout(50)
    raise TimeoutError("no mask heatmap")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--columns", type=int, default=40)
    parser.add_argument("--part-rows", type=int, default=500_000)
    parser.add_argument("--folder", type=Path, required=True)
    parser.add_argument("--k", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=3000.0)
    parser.add_argument("--new-fit", action="store_true",
                        help="also time the fit of k + 1 (else k is set back before that fit ends)")
    args = parser.parse_args(argv)
    if not args.folder.exists():
        started = time.perf_counter()
        write_folder(args.folder, args.rows, args.columns, args.part_rows)
        print(f"wrote {args.folder} in {time.perf_counter() - started:.0f} s", flush=True)
    from playwright.sync_api import sync_playwright

    port = free_port()
    started = time.perf_counter()
    # Opening the folder and starting the local cluster come before the server answers: a generous deadline.
    server = ServerProcess(
        [sys.executable, "-c", "import sys; from craft.cli import main; sys.exit(main(sys.argv[1:]))", "app",
         str(args.folder), "--local-workers", "2", "--no-browser", "--port", str(port)],
        port=port, cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)),
        log_path=args.folder.parent / "bench_cluster_app.log", start_timeout_s=args.timeout)
    url = server.url
    result: dict = {"rows": args.rows, "columns": args.columns, "parts": -(-args.rows // args.part_rows)}
    try:
        server.start()
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=_chromium(), args=CHROMIUM_ARGS)
            page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
            page.set_default_timeout(args.timeout * 1000)
            page.goto(f"{url}/clusters?size_by=k&k={args.k}")
            _heatmap_rows(page, lambda rows: rows >= 1, args.timeout)
            result["first_heatmap_s"] = round(time.perf_counter() - started, 1)
            print(f"first heatmap after {result['first_heatmap_s']} s", flush=True)
            first = page.evaluate(_MASKS_JS)
            t0 = time.perf_counter()
            set_number(page, "k", args.k + 1)
            if args.new_fit:  # the fit of the other value on the cluster, timed
                _heatmap_rows(page, lambda rows: rows != first, args.timeout)
                result["new_value_s"] = round(time.perf_counter() - t0, 1)
                page.wait_for_timeout(1000)
            else:  # moved away (its fit starts and the heatmap goes), then back before that fit ends
                # The other value's fit has started when its progress bar is on the page (the old heatmap may
                # stay drawn, faded, while that run waits for its fit).
                page.wait_for_selector("[data-testid='stProgress']", timeout=120_000)
                result["moved_away_progress_s"] = round(time.perf_counter() - t0, 2)
            t0 = time.perf_counter()
            set_number(page, "k", args.k)
            # The run of the revisited value: it starts, ends, and its heatmap is drawn with the first rows.
            try:
                page.wait_for_selector("[data-testid='stApp'][data-test-script-state='running']", timeout=5_000)
            except Exception:  # noqa: BLE001 - a run shorter than the poll: it has ended already
                pass
            page.wait_for_selector("[data-testid='stApp'][data-test-script-state='notRunning']")
            _heatmap_rows(page, lambda rows: rows == first, args.timeout)
            result["progress_left"] = page.locator("[data-testid='stProgress']").count() == 0
            result["cached_revisit_s"] = round(time.perf_counter() - t0, 2)
            browser.close()
        assert server.process is not None
        result["app_process_peak_mb"] = round(_peak_bytes(server.process.pid) / 2**20)
        with open("/proc/loadavg") as handle:
            result["load_average"] = handle.read().split()[0]
    finally:
        server.stop()
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
