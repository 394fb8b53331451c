"""Restarts cut short: would keeping only the best-looking restarts after a few passes keep a fit's quality?

The evidence for running every restart of ``n_init="auto"`` to convergence.
A fit with the defaults runs its λ search and ten restarts; the restarts are
most of its passes (on Spambase about 123 of 150). *Racing* them, the way
successive halving races configurations, would run every restart for ``p``
passes, rank the unfinished ones by the rule that chooses among finished
runs (``craft.estimator._ranking``: K nearest k, then the objective, then the
numeric normaliser), and run only the best ``r`` of them to convergence.

Each run is a function of its own seed, so a raced fit is one of the full
fit's runs: the one the ranking prefers among those that survived. This
benchmark therefore fits once per case with the defaults, keeps every run's
per-pass labels (``history_labels=True`` and a callback), and replays each
racing rule on them: which run it would keep, that run's NMI (bundled
datasets, k = classes, m = 0.5 and 0.8, plain and shrunk selection) or
exact subspace recovery (Figures 1 and 2, m = 1/3), and how many passes it
would have run. ``python -m benchmarks.restart_racing --write-results``
replaces the "Restarts cut short" section of ``docs/RESULTS.md``.
"""

from __future__ import annotations

import dataclasses
import time
import types
from collections import defaultdict
from typing import Any, cast

import numpy as np

from craft import CRAFT, _engine
from craft.estimator import _ranking
from craft.metrics import nmi, planted_agreement
from craft.synthetic import FIGURES

from .common import LABELLED, labelled, md_table, produced_by, quick_or_full_main, quiet

TITLE = "Restarts cut short"
#: (passes every restart runs, restarts then run to convergence).
RULES = ((1, 3), (2, 3), (3, 3), (3, 5), (5, 3), (5, 5))
PLANTED = ("fig1_binary", "fig1_binary_modified", "fig2_numeric", "fig2_numeric_modified")
SELECTIONS = {"plain": {}, "shrink": {"rho_selection": "shrink"}}


@dataclasses.dataclass
class Run:
    """One run's passes: their labels, feature masks and the ranking key after each."""

    labels: list[np.ndarray]
    masks: list[np.ndarray]
    keys: list[tuple]
    finished: bool


def traced_fit(X, k: int, **options) -> tuple[CRAFT, dict[int, Run], int]:
    """A fit with the defaults, every run at the kept λ by restart, and every pass the fit ran."""
    records: list[_engine.IterationRecord] = []
    model = CRAFT(k=k, history_labels=True, **options).fit(X, callback=records.append)
    data = model._encoded(X)
    opts = dataclasses.replace(model._validated_options(), lam=model.lam_)
    by_restart: dict[int, list[_engine.IterationRecord]] = defaultdict(list)
    for record in records:
        if record.lam == model.lam_:
            by_restart[record.restart].append(record)
    runs = {}
    for restart, passes in by_restart.items():
        keys = [_key(data, record, opts, k) for record in passes]
        # A restart that opened more clusters than allowed stopped mid-pass and was dropped.
        finished = passes[-1].n_changed == 0 or len(passes) == opts.max_iter
        runs[restart] = Run([_labels(r) for r in passes], [r.feature_mask for r in passes], keys, finished)
    return model, runs, len(records)


def _labels(record: _engine.IterationRecord) -> np.ndarray:
    if record.labels is None:
        raise AssertionError("a traced fit keeps every pass's labels (history_labels=True)")
    return record.labels


def _key(data, record: _engine.IterationRecord, opts, k: int) -> tuple:
    """The estimator's ranking of a run whose clusters are those after this pass."""
    stats = _engine.statistics(data, _labels(record), record.n_clusters)
    clusters = _engine.clusters_from_statistics(data, stats, opts)
    value, nll = _engine.objective(data, clusters, stats, opts)
    assert value == record.objective, "the replayed objective must be the fit's own"
    # _ranking reads only these three fields of a run.
    return _ranking(cast(Any, types.SimpleNamespace(n_clusters=record.n_clusters, objective=value, numeric_nll=nll)), k)


def kept(runs: dict[int, Run], rule: tuple[int, int] | None) -> tuple[int, int]:
    """The run a rule keeps, and the passes it saves (``rule=None``: every restart to convergence).

    Restart 0 is the λ search's run, finished before the restarts start;
    a restart that finished within ``p`` passes competes as it is.
    """
    candidates = [restart for restart, run in runs.items() if run.finished]
    saved = 0
    if rule is not None:
        passes, keep = rule
        racing = [restart for restart, run in runs.items() if restart > 0 and len(run.labels) > passes]
        racing.sort(key=lambda restart: runs[restart].keys[passes - 1])
        for restart in racing[keep:]:
            saved += len(runs[restart].labels) - passes
            if restart in candidates:
                candidates.remove(restart)
    best = min(candidates, key=lambda restart: runs[restart].keys[-1])
    return best, saved


def run(quick: bool = False) -> dict[str, Any]:
    start = time.perf_counter()
    seeds = range(2) if quick else range(10)
    names = LABELLED[-2:] if quick else LABELLED
    cases: list[dict[str, Any]] = []
    with quiet():
        for name in names:
            d = labelled(name)
            for m in (0.5, 0.8):
                for selection, options in SELECTIONS.items():
                    for seed in seeds:
                        model, runs, n_passes = traced_fit(d.X, d.n_classes, m=m, categorical=d.schema, random_state=seed, **options)
                        cases.append(_case(f"{name}|{m}|{selection}", runs, n_passes, model, _nmi_against(d.y)))
            print(f"  racing: {name} done", flush=True)
        for name in PLANTED[:1] if quick else PLANTED:
            for selection, options in SELECTIONS.items():
                for seed in range(4) if quick else range(20):
                    X, y, truth = FIGURES[name](random_state=seed)
                    model, runs, n_passes = traced_fit(X, truth.shape[0], m=1 / 3, random_state=seed, **options)
                    cases.append(_case(f"{name}|{1 / 3}|{selection}", runs, n_passes, model, _exact_against(y, truth)))
        print("  racing: planted done", flush=True)
    return {"cases": cases, "rules": [list(rule) for rule in RULES], "seconds": time.perf_counter() - start}


def _nmi_against(y):
    """A run's score after pass ``at``: its NMI against the classes."""
    return lambda run, at: float(nmi(y, run.labels[at]))


def _exact_against(y, truth):
    """A run's score after pass ``at``: 1.0 when it recovers every planted subspace exactly."""
    return lambda run, at: float(planted_agreement(y, truth, run.labels[at], run.masks[at])["exact"])


def _case(group: str, runs: dict[int, Run], n_passes: int, model: CRAFT, score) -> dict[str, Any]:
    """Per rule (``"all"`` first): the kept run, its score, the passes it saves."""
    full, _ = kept(runs, None)
    if not np.array_equal(runs[full].labels[-1], model.labels_):
        raise AssertionError(f"{group}: replaying the ranking must keep the fit's own run")
    outcome = {"all": {"run": full, "score": score(runs[full], -1), "saved": 0}}
    for rule in RULES:
        best, saved = kept(runs, rule)
        outcome[f"{rule[0]}|{rule[1]}"] = {"run": best, "score": score(runs[best], -1), "saved": saved}
    return {"group": group, "passes": n_passes, "outcome": outcome}


def summary(data: dict) -> list[dict[str, Any]]:
    """Per group of cases: the mean score with every restart and with each rule, same-run share, passes kept."""
    groups: dict[str, list[dict]] = defaultdict(list)
    for case in data["cases"]:
        groups[case["group"]].append(case)
    rows = []
    for group, cases in groups.items():
        row: dict[str, Any] = {"group": group, "fits": len(cases), "all": float(np.mean([c["outcome"]["all"]["score"] for c in cases]))}
        passes = sum(c["passes"] for c in cases)
        for rule in data["rules"]:
            label = f"{rule[0]}|{rule[1]}"
            row[label] = {
                "score": float(np.mean([c["outcome"][label]["score"] for c in cases])),
                "same": int(sum(c["outcome"][label]["run"] == c["outcome"]["all"]["run"] for c in cases)),
                "passes": 1.0 - sum(c["outcome"][label]["saved"] for c in cases) / passes,
            }
        rows.append(row)
    return rows


def markdown(data: dict, info: dict) -> str:
    rows = summary(data)
    labels = [f"{p}|{r}" for p, r in data["rules"]]
    table = []
    for row in rows:
        name, m, selection = row["group"].split("|")
        what = "NMI" if name in LABELLED else "exact"
        cells = [f"{row[label]['score'] - row['all']:+.3f} ({row[label]['passes']:.0%})" for label in labels]
        table.append([f"{name}, m = {float(m):.2g}, {selection}", row["fits"], f"{what} {row['all']:.3f}", *cells])
    worst = {label: min(row[label]["score"] - row["all"] for row in rows) for label in labels}
    share = {label: sum(row[label]["passes"] * row["fits"] for row in rows) / sum(row["fits"] for row in rows) for label in labels}
    same = {label: sum(row[label]["same"] for row in rows) for label in labels}
    n_fits = sum(row["fits"] for row in rows)
    totals = [["worst change of a group", "", "", *[f"{worst[label]:+.3f}" for label in labels]],
              ["passes run (mean share)", "", "", *[f"{share[label]:.0%}" for label in labels]],
              ["fits keeping the same run", "", "", *[f"{same[label]} of {n_fits}" for label in labels]]]
    header = ["cases", "fits", "every restart (mean)", *[f"p = {p}, r = {r}" for p, r in data["rules"]]]
    return "\n\n".join(
        [
            "Would a fit keep its quality if its restarts were raced: every restart run for p passes, the best r of "
            "the unfinished ones (ranked as finished runs are: K nearest k, then the objective, then the numeric "
            "normaliser) run to convergence, the others stopped? Each case is one fit with the product's defaults "
            "(`CRAFT(m, k)`, k = the classes or the planted clusters, ten runs); every run's passes are kept and each "
            "rule is replayed on them, so a raced fit is one of the fit's own runs. A cell is the change of the mean "
            "NMI (bundled datasets) or of the share of exact subspace recoveries (Figures 1 and 2, m = 1/3) against "
            "every restart run to convergence, and in parentheses the share of the fit's passes (λ search included) "
            "the rule would run.",
            md_table(header, table + totals),
            _conclusion(worst, share),
            produced_by("restart_racing", info, seconds=data["seconds"]),
        ]
    )


def _conclusion(worst: dict[str, float], share: dict[str, float]) -> str:
    within = [label for label in worst if worst[label] >= -0.01]
    if not within:
        return ("**No rule keeps every case within 0.01 of running every restart**, so `n_init=\"auto\"` runs every "
                "restart to convergence.")
    cheapest = min(within, key=lambda label: share[label])
    p, r = cheapest.split("|")
    return (f"**Within 0.01 in every case: {', '.join(within)}** (p|r); the cheapest, p = {p}, r = {r}, runs "
            f"{share[cheapest]:.0%} of the passes.")


def main(argv=None) -> int:
    return quick_or_full_main(argv, name="restart_racing", title=TITLE, description=__doc__.splitlines()[0],
                              quick_help="two datasets, two seeds, one planted set", run=run, markdown=markdown)


if __name__ == "__main__":
    raise SystemExit(main())
