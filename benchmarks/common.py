"""Helpers shared by the benchmark scripts: data, scores, timing, tables, machine."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from craft import datasets, metrics
from craft.encoding import Encoder
from craft.schema import Schema

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "out"

#: Bundled labelled datasets, in the order of the tables.
LABELLED = ("spambase", "splice", "wine", "credit-g", "soybean", "zoo")


@dataclass(frozen=True)
class Labelled:
    """One bundled dataset with everything the methods need."""

    name: str
    X: pd.DataFrame
    y: np.ndarray
    schema: Schema
    n_classes: int
    euclidean: np.ndarray  # standardized numeric + one-hot, the float encoding of every Euclidean peer

    @property
    def kind(self) -> str:
        if not self.schema.categorical:
            return "numeric"
        if not self.schema.numeric:
            return "categorical"
        return "mixed"


@functools.lru_cache(maxsize=None)
def labelled(name: str) -> Labelled:
    X, y = datasets.load(name)
    schema = datasets.dataset_schema(name)
    encoded = Encoder(list(schema.numeric), list(schema.categorical)).fit_transform(X)
    return Labelled(name, X, y.to_numpy(), schema, int(y.nunique()), encoded.euclidean())


def scores(y, labels) -> tuple[float, float]:
    """(purity, NMI) with the paper's geometric NMI."""
    return float(metrics.purity(y, labels)), float(metrics.nmi(y, labels))


@contextlib.contextmanager
def quiet():
    """Silence the warnings the methods raise on purpose (K not reached, no convergence, ...)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


class Stopwatch:
    """``with Stopwatch() as t: ...; t.seconds``."""

    def __enter__(self):
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.seconds = time.perf_counter() - self.start
        return False


def median(values) -> float:
    values = [v for v in values if v is not None and np.isfinite(v)]
    return float(statistics.median(values)) if values else float("nan")


def fmt(value, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and not np.isfinite(value)):
        return "—"
    return f"{value:.{digits}f}"


def md_table(headers, rows) -> str:
    """A GitHub Markdown table."""
    lines = ["| " + " | ".join(map(str, headers)) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(map(str, row)) + " |" for row in rows]
    return "\n".join(lines)


def machine() -> dict:
    """What the numbers were measured on."""
    import kmodes
    import numba
    import scipy
    import sklearn

    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = ""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                memory = f"{int(line.split()[1]) / 2**20:.0f} GiB"
                break
    except OSError:
        pass
    try:
        commit = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=10
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(ROOT), "status", "--porcelain", "--", "craft"], capture_output=True, text=True, timeout=10
        ).stdout.strip()
        commit += " (craft/ has uncommitted changes)" if dirty else ""
    except (OSError, subprocess.SubprocessError):
        commit = "unknown"
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory": memory,
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "versions": f"numpy {np.__version__}, scipy {scipy.__version__}, scikit-learn {sklearn.__version__}, "
        f"numba {numba.__version__}, kmodes {getattr(kmodes, '__version__', '?')}, pandas {pd.__version__}",
        "numba_threads": numba.get_num_threads(),
        "load_average": ", ".join(f"{x:.2f}" for x in os.getloadavg()),
        "commit": commit,
        "argv": " ".join([Path(sys.executable).name, "-m", "benchmarks.run_all", *sys.argv[1:]]),
    }


RESULTS = ROOT / "docs" / "RESULTS.md"


def save_raw(name: str, data: dict) -> Path:
    """Keep a run's raw numbers as ``benchmarks/out/<name>.json``."""
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"{name}.json"
    path.write_text(json.dumps(data, indent=1, default=str))
    return path


def replace_sections(text: str, updates: dict[str, str]) -> str:
    """Markdown ``text`` with each ``## title`` section named in ``updates`` replaced, or appended.

    A section runs from its heading to the next ``## `` heading; the others
    keep their text and place.
    """
    preamble, *sections = re.split(r"(?m)^(?=## )", text)
    seen = set()
    merged = []
    for section in sections:
        title = section.splitlines()[0][3:].strip()
        if title in updates:
            merged.append(f"## {title}\n\n{updates[title].strip()}\n\n")
            seen.add(title)
        else:
            merged.append(section if section.endswith("\n") else section + "\n")
    for title, body in updates.items():
        if title not in seen:
            merged.append(f"## {title}\n\n{body.strip()}\n\n")
    return (preamble.rstrip() + "\n\n" + "".join(merged)).rstrip() + "\n"


def write_sections(updates: dict[str, str], path: Path = RESULTS) -> None:
    """Replace (or append) the ``## title`` sections in ``updates`` of the results file."""
    existing = path.read_text(encoding="utf-8") if path.exists() else "# Benchmark results\n"
    path.write_text(replace_sections(existing, updates), encoding="utf-8")


def produced_by(module: str, info: dict, *, seconds: float | None = None) -> str:
    """The provenance line that ends a standalone benchmark's section (``info`` from :func:`machine`)."""
    took = "" if seconds is None else f" in {seconds:.0f} s"
    return (f"*Produced by `python -m benchmarks.{module} --write-results` on {time.strftime('%Y-%m-%d %H:%M')}{took}, "
            f"{info['cpu']} ({info['cores']} cores, load average {info['load_average']}: a shared machine), "
            f"commit {info['commit']}.*")


def publish(name: str, data: dict, title: str, text: str, *, write: bool, path: Path = RESULTS) -> None:
    """A standalone benchmark's ending: raw numbers to ``benchmarks/out/<name>.json``, ``text`` printed and,
    with ``write``, put in the results file as its ``## title`` section."""
    save_raw(name, data)
    print(text)
    if write:
        write_sections({title: text}, path)


def quick_or_full_main(argv, *, name: str, title: str, description: str, quick_help: str, run, markdown,
                       options=None) -> int:
    """The command line of a standalone benchmark with a ``--quick`` mode: ``run(quick=...)``, then
    :func:`publish` of ``markdown(data, machine())`` as ``name`` (``name-quick`` for a quick run).

    ``options(parser)``, where given, adds the benchmark's own options; their values are passed to ``run`` by
    their names (``run(quick=..., rows=...)``)."""
    import argparse

    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--quick", action="store_true", help=quick_help)
    parser.add_argument("--write-results", action="store_true", help="replace the section in docs/RESULTS.md")
    parser.add_argument("--results", type=Path, default=None, help="the results file --write-results updates")
    if options is not None:
        options(parser)
    args = parser.parse_args(argv)
    own = {key: value for key, value in vars(args).items() if key not in ("quick", "write_results", "results")}
    data = run(quick=args.quick, **own)
    publish(f"{name}-quick" if args.quick else name, data, title, markdown(data, machine()),
            write=args.write_results, path=args.results or RESULTS)
    return 0
