"""Cost of a stability run: 20 bootstrap refits of a 10,000-row fit, in a background thread.

The fit is the app's for the ``mixed_planted`` example (k = 4, its other
parameters at the app's defaults, so ``n_init`` = 10 and λ searched again in
every refit). :func:`craft.stability.bootstrap_stability` then runs in a
thread of its own, as the app runs it (:mod:`explorer.evidence`), while the
main thread keeps timing a small piece of work (the mask heatmap of the fit)
to show what the rest of the process can still do meanwhile.

``python -m benchmarks.stability --write-results`` replaces the "Stability and
trust" section of ``docs/RESULTS.md``.
"""

from __future__ import annotations

import argparse
import os
import threading
import time

TITLE = "Stability and trust"


def run(n_rows: int, n_resamples: int) -> dict:
    import warnings

    from craft import plots, stability, warm_up
    from explorer import services

    warnings.simplefilter("ignore")
    warm_up()
    data = services.load_example("mixed_planted", n_samples=n_rows, seed=0)
    schema, _ = services.fit_schema(data, {}, data.label)
    params = services.FitParams(k=4)
    load_before = os.getloadavg()
    outcome = services.fit_craft(data.table, schema, params)
    model = outcome.model
    assert model is not None, outcome.error
    X = services.fitted_X(model, data.table)
    done: dict = {}

    def work():
        started = time.perf_counter()
        done["result"] = stability.bootstrap_stability(model, X, n_resamples=n_resamples, random_state=0)
        done["seconds"] = time.perf_counter() - started

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    figure_seconds = []
    while thread.is_alive():
        started = time.perf_counter()
        plots.fig_feature_masks(model)
        figure_seconds.append(time.perf_counter() - started)
        thread.join(0.5)
    result = done["result"]
    figure_seconds.sort()
    return dict(
        n_rows=n_rows, n_resamples=n_resamples, fit_seconds=outcome.seconds, seconds=done["seconds"],
        per_refit=done["seconds"] / n_resamples, n_init=model.n_init, k=model.k,
        load_before=list(load_before), load_after=list(os.getloadavg()), cpus=os.cpu_count(),
        mean_jaccard=result.mean_jaccard.tolist(), unstable=int(result.unstable.sum()),
        resample_k=sorted(set(result.resample_k.tolist())),
        figure_median=figure_seconds[len(figure_seconds) // 2], figure_max=figure_seconds[-1],
        figure_count=len(figure_seconds),
    )


def markdown(results: dict) -> str:
    from benchmarks.common import machine, md_table, produced_by

    info = machine()
    rows = [[f"{results['n_rows']:,}", str(results["n_resamples"]), f"{results['fit_seconds']:.1f}",
             f"{results['seconds']:.0f}", f"{results['per_refit']:.1f}",
             ", ".join(f"{j:.2f}" for j in results["mean_jaccard"]),
             f"{results['figure_median'] * 1000:.0f} / {results['figure_max'] * 1000:.0f}"]]
    load = results["load_before"]
    return "\n\n".join([
        f"`craft.stability.bootstrap_stability` on the app's fit of the {results['n_rows']:,}-row `mixed_planted` "
        f"example (k = {results['k']}, n_init = {results['n_init']}, i.e. 10 runs): {results['n_resamples']} bootstrap refits, "
        "each with the fit's own parameters (k searched again on the refit's rows). It runs in a background "
        "thread, as the app runs it (`explorer.evidence`: a job per fit and settings, cancellable, cached); the "
        "last column is the mask heatmap built meanwhile in the main thread (median / slowest, ms), i.e. what "
        "a page costs while the run goes on.",
        md_table(["rows", "refits", "the fit (s)", "stability (s)", "per refit (s)", "mean Jaccard per cluster",
                  "mask heatmap meanwhile (ms)"], rows),
        f"Measured on a shared machine with {results['cpus']} cores and a load average of {load[0]:.1f} "
        f"(1 min) / {load[1]:.1f} (5 min) at the start, {results['load_after'][0]:.1f} at the end: other "
        "processes took most of the cores, so the seconds are an upper bound for an idle machine. The cost is "
        "that of the refits (one fit each); matching the clusters (one contingency table per refit, "
        "`np.bincount`) is negligible beside it. Every refit found K = "
        + "/".join(str(k) for k in results["resample_k"]) + f"; {results['unstable']} cluster(s) unstable.",
        produced_by("stability", info, seconds=results["seconds"]),
    ])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--resamples", type=int, default=20)
    parser.add_argument("--write-results", action="store_true")
    args = parser.parse_args(argv)
    results = run(args.rows, args.resamples)
    from benchmarks.common import publish

    publish("stability", results, TITLE, markdown(results), write=args.write_results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
