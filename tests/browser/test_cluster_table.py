"""``craft app FOLDER --local-workers 2 --no-browser``: a Parquet folder on a local Dask cluster, in Chromium.

The page says where the table runs and how many rows it has (every row, counted on the cluster), and Tune &
see draws the mask heatmap of the fit of every row.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_flows import ROOT, assert_clean, go_to, mask_figure, new_context_page, open_app

from benchmarks.app_server import free_port

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pytest.importorskip("distributed")

#: Seconds for the command to start two worker processes, count the rows and draw the sample.
START_TIMEOUT = 180


def _folder(path: Path, n_rows: int = 6_000, n_parts: int = 3) -> Path:
    rng = np.random.default_rng(0)
    group = rng.integers(3, size=n_rows)
    table = pd.DataFrame({"a": rng.normal(4.0 * group), "b": rng.normal(size=n_rows), "c": rng.normal(-3.0 * group),
                          "colour": np.array(["red", "green", "blue"])[group], "shape": rng.choice(["o", "x"], n_rows)})
    path.mkdir()
    for i, rows in enumerate(np.array_split(np.arange(n_rows), n_parts)):
        pq.write_table(pa.Table.from_pandas(table.iloc[rows], preserve_index=False), path / f"part-{i}.parquet")
    return path


@pytest.fixture
def cluster_app(tmp_path):
    folder = _folder(tmp_path / "parts")
    port = free_port()
    home = tmp_path / "home"
    home.mkdir()
    env = dict(os.environ, HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), PYTHONUNBUFFERED="1",
               STREAMLIT_BROWSER_GATHER_USAGE_STATS="false", PYTHONPATH=str(ROOT))
    log = open(tmp_path / "craft-app.log", "wb")  # noqa: SIM115 - closed below
    process = subprocess.Popen(
        [sys.executable, "-c", "import sys; from craft.cli import main; sys.exit(main(sys.argv[1:]))", "app",
         str(folder), "--local-workers", "2", "--no-browser", "--port", str(port)],
        cwd=tmp_path, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://localhost:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            assert process.poll() is None, (tmp_path / "craft-app.log").read_text()[-4000:]
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as answer:
                    if answer.status == 200:
                        break
            except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
                time.sleep(0.5)
        else:
            raise AssertionError((tmp_path / "craft-app.log").read_text()[-4000:])
        yield url
    finally:
        process.terminate()  # Ctrl+C's path: the cluster closes with the server
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
        log.close()


def test_a_parquet_folder_on_two_local_workers_draws_its_masks(browser, cluster_app):
    context, page = new_context_page(browser, cluster_app)
    try:
        open_app(page)
        page.get_by_text("6,000 rows in 3 part(s)").first.wait_for(timeout=120_000)
        main = page.locator("[data-testid='stMain']").inner_text()
        assert "2 worker(s)" in main and "uniform sample of" in main
        go_to(page, "Tune & see")
        figure = mask_figure(page, until=lambda f: len(f["y"]) >= 1)
        assert figure["x"] and all(len(row) == len(figure["x"]) for row in figure["z"])
        assert "From every row (6,000, on the cluster)" in page.locator("[data-testid='stMain']").inner_text()
        assert_clean(page)
        # Every other page of the fit opens on the cluster table without an exception.
        for title in ("Cluster cards", "Evaluate", "What-if", "Score new rows", "Export"):
            go_to(page, title)
            assert_clean(page)
        page.get_by_text("Labels of every row (6,000)").first.wait_for()
    finally:
        context.close()
