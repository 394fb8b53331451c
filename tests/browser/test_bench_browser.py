"""Smoke test of the browser benchmark: one action, once, into a temporary results file.

Timings are measured and written, never asserted: the test checks that the
benchmark drives the app in Chromium, times the action in the page and on
the websocket, and writes its section.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from benchmarks.bench_browser import NAV_LINKS

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

ROOT = Path(__file__).resolve().parents[2]


def test_one_action_is_timed_and_written(tmp_path, browser):
    # ``browser`` (conftest) skips, or fails under CRAFT_REQUIRE_BROWSER=1, where there is no Chromium.
    results = tmp_path / "RESULTS.md"
    results.write_text("# Benchmark results\n\n## Paper tables\n\nkept\n", encoding="utf-8")
    raw = tmp_path / "bench_browser.json"
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.bench_browser", "--actions", "control", "--repeats", "1",
         "--write-results", "--results", str(results), "--json", str(raw)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=280, check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    (result,) = json.loads(raw.read_text())["results"]
    assert result["key"] == "control" and len(result["browser_s"]) == 1
    # The page saw the input and the DOM settle; the websocket showed a rerun and its end.
    assert result["browser_s"][0] > 0 and result["server_s"][0] is not None
    assert result["server_s"][0] <= result["browser_s"][0]
    text = results.read_text(encoding="utf-8")
    assert "kept" in text and re.search(r"(?m)^## App responsiveness in the browser$", text)
    assert re.search(r"(?m)^\| a view-only control inside a fragment .*\| ≤ 150 ms \| (met|missed) \|", text)


def test_a_link_to_a_page_on_a_fresh_make_run_server_lists_the_pages_by_title(browser):
    """``python -m explorer.serve`` (``make run``) serves the first session in st.navigation's mode.

    The link's page also connects to the server at its own address first.

    With a ``pages/`` folder Streamlit would otherwise run a fresh server's first session in its
    folder mode, and the sidebar of a shared link listed the files ("app", "clusters", ...).
    """
    from benchmarks.bench_browser import Server

    server = Server().start()
    try:
        context = browser.new_context(base_url=server.url)
        page = context.new_page()
        asked: list[str] = []
        page.on("request", lambda request: asked.append(request.url))
        page.goto("/teach")
        page.wait_for_selector("[data-testid='stHeading']:has-text('Teach')", timeout=120_000)
        # The page names its server (explorer.serve.name_the_server_on_page_links): the client asks the server's
        # own address at once, never first the page's path taken for the server's (/teach/_stcore/health).
        stcore = [url.removeprefix(server.url) for url in asked if "/_stcore/" in url]
        assert stcore and all(path.startswith("/_stcore/") for path in stcore), stcore
        # A link's text is its icon's name, then its title.
        links = [text.strip().splitlines()[-1] for text in page.locator(NAV_LINKS).all_inner_texts()]
        titles = re.findall(r'st\.Page\("pages/\w+\.py", title="([^"]+)"', (ROOT / "app.py").read_text())
        assert len(titles) >= 8 and links == titles, (links, titles)
        context.close()
    finally:
        server.stop()


def test_first_view_is_timed_against_a_bare_page_and_merged_into_the_section(tmp_path, browser):
    """The first-view action times the app and a bare page in one run; a run of some actions keeps the others' rows."""
    results = tmp_path / "RESULTS.md"
    kept_row = "| a view-only control inside a fragment (kept) | 1 ms | 1 ms | ≤ 150 ms | met | 0.1 → 0.1 |  |"
    results.write_text("# Benchmark results\n\n## App responsiveness in the browser\n\n*Produced by the full run.*\n\n"
                       "| action | browser, median (min–max) | server, median (min–max) | target | | load before → after "
                       "| note |\n|---|---|---|---|---|---|---|\n" + kept_row + "\n\n**Long fits.** kept\n\n"
                       "## Paper tables\n\nkept\n", encoding="utf-8")
    raw = tmp_path / "bench_browser.json"
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.bench_browser", "--actions", "first_view", "--repeats", "1",
         "--write-results", "--results", str(results), "--json", str(raw)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=280, check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    (result,) = json.loads(raw.read_text())["results"]
    # Both pages drew their first chart, in the same run; the target follows the bare page.
    assert len(result["first_chart_s"]) == 1 and len(result["baseline_s"]) == 1
    assert 0 < result["baseline_s"][0] and 0 < result["first_chart_s"][0] <= result["browser_s"][0]
    assert result["target_s"] == pytest.approx(1.25 * result["baseline_s"][0])
    text = results.read_text(encoding="utf-8")
    assert kept_row in text and "*Produced by the full run.*" in text and "## Paper tables\n\nkept" in text
    row = next(line for line in text.splitlines() if line.startswith("| a new session's first chart"))
    assert re.search(r"\| ≤ 1\.25 × the bare page \([\d,]+ ms\) \| (met|missed) \|", row), row
    assert re.search(r"ratio of the medians \d+\.\d\d", row), row
    assert "*The row(s) of first_view: produced by `python -m benchmarks.bench_browser --actions first_view" in text
