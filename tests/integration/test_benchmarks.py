"""The benchmark suite stays runnable: its quick mode runs once, end to end.

``python -m benchmarks.run_all --quick`` exercises every script of
``benchmarks/`` (paper tables with every peer, DP-RF, subspace recovery with
its figures, the speed harness with its subprocess workers, the defaults
study) on small inputs, into a temporary results file.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]

pytest.importorskip("kmodes", reason="the benchmark peers need the 'bench' extra (kmodes)")


def _run_script(args, timeout):
    """Run ``python ARGS`` from the repository root, the package importable."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    results = out / "RESULTS.md"
    # Another section's text must survive the rewrite.
    results.write_text("# Benchmark results\n\n## Dask backend\n\nkept as it is\n", encoding="utf-8")
    done = _run_script(
        ["-m", "benchmarks.run_all", "--quick", "--results", str(results), "--figures", str(out / "figures")], 290
    )
    return done, results, out / "figures"


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_quick_suite_completes_and_writes_results(quick_run):
    done, results, figures = quick_run
    assert done.returncode == 0, done.stderr[-3000:]
    text = results.read_text(encoding="utf-8")
    for title in ("Paper tables", "DP-RF on Splice", "Subspace recovery", "Speed and scale", "Where CRAFT falls short and why", "Dask backend"):
        assert re.search(rf"(?m)^## {re.escape(title)}$", text), title
    assert "kept as it is" in text
    # A results table with a measured row per quick dataset, and the paper's own Wine number beside ours.
    assert re.search(r"(?m)^\| Wine \| \d\.\d\d \(0\.47\) \| \d\.\d\d \|", text)
    assert re.search(r"(?m)^\| Zoo \| \d\.\d\d \|", text)
    # The speed harness measured CRAFT and both peers in subprocesses.
    assert re.search(r"(?m)^\| 10,000 \| CRAFT \| \d+ \|", text)
    assert re.search(r"(?m)^\| 10,000 \| KMeans \|", text) and re.search(r"(?m)^\| 10,000 \| KPrototypes \|", text)
    assert re.search(r"\*\*Spambase against `KMeans\(\)`\*\* .* ratio \d+\.\d\d×", text)
    assert "error:" not in text
    assert len(list(figures.glob("recovery_*.svg"))) == 6


def test_results_merge_keeps_foreign_sections(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT))
    from benchmarks.run_all import merge_sections

    existing = "# Results\n\nintro\n\n## Dask backend\n\ndask text\n\n## Paper tables\n\nold numbers\n"
    merged = merge_sections(existing, {"Paper tables": "new numbers", "Speed and scale": "fast"}, "machine X")
    assert "dask text" in merged and "old numbers" not in merged and "new numbers" in merged
    assert merged.index("## Dask backend") < merged.index("## Paper tables") < merged.index("## Speed and scale")
    again = merge_sections(merged, {"Paper tables": "newer"}, "machine Y")
    assert again.count("<!-- benchmarks:machine -->") == 1 and "machine Y" in again and "machine X" not in again


@pytest.mark.slow
@pytest.mark.timeout(200)
def test_app_benchmark_writes_its_section(tmp_path):
    results = tmp_path / "RESULTS.md"
    results.write_text("# Benchmark results\n\n## Paper tables\n\nkept\n", encoding="utf-8")
    done = _run_script(
        ["-m", "benchmarks.bench_app", "--rows", "600", "--repeats", "1", "--views", "Feature masks",
         "--write-results", "--results", str(results)],
        180,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    text = results.read_text(encoding="utf-8")
    assert "kept" in text
    row = re.search(r"(?m)^\| Feature masks \| (\d+\.\d+) s \(\d+\.\d+ s\) \| (\d+\.\d+) s \| (\d+\.\d+) s", text)
    assert row, text
    new_fit, fit_alone, cached = map(float, row.groups())
    assert 0 < fit_alone <= new_fit and cached > 0


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_dask_benchmark_writes_its_section(tmp_path):
    pytest.importorskip("distributed", reason="the Dask backend needs the 'dask' extra")
    results = tmp_path / "RESULTS.md"
    done = _run_script(
        ["benchmarks/bench_dask.py", "--rows", "20000", "--partitions", "4", "--memory-rows", "5000",
         "--max-iter", "2", "--modes", "stream", "--memory-limit", "1GiB", "--data-dir", str(tmp_path / "parquet"),
         "--write-results", "--results", str(results)],
        280,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    text = results.read_text(encoding="utf-8")
    assert re.search(r"(?m)^## Dask backend$", text)
    assert re.search(r"(?m)^\| \*\*later passes \(median\)\*\* \| \*\*\d+\.\d s\*\* \| \*\*\d+\.\d\d s\*\* \|$", text), text
    assert len(list((tmp_path / "parquet").glob("*.parquet"))) == 4


def test_spambase_against_kmeans_is_timed_in_one_process_and_reported_as_a_ratio_of_medians():
    from benchmarks import speed

    result = speed.worker({"method": "kmeans_ratio", "data": "spambase", "repeats": 3})
    assert len(result["craft_s"]) == len(result["kmeans_s"]) == 3
    text, ratio = speed._spam_ratio_text(result)
    assert ratio == float(np.median(result["craft_s"])) / float(np.median(result["kmeans_s"]))
    assert f"ratio {ratio:.2f}×" in text and "`CRAFT(m=0.5, k=2)`" in text


def test_a_partial_browser_run_written_twice_leaves_one_block_of_its_own(tmp_path):
    """``bench_browser --actions ... --write-results`` run again replaces its row and its block, nothing else."""
    from argparse import Namespace

    from benchmarks.bench_browser import Result, merged_section

    other_run = ("*The row(s) of wide: produced by `python -m benchmarks.bench_browser --actions wide` on 2026-01-01 "
                 "00:00, commit abc, load average 1 at the start; the other rows come from the run named above.*")
    old = ("*Produced by the full run.*\n\n| action | browser | server | target | | load | note |\n|---|---|---|---|---|---|---|\n"
           "| kept row | 1 ms | 1 ms | ≤ 150 ms | met | 0.1 → 0.1 |  |\n\n" + other_run + "\n\n**Long fits.** kept")
    args = Namespace(actions=["control"], repeats=1)
    info = {"commit": "def", "load_average": "1.0"}
    section = old
    for browser_s in (0.2, 0.3):
        result = Result("control", "a view-only control", 0.15, browser_s=[browser_s], server_s=[0.05], load=(1.0, 1.0))
        section = merged_section(section, [result], info, args)
    assert section.count("*The row(s) of control:") == 1 and section.count("**Targets missed in that run:**") == 1
    assert "300 ms against" in section and "200 ms" not in section
    assert "| kept row |" in section and other_run in section and "**Long fits.** kept" in section
    (row,) = [line for line in section.splitlines() if line.startswith("| a view-only control")]
    assert "| 300 ms" in row and "missed" in row


def test_replaying_a_fits_runs_keeps_its_own_run_and_a_race_keeps_one_of_them():
    from benchmarks import restart_racing
    from benchmarks.common import labelled

    zoo = labelled("zoo")
    model, runs, n_passes = restart_racing.traced_fit(zoo.X, zoo.n_classes, m=0.5, categorical=zoo.schema, random_state=3)
    assert sorted(runs) == list(range(10)) and n_passes >= sum(len(run.labels) for run in runs.values())
    full, saved = restart_racing.kept(runs, None)
    assert saved == 0 and np.array_equal(runs[full].labels[-1], model.labels_)
    # A race that keeps every restart is no race; one that keeps a single restart after one pass saves passes
    # and still keeps a finished run of this fit.
    assert restart_racing.kept(runs, (1, 10)) == (full, 0)
    raced, saved = restart_racing.kept(runs, (1, 1))
    assert saved > 0 and runs[raced].finished


def test_the_racing_benchmark_writes_its_section(tmp_path):
    results = tmp_path / "RESULTS.md"
    done = _run_script(["-m", "benchmarks.restart_racing", "--quick", "--write-results", "--results", str(results)], 280)
    assert done.returncode == 0, done.stderr[-3000:]
    text = results.read_text(encoding="utf-8")
    assert re.search(r"(?m)^## Restarts cut short$", text)
    assert re.search(r"(?m)^\| zoo, m = 0\.5, plain \| 2 \| NMI 0\.\d{3} \| [+-]\d\.\d{3} \(\d+%\) \|", text), text
    assert re.search(r"(?m)^\| fits keeping the same run \|\s+\|\s+\| \d+ of 24 \|", text), text


def test_the_warm_start_benchmark_writes_its_section(tmp_path):
    results = tmp_path / "RESULTS.md"
    done = _run_script(["-m", "benchmarks.warm_start", "--quick", "--write-results", "--results", str(results)], 280)
    assert done.returncode == 0, done.stderr[-3000:]
    text = results.read_text(encoding="utf-8")
    assert re.search(r"(?m)^## Warm starts$", text)
    # Every slider has its row, with two seeds of Figure 2 and Zoo: 2 x 2 x 4 m moves, 2 x 2 x 2 of the others.
    assert re.search(r"(?m)^\| \*\*m\*\* \| 16 \| \d+\.\d\d× \| \d+\.\d\d× \| [+-]\d+\.\d\d% \| \d+% \| -?\d\.\d\d \| \d+% \|$", text), text
    for slider in ("ρ", "k", "λ", "ε_c", "ε_v"):
        assert re.search(rf"(?m)^\| \*\*{slider}\*\* \| 8 \|", text), slider
    assert re.search(r"(?m)^\| Spambase warm refit m 0\.5 → 0\.55 ÷ `KMeans\(2\)` \| ≤ 1× \| \d+\.\d\d× ", text), text


@pytest.mark.parametrize("module", ["bench_dask", "defaults_study", "dprf_splice", "paper_tables", "recovery", "speed",
                                    "missing", "noise", "restart_racing", "warm_start"])
def test_every_standalone_benchmark_has_the_one_quick_or_full_command_line(module, capsys):
    """One command line (benchmarks.common.quick_or_full_main): --quick, --write-results, --results (issue 33)."""
    import importlib
    import inspect

    main = importlib.import_module(f"benchmarks.{module}").main
    assert "quick_or_full_main" in inspect.getsource(main)
    with pytest.raises(SystemExit) as ended:
        main(["--help"])
    assert ended.value.code == 0
    shown = capsys.readouterr().out
    assert all(option in shown for option in ("--quick", "--write-results", "--results")), shown
