"""Speed and scale: CRAFT against kmodes' KPrototypes and scikit-learn's KMeans.

Peers run in the same invocation on the same machine, each measurement in a
fresh subprocess (so peak memory is the process's own high-water mark, reset
after the data are loaded and encoded, through ``/proc/self/clear_refs``).

* Real data: Spambase (4601 x 57 numeric, k = 2) and credit-g (1000 x 20
  mixed, k = 2), whole fits repeated, medians; and Spambase's fit with
  CRAFT's defaults against scikit-learn's ``KMeans()`` in one process, the
  two alternating, as the ratio of their medians (target: at most 3x).
* Synthetic mixed data: ``craft.synthetic.mixed_planted`` with 10 planted
  clusters, 20 numeric + 20 categorical columns of 5 levels, at 10k, 100k and
  1M rows. CRAFT is called through the engine on data encoded once, with one
  lambda (from ``CRAFT(k=10)`` on a 50k-row sample) so that K is about 10 at
  every size; KMeans gets the same K on the standardized + one-hot encoding;
  KPrototypes the same K on standardized numbers + level codes, one
  initialisation (``n_init=1``, Cao), iterations capped, and a fit that runs
  past 5 minutes is stopped (the iterations it finished are still timed).
* The hot pass at 1M rows: ``cost_matrix(...).argmin(1)`` (NumPy, an (N, K)
  matrix) against ``nearest_cluster(...)`` (the numba kernel).
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import threading
import time
from typing import Any
from pathlib import Path

import numpy as np

from .common import OUT, fmt, md_table, produced_by, quick_or_full_main

SPEED_DIR = OUT / "speed"
SIZES_FULL = (10_000, 100_000, 1_000_000)
K_SYNTHETIC = 10
PEER_LIMIT_S = 300.0
PAPER_SPAM_SECONDS = 0.39
#: Most a Spambase fit with CRAFT's defaults may take, in units of ``KMeans()``'s fit in the same process.
SPAM_KMEANS_RATIO = 3.0


# ----------------------------------------------------------------------------
# memory
# ----------------------------------------------------------------------------
def _status(field: str) -> int:
    """A VmXXX field of /proc/self/status in bytes (0 where unavailable)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def reset_peak() -> int:
    """Reset the peak RSS (Linux) and return the current RSS in bytes."""
    gc.collect()
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass
    return _status("VmRSS")


def peak() -> int:
    return _status("VmHWM")


# ----------------------------------------------------------------------------
# data
# ----------------------------------------------------------------------------
def synthetic_path(n: int) -> Path:
    return SPEED_DIR / f"mixed_{n}.pkl"


def prepare(n: int) -> Path:
    """Generate and cache the synthetic table of n rows."""
    from craft.synthetic import mixed_planted

    path = synthetic_path(n)
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        X, y, _ = mixed_planted(n, n_clusters=K_SYNTHETIC, n_numeric=20, n_categorical=20, n_levels=5, random_state=0)
        X["__class"] = y
        X.to_pickle(path)
        del X
        gc.collect()
    return path


def _load(spec):
    """(table, schema-like (numeric, categorical), labels) for a worker spec."""
    import pandas as pd

    from craft import datasets

    if spec["data"] in ("spambase", "credit-g"):
        X, y = datasets.load(spec["data"])
        schema = datasets.dataset_schema(spec["data"])
        return X, list(schema.numeric), list(schema.categorical), y.to_numpy()
    X = pd.read_pickle(synthetic_path(int(spec["data"])))
    y = X.pop("__class").to_numpy()
    numeric = [c for c in X.columns if X[c].dtype.kind == "f"]
    categorical = [c for c in X.columns if c not in numeric]
    return X, numeric, categorical, y


# ----------------------------------------------------------------------------
# workers (run in a subprocess)
# ----------------------------------------------------------------------------
def worker(spec: dict) -> dict:
    method = spec["method"]
    workers = {
        "craft_engine": _craft_engine, "craft_fit": _craft_fit, "kmeans": _kmeans, "kprototypes": _kprototypes,
        "craft_whole": _craft_whole, "kmeans_whole": _kmeans_whole, "kmeans_ratio": _kmeans_ratio,
    }
    return workers[method](spec)


def _craft_engine(spec):
    from craft import CRAFT, _engine, prior_terms
    from craft.encoding import Encoder

    X, numeric, categorical, y = _load(spec)
    start = time.perf_counter()
    data = Encoder(numeric, categorical).fit_transform(X)
    encode_seconds = time.perf_counter() - start
    del X
    # The selection options this benchmark does not set are the estimator's defaults.
    defaults = CRAFT().get_params()
    options = _engine.Options(
        terms=prior_terms(0.5), lam=float(spec["lam"]), max_iter=int(spec["max_iter"]), n_seeds=K_SYNTHETIC,
        smoothing=1.0, min_variance=0.3, init="craft++", keep_labels=False,
        **{name: defaults[name] for name in ("budget", "eps_c", "eps_v", "rho_selection", "noise")},
    )
    # Compile (or load the cached compilation of) the kernels before timing.
    small = data.take(np.arange(min(2000, data.n_samples)))
    _engine.run(small, options, np.random.default_rng(0))
    runs = []
    result = None
    for repeat in range(int(spec.get("repeats", 1))):
        rss_before = reset_peak()
        stamps: list[float] = []
        begin = time.perf_counter()
        result = _engine.run(data, options, np.random.default_rng(repeat), callback=lambda record, stamps=stamps: stamps.append(time.perf_counter()))
        total = time.perf_counter() - begin
        per_iteration = np.diff([begin, *stamps])
        runs.append(
            {
                "total_s": total, "n_iter": result.n_iter, "k": result.n_clusters,
                "s_per_iter": float(np.median(per_iteration)), "iterations_s": per_iteration.tolist(),
                "peak_bytes": peak(), "rss_before_bytes": rss_before,
            }
        )
    out = {"encode_s": encode_seconds, "runs": runs}
    if spec.get("hot_pass"):
        assert result is not None  # at least one repeat ran
        clusters, terms = result.clusters, options.terms
        numba_times, numpy_times = [], []
        for _ in range(5):
            t = time.perf_counter()
            _, fast = _engine.nearest_cluster(data, clusters, terms)
            numba_times.append(time.perf_counter() - t)
        rss = reset_peak()
        for _ in range(3):
            t = time.perf_counter()
            slow = _engine.cost_matrix(data, clusters, terms).argmin(1)
            numpy_times.append(time.perf_counter() - t)
        out["hot_pass"] = {
            "k": clusters.n_clusters, "numba_s": numba_times, "numpy_s": numpy_times,
            "same_labels": bool((fast == slow).all()), "numpy_peak_extra_bytes": peak() - rss,
        }
    return out


def _craft_fit(spec):
    """Whole estimator fits on a real dataset, repeated."""
    import warnings

    from craft import CRAFT

    X, numeric, categorical, y = _load(spec)
    from craft.schema import Schema

    schema = Schema(numeric=tuple(numeric), categorical=tuple(categorical), ignored=(), reasons={c: "benchmark" for c in X.columns})
    options = dict(spec["options"])
    warnings.simplefilter("ignore")
    CRAFT(categorical=schema, **options).fit(X)  # compile / warm caches
    times, iterations = [], []
    for repeat in range(int(spec["repeats"])):
        records: list = []
        model = CRAFT(categorical=schema, **{**options, "random_state": repeat})
        start = time.perf_counter()
        model.fit(X, callback=records.append)
        times.append(time.perf_counter() - start)
        iterations.append(len(records))
    return {"fit_s": times, "iterations": iterations, "k": int(model.n_clusters_), "lam": float(model.lam_)}


def _kmeans_ratio(spec):
    """``CRAFT(m=0.5, k=2)`` at its defaults against scikit-learn's ``KMeans(2)`` at its defaults, in one process.

    The two fits alternate, one of each per round, so that both meet the same
    load; KMeans gets the standardized table CRAFT encodes (its encoding is
    not timed, CRAFT's is part of its fit).
    """
    import warnings

    from sklearn.cluster import KMeans

    from craft import CRAFT
    from craft.encoding import Encoder
    from craft.schema import Schema

    X, numeric, categorical, y = _load(spec)
    schema = Schema(numeric=tuple(numeric), categorical=tuple(categorical), ignored=(), reasons={c: "benchmark" for c in X.columns})
    Z = Encoder(numeric, categorical).fit_transform(X).euclidean()
    warnings.simplefilter("ignore")
    CRAFT(m=0.5, k=2, categorical=schema).fit(X)  # compile / warm caches
    KMeans(n_clusters=2).fit(Z)
    craft_s, kmeans_s = [], []
    for repeat in range(int(spec["repeats"])):
        start = time.perf_counter()
        CRAFT(m=0.5, k=2, categorical=schema, random_state=repeat).fit(X)
        craft_s.append(time.perf_counter() - start)
        start = time.perf_counter()
        KMeans(n_clusters=2, random_state=repeat).fit(Z)
        kmeans_s.append(time.perf_counter() - start)
    return {"craft_s": craft_s, "kmeans_s": kmeans_s, "load": os.getloadavg()[0]}


def _kmeans(spec):
    from sklearn.cluster import KMeans

    from craft.encoding import Encoder

    X, numeric, categorical, y = _load(spec)
    Z = Encoder(numeric, categorical).fit_transform(X).euclidean()
    del X
    from sklearn.cluster import kmeans_plusplus

    runs = []
    for repeat in range(int(spec.get("repeats", 1))):
        rss_before = reset_peak()
        # k-means++ seeding timed apart, so that s/iteration is Lloyd's iterations only.
        start = time.perf_counter()
        centers, _ = kmeans_plusplus(Z, n_clusters=int(spec["k"]), random_state=repeat)
        seeded = time.perf_counter()
        model = KMeans(n_clusters=int(spec["k"]), init=centers, n_init=1, max_iter=int(spec["max_iter"]), random_state=repeat)
        model.fit(Z)
        end = time.perf_counter()
        runs.append(
            {
                "total_s": end - start, "init_s": seeded - start, "n_iter": int(model.n_iter_),
                "s_per_iter": (end - seeded) / max(int(model.n_iter_), 1), "peak_bytes": peak(), "rss_before_bytes": rss_before,
            }
        )
    return {"runs": runs}


def _craft_whole(spec):
    """``CRAFT(m=0.5, k=10)`` with every other parameter at its default, from the DataFrame to labels."""
    import warnings

    from craft import CRAFT, metrics
    from craft.encoding import Encoder

    from craft import warm_up

    X, numeric, categorical, y = _load(spec)
    warnings.simplefilter("ignore")
    warm_up()  # every compiled kernel loaded, both memory layouts of the numeric block
    CRAFT(m=0.5, k=K_SYNTHETIC, random_state=0).fit(X.iloc[:5000])
    encode, encode_cpu = [], []
    for _ in range(3):
        start, cpu = time.perf_counter(), time.process_time()
        Encoder(numeric, categorical).fit_transform(X)
        encode.append(time.perf_counter() - start)
        encode_cpu.append(time.process_time() - cpu)
    runs = []
    for repeat in range(int(spec.get("repeats", 1))):
        load = os.getloadavg()[0]
        start = time.perf_counter()
        model = CRAFT(m=0.5, k=K_SYNTHETIC, random_state=int(spec.get("seed", 0)) + repeat).fit(X)
        total = time.perf_counter() - start
        runs.append({"total_s": total, "k": int(model.n_clusters_), "nmi": float(metrics.nmi(y, model.labels_)),
                     "n_iter": int(model.n_iter_), "load": load})
    return {"encode_s": encode, "encode_cpu_s": encode_cpu, "runs": runs}


def _kmeans_whole(spec):
    """scikit-learn's ``KMeans(10)`` (its defaults) on the standardized one-hot table, building it included."""
    from sklearn.cluster import KMeans

    from craft import metrics
    from craft.encoding import Encoder

    X, numeric, categorical, y = _load(spec)
    runs = []
    for repeat in range(int(spec.get("repeats", 1))):
        load = os.getloadavg()[0]
        start = time.perf_counter()
        Z = Encoder(numeric, categorical).fit_transform(X).euclidean()
        built = time.perf_counter()
        model = KMeans(n_clusters=K_SYNTHETIC, random_state=int(spec.get("seed", 0)) + repeat).fit(Z)
        total = time.perf_counter() - start
        del Z
        runs.append({"total_s": total, "build_s": built - start, "k": K_SYNTHETIC,
                     "nmi": float(metrics.nmi(y, model.labels_)), "n_iter": int(model.n_iter_), "load": load})
    return {"runs": runs}


def _kprototypes(spec):
    """One KPrototypes fit, timestamps per iteration streamed to a file; stopped after PEER_LIMIT_S."""
    import kmodes.kprototypes as kp

    X, numeric, categorical, y = _load(spec)
    numbers = X[numeric].to_numpy(dtype=float)
    numbers = (numbers - numbers.mean(axis=0)) / np.where(numbers.std(axis=0) > 0, numbers.std(axis=0), 1.0)
    codes = np.column_stack([X[c].astype("category").cat.codes.to_numpy() for c in categorical]).astype(float)
    matrix = np.hstack([numbers, codes])
    cat_index = list(range(len(numeric), len(numeric) + len(categorical)))
    del X, numbers, codes
    progress = Path(spec["progress"])
    progress.write_text("")
    original = kp._k_prototypes_iter

    def timed_iter(*args, **kwargs):
        with progress.open("a") as handle:
            handle.write(f"iter {time.perf_counter()}\n")
        return original(*args, **kwargs)

    kp._k_prototypes_iter = timed_iter
    rss_before = reset_peak()
    start = time.perf_counter()
    with progress.open("a") as handle:
        handle.write(f"start {start} {rss_before}\n")

    def stop():
        with progress.open("a") as handle:
            handle.write(f"stopped {time.perf_counter()} {peak()}\n")
        os._exit(3)

    timer = threading.Timer(float(spec.get("limit_s", PEER_LIMIT_S)), stop)
    timer.daemon = True
    timer.start()
    model = kp.KPrototypes(n_clusters=int(spec["k"]), n_init=1, init="Cao", max_iter=int(spec["max_iter"]), random_state=0)
    model.fit(matrix, categorical=cat_index)
    end = time.perf_counter()
    timer.cancel()
    with progress.open("a") as handle:
        handle.write(f"end {end} {peak()}\n")
    return _kprototypes_progress(progress) | {"n_iter": int(model.n_iter_)}


def _kprototypes_progress(progress: Path) -> dict:
    """Per-iteration times from the stream of timestamps (works for a stopped fit too)."""
    lines = [line.split() for line in progress.read_text().splitlines() if line.strip()]
    start = next(float(fields[1]) for fields in lines if fields[0] == "start")
    rss_before = next(int(fields[2]) for fields in lines if fields[0] == "start")
    iters = [float(fields[1]) for fields in lines if fields[0] == "iter"]
    finish = [fields for fields in lines if fields[0] in ("end", "stopped")]
    stopped = bool(finish) and finish[-1][0] == "stopped"
    end = float(finish[-1][1]) if finish else None
    peak_bytes = int(finish[-1][2]) if finish else None
    # Interval i runs from the start of iteration i to the start of i + 1 (or the end of the fit).
    marks = iters + ([end] if (end is not None and not stopped) else [])
    per_iteration = np.diff(marks).tolist() if len(marks) > 1 else []
    # A fit stopped inside an iteration: that iteration took at least this long.
    unfinished = (end - iters[-1]) if (stopped and iters and end is not None) else None
    return {
        "unfinished_iteration_s": unfinished,
        "init_s": (iters[0] - start) if iters else None,
        "iterations_s": per_iteration,
        "s_per_iter": float(np.median(per_iteration)) if per_iteration else None,
        "completed_iterations": len(per_iteration),
        "total_s": (end - start) if end is not None else None,
        "stopped": stopped,
        "peak_bytes": peak_bytes,
        "rss_before_bytes": rss_before,
    }


# ----------------------------------------------------------------------------
# orchestration
# ----------------------------------------------------------------------------
def call(spec: dict, timeout: float) -> dict:
    """Run one worker in a fresh interpreter; its result, or an error record."""
    command = [sys.executable, "-m", "benchmarks.speed", "--worker", json.dumps(spec)]
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=root, env=env)
    except subprocess.TimeoutExpired:
        return {"error": f"no result within {timeout:.0f} s"}
    for line in reversed(done.stdout.splitlines()):
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    return {"error": f"exit status {done.returncode}: {done.stderr.strip()[-400:]}"}


def lambda_for_k(k: int, sample_rows: int = 50_000) -> dict:
    """Lambda giving about k clusters, from CRAFT(k) on a sample of the 1M table's generator."""
    import warnings

    from craft import CRAFT
    from craft.synthetic import mixed_planted

    X, _, _ = mixed_planted(sample_rows, n_clusters=K_SYNTHETIC, n_numeric=20, n_categorical=20, n_levels=5, random_state=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = CRAFT(m=0.5, k=k, random_state=0).fit(X)
    return {"lam": float(model.lam_), "k": int(model.n_clusters_), "rows": sample_rows}


def run(quick: bool = False) -> dict:
    sizes = (10_000,) if quick else SIZES_FULL
    repeats_real = 3 if quick else 15
    data: dict[str, Any] = {"sizes": list(sizes), "real": {}, "synthetic": {}, "quick": quick}

    # Real datasets: whole fits.
    real_specs: dict[str, list[tuple[str, dict[str, Any]]]] = {
        "spambase": [
            ("CRAFT, paper protocol", {"method": "craft_fit", "options": dict(m=0.5, k=2, k_method="farthest_first", init="random", n_init=1)}),
            ("CRAFT, defaults", {"method": "craft_fit", "options": dict(m=0.5, k=2)}),
            ("CRAFT, defaults, n_init=1", {"method": "craft_fit", "options": dict(m=0.5, k=2, n_init=1)}),
            ("KMeans, n_init=1", {"method": "kmeans", "k": 2, "max_iter": 300}),
        ],
        "credit-g": [
            ("CRAFT, paper protocol", {"method": "craft_fit", "options": dict(m=0.5, k=2, k_method="farthest_first", init="random", n_init=1)}),
            ("CRAFT, defaults", {"method": "craft_fit", "options": dict(m=0.5, k=2)}),
            ("KMeans, n_init=1", {"method": "kmeans", "k": 2, "max_iter": 300}),
            ("KPrototypes, n_init=1", {"method": "kprototypes", "k": 2, "max_iter": 100}),
        ],
    }
    if quick:
        real_specs = {
            "spambase": [entry for entry in real_specs["spambase"] if entry[0] != "CRAFT, defaults, n_init=1"],
            "credit-g": [entry for entry in real_specs["credit-g"] if entry[0].startswith("KPrototypes")],
        }
    SPEED_DIR.mkdir(parents=True, exist_ok=True)
    for name, specs in real_specs.items():
        for label, spec in specs:
            spec = {**spec, "data": name, "repeats": repeats_real, "progress": str(SPEED_DIR / f"progress_{name}.txt")}
            if spec["method"] == "kprototypes":
                results = [call(spec, PEER_LIMIT_S + 120) for _ in range(1 if quick else 5)]
                data["real"][f"{name}|{label}"] = {"runs": results}
            else:
                data["real"][f"{name}|{label}"] = call(spec, 600)
        print(f"  speed: {name} done", flush=True)

    # CRAFT against KMeans() on Spambase, in one process.
    data["spam_ratio"] = call({"method": "kmeans_ratio", "data": "spambase", "repeats": 5 if quick else 31}, 600)
    print("  speed: Spambase against KMeans() done", flush=True)

    # Synthetic mixed data.
    choice = lambda_for_k(K_SYNTHETIC, 20_000 if quick else 50_000)
    data["lambda"] = choice
    for n in sizes:
        prepare(n)
        repeats = 1 if quick else 3
        entry = {}
        entry["CRAFT"] = call(
            {"method": "craft_engine", "data": n, "lam": choice["lam"], "max_iter": 100, "repeats": repeats, "hot_pass": n == max(sizes)},
            900,
        )
        k = _craft_k(entry["CRAFT"]) or K_SYNTHETIC
        entry["KMeans"] = call({"method": "kmeans", "data": n, "k": k, "max_iter": 100, "repeats": repeats}, 900)
        kp_iter = 2 if quick else 5
        progress = SPEED_DIR / f"progress_{n}.txt"
        spec = {"method": "kprototypes", "data": n, "k": k, "max_iter": kp_iter, "progress": str(progress)}
        result = call(spec, PEER_LIMIT_S + 180)
        if "error" in result and progress.exists():
            result = _kprototypes_progress(progress) | {"note": result["error"]}
        entry["KPrototypes"] = result
        data["synthetic"][str(n)] = entry
        print(f"  speed: {n} rows done", flush=True)
    data["markdown"] = markdown(data)
    return data


def _craft_k(result):
    runs = result.get("runs") or []
    return int(runs[0]["k"]) if runs else None


def _median_runs(result, key):
    runs = result.get("runs") or []
    values = [r[key] for r in runs if r.get(key) is not None]
    return float(np.median(values)) if values else None


def _spam_ratio_text(result) -> tuple[str, float | None]:
    """The paragraph of the Spambase comparison with ``KMeans()``, and the ratio of the medians (None without one)."""
    if not result:
        return "", None
    if "error" in result:
        return f"**Spambase against `KMeans()`**: error: {result['error']}", None
    craft_ms, kmeans_ms = 1000 * float(np.median(result["craft_s"])), 1000 * float(np.median(result["kmeans_s"]))
    ratio = craft_ms / kmeans_ms
    text = (
        f"**Spambase against `KMeans()`** ({len(result['craft_s'])} fits of each in one process, alternating, load "
        f"{result['load']:.1f} at the end): `CRAFT(m=0.5, k=2)` with every other parameter at its default, from the "
        f"DataFrame, median {craft_ms:.1f} ms; scikit-learn `KMeans(n_clusters=2)` at its defaults on the standardized "
        f"table, median {kmeans_ms:.1f} ms; ratio {ratio:.2f}×."
    )
    return text, ratio


def _mb(value):
    return "—" if value is None else f"{value / 2**20:,.0f}"


def markdown(data) -> str:  # noqa: C901 - one report, its sections in the order they are printed
    lines = []
    # --- real data
    rows = []
    spam_fit = {}
    for key, result in data["real"].items():
        name, label = key.split("|")
        if "error" in result:
            rows.append([name, label, "error: " + result["error"], "", "", ""])
            continue
        if "fit_s" in result:
            fit = float(np.median(result["fit_s"]))
            iters = float(np.median(result["iterations"]))
            rows.append([name, label, f"{fit * 1000:.1f}", f"{iters:.0f}", f"{fit / max(iters, 1) * 1000:.2f}", result["k"]])
            if name == "spambase":
                spam_fit[label] = fit
        elif "runs" in result and result["runs"] and "total_s" in result["runs"][0] and "n_iter" in result["runs"][0] and "stopped" not in result["runs"][0]:
            fit = _median_runs(result, "total_s")
            iters = _median_runs(result, "n_iter")
            rows.append([name, label, f"{fit * 1000:.1f}", f"{iters:.0f}", f"{fit / max(iters, 1) * 1000:.2f}", 2])
        else:
            runs = [r for r in result["runs"] if "error" not in r]
            median_fit = float(np.median([r["total_s"] for r in runs])) if runs else None
            per = float(np.median([r["s_per_iter"] for r in runs if r.get("s_per_iter")])) if runs else None
            median_iters = float(np.median([r["n_iter"] for r in runs])) if runs else None
            rows.append([name, label, fmt(median_fit * 1000 if median_fit else None, 1), fmt(median_iters, 0),
                         fmt(per * 1000 if per else None, 2), 2])
    lines += [
        "**Real datasets** (whole fit, median of repeated fits in one process after a warm-up; an \"iteration\" is one "
        "assignment pass + update, counted over every run a fit makes, λ search included). The paper reports 0.39 s "
        "for CRAFT on Spam at m = 0.5 (its own machine). KPrototypes needs a categorical column, so it has no Spambase row.",
        "",
        md_table(["Dataset", "Method", "fit, ms", "iterations", "ms / iteration", "K"], rows),
        "",
    ]
    ratio_line, spam_ratio = _spam_ratio_text(data.get("spam_ratio"))
    if ratio_line:
        lines += [ratio_line, ""]
    # --- synthetic
    rows = []
    by_size: dict[str, Any] = {}
    for n, entry in data["synthetic"].items():
        craft = entry["CRAFT"]
        craft_iter = _median_runs(craft, "s_per_iter")
        for method in ("CRAFT", "KMeans", "KPrototypes"):
            result = entry[method]
            if "error" in result and "runs" not in result:
                rows.append([f"{int(n):,}", method, "error: " + result["error"], "", "", "", "", ""])
                continue
            if method == "KPrototypes":
                per = result.get("s_per_iter")
                total = result.get("total_s")
                iters = result.get("completed_iterations")
                peak_b, before = result.get("peak_bytes"), result.get("rss_before_bytes")
                note = ""
                if result.get("stopped"):
                    note = f"stopped after {PEER_LIMIT_S / 60:.0f} min: initialisation {fmt(result.get('init_s'), 0)} s, {iters} iteration(s) finished"
                    if result.get("unfinished_iteration_s"):
                        note += f", the next still running after {result['unfinished_iteration_s']:.0f} s"
                elif result.get("init_s") is not None:
                    note = f"init {result['init_s']:.1f} s; capped at {iters} iterations"
                k = _craft_k(craft) or K_SYNTHETIC
            else:
                per = _median_runs(result, "s_per_iter")
                total = _median_runs(result, "total_s")
                iters = _median_runs(result, "n_iter")
                peak_b, before = _median_runs(result, "peak_bytes"), _median_runs(result, "rss_before_bytes")
                note = f"median of {len(result['runs'])} runs"
                if method == "CRAFT":
                    fastest = min(min(r["iterations_s"]) for r in result["runs"] if r.get("iterations_s"))
                    note += f"; fastest iteration {fastest:.3f} s"
                k = _craft_k(craft) if method == "CRAFT" else _craft_k(craft) or K_SYNTHETIC
            ratio = (per / craft_iter) if (per and craft_iter) else None
            shown_per = fmt(per, 3)
            if per is None and method == "KPrototypes" and result.get("unfinished_iteration_s"):
                lower = result["unfinished_iteration_s"]
                shown_per = f"> {lower:.0f}"
                ratio = None
                ratio_text = f"> {lower / craft_iter:,.0f}×" if craft_iter else "—"
            else:
                ratio_text = None
            by_size.setdefault(n, {})[method] = per
            rows.append(
                [
                    f"{int(n):,}", method, k, fmt(iters, 0) if iters is not None else "—", shown_per, fmt(total, 2),
                    f"{_mb(peak_b)} ({_mb(None if peak_b is None or before is None else max(peak_b - before, 0))})",
                    ratio_text or ((f"{ratio:,.0f}×" if ratio >= 10 else fmt(ratio, 2) + "×") if ratio else "—"),
                    note,
                ]
            )
    lam = data.get("lambda", {})
    lines += [
        f"**Synthetic mixed data** (20 numeric + 20 categorical columns of 5 levels, 10 planted clusters; λ = "
        f"{lam.get('lam', float('nan')):.4g} from `CRAFT(m=0.5, k=10)` on a {lam.get('rows', 0):,}-row sample, which "
        f"found K = {lam.get('k', '?')}). Each measurement in a fresh process; s/iteration is the median over the "
        "iterations of a run (CRAFT: from the per-iteration callback, its seeding inside the first iteration; KMeans: "
        "Lloyd time / `n_iter_`, its k-means++ seeding timed apart; KPrototypes: between the starts of its iterations, "
        "its initialisation excluded). Total s includes every seeding. Peak memory is the process's peak RSS "
        "during the fit, data included (in parentheses: above the RSS just before the fit).",
        "",
        md_table(["rows", "method", "K", "iterations", "s / iteration", "total s", "peak RSS MiB (added)", "× CRAFT per iteration", "note"], rows),
        "",
    ]
    # --- scaling
    craft_times = {int(n): by_size[n].get("CRAFT") for n in by_size}
    if len(craft_times) > 1:
        base_n = min(craft_times)
        scale = "; ".join(
            f"{n:,} rows: {t / n * 1e6:.3f} µs per row per iteration" for n, t in sorted(craft_times.items()) if t
        )
        lines += [f"**Scaling of CRAFT's iteration with rows**: {scale} (linear cost keeps this constant; from {base_n:,} rows).", ""]
    # --- hot pass
    top = data["synthetic"].get(str(max(data["sizes"]))) if data["synthetic"] else None
    hot = top["CRAFT"].get("hot_pass") if top and "CRAFT" in top else None
    if hot:
        numba_t, numpy_t = float(np.median(hot["numba_s"])), float(np.median(hot["numpy_s"]))
        lines += [
            f"**Hot pass at {int(max(data['sizes'])):,} rows, K = {hot['k']}** (median of 5 / 3 calls; same labels: "
            f"{'yes' if hot['same_labels'] else 'NO'}): numba kernel `nearest_cluster` {numba_t:.3f} s; NumPy "
            f"`cost_matrix(...).argmin(1)` {numpy_t:.3f} s (it also allocates {_mb(hot['numpy_peak_extra_bytes'])} MiB "
            f"above the fit's footprint); ratio {numpy_t / numba_t:.1f}×.",
            "",
        ]
    # --- targets
    targets = []
    if "CRAFT, paper protocol" in spam_fit or "CRAFT, defaults" in spam_fit:
        for label, value in spam_fit.items():
            if label.startswith("CRAFT"):
                targets.append([f"Spambase fit, {label.removeprefix('CRAFT, ')}", "≤ 30 ms median", f"{value * 1000:.1f} ms",
                                "met" if value <= 0.030 else "missed", f"paper: {PAPER_SPAM_SECONDS * 1000:.0f} ms"])
    if spam_ratio is not None:
        targets.append(["Spambase, `CRAFT(m=0.5, k=2)` ÷ `KMeans(2)`, same process", f"≤ {SPAM_KMEANS_RATIO:g}×",
                        f"{spam_ratio:.2f}×", "met" if spam_ratio <= SPAM_KMEANS_RATIO else "missed",
                        # KMeans runs on every core: on a loaded machine it loses more than CRAFT's serial passes.
                        f"medians, alternating; load {data['spam_ratio']['load']:.1f}"])
    big = str(1_000_000)
    if big in data["synthetic"]:
        entry = data["synthetic"][big]
        per = _median_runs(entry["CRAFT"], "s_per_iter")
        peak_b = _median_runs(entry["CRAFT"], "peak_bytes")
        if per is not None:
            targets.append(["1M rows, s / iteration", "≤ 0.35 s", f"{per:.3f} s", "met" if per <= 0.35 else "missed", ""])
        if peak_b is not None:
            targets.append(["1M rows, peak memory", "≤ 2 GB", f"{peak_b / 1e9:.2f} GB", "met" if peak_b <= 2e9 else "missed",
                            "process peak RSS, data included"])
    hundred = str(100_000)
    if hundred in data["synthetic"]:
        entry = data["synthetic"][hundred]
        craft_iter = _median_runs(entry["CRAFT"], "s_per_iter")
        kp = entry["KPrototypes"].get("s_per_iter")
        if craft_iter and kp:
            ratio = kp / craft_iter
            targets.append(["100k rows, KPrototypes ÷ CRAFT per iteration", "≥ 100×", f"{ratio:,.0f}×", "met" if ratio >= 100 else "missed", "same K"])
    if len(craft_times) == 3 and all(craft_times.values()):
        per_row = [craft_times[n] / n for n in sorted(craft_times)]
        spread = max(per_row[1:]) / min(per_row[1:])
        targets.append(["cost linear in rows (100k → 1M)", "per-row time constant", f"per-row ratio 1M / 100k = {per_row[2] / per_row[1]:.2f}",
                        "met" if spread < 1.5 else "missed", "10k is dominated by fixed costs"])
    if targets:
        lines += ["**Targets**", "", md_table(["what", "target", "measured", "", "note"], targets), ""]
    return "\n".join(lines)


# ----------------------------------------------------------------------------
# whole fits at scale (its own section: "Whole fits at scale")
# ----------------------------------------------------------------------------
WHOLE_ROWS = 1_000_000


def run_whole(quick: bool = False) -> dict:
    """CRAFT with its defaults against KMeans with its encoding, end to end, alternating, same table."""
    n = 20_000 if quick else WHOLE_ROWS
    repeats = 1 if quick else 3
    prepare(n)
    data: dict[str, Any] = {"rows": n, "repeats": repeats, "load_before": os.getloadavg()[0], "CRAFT": [], "KMeans": []}
    # One fit per subprocess, the methods alternating, so that both meet the same load.
    for repeat in range(repeats):
        for method, worker_name in (("CRAFT", "craft_whole"), ("KMeans", "kmeans_whole")):
            result = call({"method": worker_name, "data": n, "repeats": 1, "seed": repeat}, 900)
            data[method].append(result)
        print(f"  whole fits: round {repeat + 1} of {repeats} done", flush=True)
    data["load_after"] = os.getloadavg()[0]
    data["markdown"] = markdown_whole(data)
    return data


def _whole_runs(results: list) -> list:
    return [run for result in results if "runs" in result for run in result["runs"]]


def markdown_whole(data: dict) -> str:
    n = int(data["rows"])
    craft, kmeans = _whole_runs(data["CRAFT"]), _whole_runs(data["KMeans"])
    errors = [result["error"] for method in ("CRAFT", "KMeans") for result in data[method] if "error" in result]
    rows = []
    medians = {}
    for method, runs, what in (
        ("CRAFT", craft, "`CRAFT(m=0.5, k=10)`, every other parameter at its default, from the DataFrame "
                         "(schema inference, encoding, λ search, restarts, passes)"),
        ("KMeans", kmeans, "`Encoder(...).fit_transform(X).euclidean()` then scikit-learn `KMeans(n_clusters=10)` at its defaults"),
    ):
        if not runs:
            continue
        totals = [run["total_s"] for run in runs]
        medians[method] = float(np.median(totals))
        extra = ""
        if method == "KMeans":
            extra = f"; building the table {np.median([run['build_s'] for run in runs]):.1f} s"
        rows.append([
            method, f"{medians[method]:.1f}", f"{min(totals):.1f} – {max(totals):.1f}", f"{np.median([run['nmi'] for run in runs]):.3f}",
            ", ".join(str(run["k"]) for run in runs), ", ".join(f"{run['load']:.1f}" for run in runs), what + extra,
        ])
    encode = [value for result in data["CRAFT"] for value in result.get("encode_s", [])]
    intro = (
        f"{n:,} rows × (20 numeric + 20 categorical columns of 5 levels), 10 planted clusters "
        "(`craft.synthetic.mixed_planted(..., random_state=0)`, the table of the speed section). Each fit in a fresh "
        f"process after its kernels are loaded, CRAFT and KMeans alternating, {data['repeats']} of each; NMI on the "
        f"planted labels. Load average (1 min) {data['load_before']:.1f} at the start, {data['load_after']:.1f} at the "
        "end, on 2 cores shared with other work: times are wall-clock and rise with the load."
    )
    lines = [
        intro,
        "",
        md_table(["method", "median s", "range s", "NMI", "K per fit", "load at each fit", "what is timed"], rows),
        "",
    ]
    if encode:
        summary = f"median {np.median(encode):.2f} s, fastest {min(encode):.2f} s"
        cpu = [value for result in data["CRAFT"] for value in result.get("encode_cpu_s", [])]
        if cpu:
            # CPU time does not include waiting for a core, which on a shared machine is most of the rest.
            summary += f"; CPU time median {np.median(cpu):.2f} s"
        lines += [f"**Encoding alone** (`Encoder.fit_transform`, {len(encode)} calls): {summary}.", ""]
    targets = []
    if "CRAFT" in medians:
        targets.append(["CRAFT end to end", "≤ 10 s", f"{medians['CRAFT']:.1f} s", "met" if medians["CRAFT"] <= 10 else "missed"])
    if "CRAFT" in medians and "KMeans" in medians:
        ratio = medians["KMeans"] / medians["CRAFT"]
        targets.append(["KMeans-with-encoding ÷ CRAFT", "≥ 4×", f"{ratio:.1f}×", "met" if ratio >= 4 else "missed"])
    if craft:
        worst = min(run["nmi"] for run in craft)
        targets.append(["CRAFT NMI, every fit", "≥ 1.0", f"{worst:.3f}", "met" if worst >= 0.9995 else "missed"])
    if encode:
        targets.append(["encoding", "≤ 0.5 s", f"{np.median(encode):.2f} s (median)", "met" if np.median(encode) <= 0.5 else "missed"])
    if targets and n == WHOLE_ROWS:
        lines += [md_table(["what", "target", "measured", ""], targets), ""]
    if errors:
        lines += ["Errors: " + "; ".join(errors), ""]
    lines.append(
        "How: above 50,000 rows `CRAFT` searches λ and makes its 10 restarts on a uniform sample of 50,000 rows "
        "(`craft.estimator.SEARCH_ROWS`), then starts the passes over every row from the kept run's clusters "
        "(docs/numerics.md, \"Large tables\"); encoding reads the numeric block once for its checks and once for "
        "the standardized copy (compiled), and gathers level codes row-major. Tables of up to 50,000 rows are "
        "searched, restarted and fitted on every row."
    )
    return "\n".join(lines)


def main(argv=None) -> int:
    from .run_all import SECTIONS

    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--worker"]:
        # One measurement in a fresh process (run's own subprocesses), not a command for people.
        print("RESULT " + json.dumps(worker(json.loads(argv[1]))), flush=True)
        return 0
    # --whole picks the other benchmark of this module (the whole-fit comparison at 1M rows), its own section.
    key = "whole" if "--whole" in argv else "speed"
    argv = [arg for arg in argv if arg != "--whole"]
    return quick_or_full_main(argv, name=key, title=SECTIONS[key],
                              description=__doc__.splitlines()[0] + " (--whole: the whole-fit comparison at 1M rows)",
                              quick_help="smaller tables (run_all --quick's section)",
                              run=run_whole if key == "whole" else run,
                              markdown=lambda data, info: data["markdown"] + "\n\n" + produced_by("speed", info))


if __name__ == "__main__":
    raise SystemExit(main())
