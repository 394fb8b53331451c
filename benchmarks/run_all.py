"""Run the benchmark suite and write its sections of ``docs/RESULTS.md``.

    python -m benchmarks.run_all            # everything, about 20-30 minutes on 2 cores
    python -m benchmarks.run_all --quick    # a smoke run of a couple of minutes
    python -m benchmarks.run_all --only speed recovery

Only this suite's sections of the results file are rewritten ("Paper
tables", "DP-RF on Splice", "Subspace recovery", "Speed and scale", "Whole
fits at scale", "App responsiveness in the browser", "Where CRAFT falls short
and why"); any other section (e.g. "Dask backend") is kept as it is. ``--quick`` writes to ``benchmarks/out/RESULTS-quick.md`` unless
``--results`` says otherwise, so a smoke run never replaces the real numbers.
"""

from __future__ import annotations

import argparse
import datetime
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

from .common import OUT, ROOT, machine, replace_sections, save_raw

SECTIONS = {
    "paper": "Paper tables",
    "dprf": "DP-RF on Splice",
    "recovery": "Subspace recovery",
    "speed": "Speed and scale",
    "whole": "Whole fits at scale",
    "browser": "App responsiveness in the browser",
    "study": "Where CRAFT falls short and why",
}
HEADER_START, HEADER_END = "<!-- benchmarks:machine -->", "<!-- /benchmarks:machine -->"


def merge_sections(existing: str, updates: dict[str, str], header: str) -> str:
    """``existing`` Markdown with the ``## title`` sections in ``updates`` replaced (or appended).

    Sections not in ``updates`` keep their text and place; the block between
    the machine markers in the preamble is replaced by ``header``.
    """
    text = existing if existing.strip() else "# Benchmark results\n\n"
    preamble, *rest = re.split(r"(?m)^(?=## )", text, maxsplit=1)
    block = f"{HEADER_START}\n{header.strip()}\n{HEADER_END}"
    if HEADER_START in preamble and HEADER_END in preamble:
        preamble = re.sub(re.escape(HEADER_START) + r".*?" + re.escape(HEADER_END), lambda _: block, preamble, flags=re.S)
    else:
        preamble = preamble.rstrip() + "\n\n" + block + "\n\n"
    return replace_sections(preamble + "".join(rest), updates)


def header_text(info: dict, quick: bool) -> str:
    return "\n".join(
        [
            "Numbers in the sections below marked as produced by `benchmarks/` were measured here, by the command "
            "each section names, on:",
            "",
            f"- **machine**: {info['cpu']}, {info['cores']} cores, {info['memory']} RAM, {info['os']} "
            f"(shared with other jobs while measuring: load average {info['load_average']} at the start)",
            f"- **software**: Python {info['python']}; {info['versions']}; numba threads {info['numba_threads']}",
            f"- **code**: commit {info['commit']}" + (" — **quick smoke run, not the reference numbers**" if quick else ""),
        ]
    )


def provenance(key: str, quick: bool, seconds: float, info: dict) -> str:
    command = "python -m benchmarks.run_all" + (" --quick" if quick else "") + f" --only {key}"
    stamp = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    return (
        f"*Produced by `{command}` (or the whole suite) on {stamp}, in {seconds / 60:.1f} min, at commit {info['commit']}, "
        f"on the machine above (load average {info['load_average']} when the section started).*"
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Run the CRAFT benchmark suite.")
    parser.add_argument("--quick", action="store_true", help="a smoke run of a couple of minutes (used by the tests)")
    parser.add_argument("--only", nargs="+", choices=list(SECTIONS), help="run only these parts")
    parser.add_argument("--results", type=Path, help="Markdown file to update (default docs/RESULTS.md; --quick: benchmarks/out/RESULTS-quick.md)")
    parser.add_argument("--figures", type=Path, help="folder for the recovery figures (default docs/figures; --quick: benchmarks/out/figures)")
    parser.add_argument("--render", action="store_true", help="measure nothing: rebuild the sections from the saved JSON in benchmarks/out")
    args = parser.parse_args(argv)

    results = args.results or (OUT / "RESULTS-quick.md" if args.quick else ROOT / "docs" / "RESULTS.md")
    figures = args.figures or (OUT / "figures" if args.quick else ROOT / "docs" / "figures")
    # Speed first, while nothing else of ours runs; the file keeps the order of SECTIONS.
    # The browser benchmark starts servers and a browser: a run of its own
    # (``--only browser``; its smoke test is tests/browser/test_bench_browser.py), not part of --quick.
    default = [key for key in SECTIONS if not (args.quick and key == "browser")]
    keys = sorted(args.only or default, key=lambda key: (key != "speed", list(SECTIONS).index(key)))
    OUT.mkdir(parents=True, exist_ok=True)

    from . import bench_browser, defaults_study, dprf_splice, paper_tables, recovery, speed

    if args.render:
        return render(keys, args.quick, results, figures)

    info = machine()
    updates: dict[str, str] = {}
    raw: dict[str, Any] = {}
    started = time.perf_counter()
    for key in keys:
        begin = time.perf_counter()
        section_info = machine() if key != keys[0] else info
        print(f"[{key}] {SECTIONS[key]} ...", flush=True)
        if key == "paper":
            data = paper_tables.run(args.quick)
        elif key == "dprf":
            data = dprf_splice.run(args.quick)
        elif key == "recovery":
            data = recovery.run(args.quick, figures)
        elif key == "speed":
            data = speed.run(args.quick)
        elif key == "whole":
            data = speed.run_whole(args.quick)
        elif key == "browser":
            data = bench_browser.run_suite()
        else:
            peers = _best_peers(raw.get("paper") or _previous("paper", args.quick))
            data = defaults_study.run(args.quick, peers)
        seconds = time.perf_counter() - begin
        raw[key] = data
        data["provenance"] = provenance(key, args.quick, seconds, section_info)
        data["header"] = header_text(info, args.quick)
        save_raw(f"{key}{'-quick' if args.quick else ''}", data)
        updates[SECTIONS[key]] = data["provenance"] + "\n\n" + data["markdown"]
        print(f"[{key}] done in {seconds:.0f} s", flush=True)

    updates = {title: updates[title] for title in SECTIONS.values() if title in updates}
    existing = results.read_text(encoding="utf-8") if results.exists() else ""
    results.parent.mkdir(parents=True, exist_ok=True)
    results.write_text(merge_sections(existing, updates, header_text(info, args.quick)), encoding="utf-8")
    print(f"wrote {results} in {(time.perf_counter() - started) / 60:.1f} min", flush=True)
    return 0


def render(keys, quick: bool, results: Path, figures: Path) -> int:
    """Rebuild the sections' Markdown from the saved raw numbers (after a change of wording or layout)."""
    from . import defaults_study, dprf_splice, paper_tables, recovery, speed

    existing = results.read_text(encoding="utf-8") if results.exists() else ""
    updates, header = {}, None
    for key in keys:
        data = _previous(key, quick)
        if data is None:
            print(f"[{key}] no saved numbers in {OUT}; run it first", flush=True)
            continue
        if key == "paper":
            text = paper_tables.markdown(data)
        elif key == "dprf":
            text = dprf_splice.markdown(data, list(dict.fromkeys(k.split("|", 1)[1] for k in data["table"])))
        elif key == "recovery":
            text = recovery.markdown(data, quick, figures)
        elif key == "speed":
            text = speed.markdown(data)
        elif key == "whole":
            text = speed.markdown_whole(data)
        elif key == "browser":
            text = data["markdown"]
        else:
            data["best_peers"] = _best_peers(_previous("paper", quick)) or data.get("best_peers", {})
            text = defaults_study.markdown(data)
        line = data.get("provenance") or _old_provenance(existing, SECTIONS[key]) or ""
        commit = re.search(r"commit ([^\n—]*?)\s*(?:—|$)", data.get("header", ""), flags=re.M)
        if line and "at commit" not in line and commit:
            line = line.replace(", on the machine above", f", at commit {commit.group(1).strip()}, on the machine above")
        updates[SECTIONS[key]] = (line + "\n\n" + text).strip()
        header = data.get("header") or header
    if not updates:
        return 1
    updates = {title: updates[title] for title in SECTIONS.values() if title in updates}
    header = header or _old_header(existing) or header_text(machine(), quick)
    results.write_text(merge_sections(existing, updates, header), encoding="utf-8")
    print(f"re-rendered {', '.join(updates)} in {results}", flush=True)
    return 0


def _old_provenance(text: str, title: str) -> str | None:
    match = re.search(rf"(?m)^## {re.escape(title)}\n\n(\*Produced by .*\*)$", text)
    return match.group(1) if match else None


def _old_header(text: str) -> str | None:
    match = re.search(re.escape(HEADER_START) + r"\n(.*?)\n" + re.escape(HEADER_END), text, flags=re.S)
    return match.group(1) if match else None


def _previous(key: str, quick: bool):
    path = OUT / f"{key}{'-quick' if quick else ''}.json"
    return json.loads(path.read_text()) if path.exists() else None


def _best_peers(paper: dict | None) -> dict:
    """{dataset: {"method", "nmi"}} of the best peer at m = 0.5, from the paper-tables data."""
    if not paper:
        return {}
    from .common import labelled
    from .paper_tables import best_peer

    out = {}
    for name, summary in paper["datasets"].items():
        best = best_peer(summary, 0.5, labelled(name).n_classes)
        if best:
            out[name] = {"method": best[0], "nmi": best[1]}
    return out


if __name__ == "__main__":
    sys.exit(main())
