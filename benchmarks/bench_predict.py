"""Scoring new rows from a saved model: CRAFT against scikit-learn's ``KMeans.predict`` on the one-hot table.

A CRAFT model (k = 10) and a ``KMeans`` (k = 10) are fitted on the same
50,000 rows of ``craft.synthetic.mixed_planted`` (20 numeric and 20
categorical columns of 5 levels, 10 planted clusters); the CRAFT model is
saved to a file. Then 1,000,000 new rows (another seed) are scored, each way
``--repeats`` times, alternated in one process, and the medians reported:

* loading the saved model (``craft.load``);
* ``CRAFT.predict`` on the table as read (its encoding included);
* ``CRAFT.assign`` (cluster, cost, margin, fits_no_cluster);
* ``KMeans.predict`` on the one-hot table given (standardized numbers beside
  one-hot codes, ``Encoder.euclidean``), and that table's encoding timed apart.

``python -m benchmarks.bench_predict --write-results`` replaces the "Scoring
new rows" section of ``docs/RESULTS.md``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.cluster import KMeans

import craft
from craft import CRAFT, synthetic

from .common import machine, md_table, produced_by, publish

TITLE = "Scoring new rows"
K = 10


def table(n_rows: int, seed: int):
    X, _, _ = synthetic.mixed_planted(n_rows, n_clusters=K, n_numeric=20, n_categorical=20, n_levels=5,
                                      random_state=seed)
    return X


def timed(work, *args) -> tuple[float, Any]:
    started = time.perf_counter()
    result = work(*args)
    return time.perf_counter() - started, result


def run(n_fit: int, n_score: int, repeats: int) -> dict:
    fit_rows, new_rows = table(n_fit, 0), table(n_score, 1)
    model = CRAFT(k=K, n_init=1, random_state=0).fit(fit_rows)
    kmeans = KMeans(n_clusters=K, n_init=1, random_state=0).fit(model.encoder_.transform(fit_rows).euclidean())
    times: dict[str, list[float]] = {name: [] for name in ("load", "predict", "assign", "onehot", "kmeans")}
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "model.craft"
        model.save(path)
        size = path.stat().st_size
        onehot = model.encoder_.transform(new_rows).euclidean()
        load_before = os.getloadavg()
        for _ in range(repeats):
            seconds, loaded = timed(craft.load, path)
            times["load"].append(seconds)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                seconds, labels = timed(loaded.predict, new_rows)
                times["predict"].append(seconds)
                seconds, assigned = timed(loaded.assign, new_rows)
                times["assign"].append(seconds)
            times["onehot"].append(timed(lambda table: model.encoder_.transform(table).euclidean(), new_rows)[0])
            times["kmeans"].append(timed(kmeans.predict, onehot)[0])
    assert np.array_equal(labels, model.predict(new_rows)) and np.array_equal(assigned["cluster"], labels)
    return {
        "n_fit": n_fit, "n_score": n_score, "repeats": repeats, "file_bytes": size,
        "onehot_columns": int(onehot.shape[1]), "n_clusters": int(model.n_clusters_),
        "fits_no_cluster": int(assigned["fits_no_cluster"].sum()),
        "medians": {name: statistics.median(values) for name, values in times.items()},
        "all": times, "load_before": list(load_before), "load_after": list(os.getloadavg()),
    }


def markdown(data: dict, info: dict) -> str:
    m = data["medians"]
    n = data["n_score"]
    rows = [
        ["`craft.load` (the saved model)", f"{m['load'] * 1e3:.1f} ms", "—"],
        ["`CRAFT.predict` on the table as read (encoding included)", f"{m['predict']:.2f} s", f"{n / m['predict']:,.0f}"],
        ["`CRAFT.assign` (cluster, cost, margin, fits_no_cluster)", f"{m['assign']:.2f} s", f"{n / m['assign']:,.0f}"],
        ["`KMeans.predict` on the one-hot table given", f"{m['kmeans']:.2f} s", f"{n / m['kmeans']:,.0f}"],
        ["one-hot table (`Encoder.euclidean`) + `KMeans.predict`", f"{m['onehot'] + m['kmeans']:.2f} s",
         f"{n / (m['onehot'] + m['kmeans']):,.0f}"],
    ]
    load = data["load_before"]
    return "\n\n".join([
        f"{n:,} new rows of `craft.synthetic.mixed_planted` (20 numeric + 20 categorical columns of 5 levels, "
        f"seed 1) scored by a CRAFT model (K = {data['n_clusters']}) saved to a file of {data['file_bytes']:,} "
        f"bytes and loaded, and by scikit-learn's `KMeans` (k = {K}) on the one-hot table ({data['onehot_columns']} "
        f"columns: standardized numbers beside one-hot codes); both fitted on the same {data['n_fit']:,} rows of "
        f"seed 0. Medians of {data['repeats']} runs, the methods alternated in one process "
        f"({data['fits_no_cluster']:,} of the new rows fit no cluster).",
        md_table(["step", "median", "rows / s"], rows),
        f"`CRAFT.predict` reads the table as it is (numbers standardized, levels coded) and runs the compiled "
        f"pass; `KMeans.predict` is given its dense one-hot matrix ready, so the last row adds the encoding it "
        f"needs. `assign` runs the same pass a second time, over the other clusters of each row, for the margin. "
        f"Load average {load[0]:.1f} at the start, {data['load_after'][0]:.1f} at the end: other work shared "
        f"the {info['cores']} cores.",
        produced_by("bench_predict", info),
    ])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--fit-rows", type=int, default=50_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--write-results", action="store_true")
    args = parser.parse_args(argv)
    data = run(args.fit_rows, args.rows, args.repeats)
    publish("bench_predict", data, TITLE, markdown(data, machine()), write=args.write_results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
