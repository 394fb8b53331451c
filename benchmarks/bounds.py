"""Parameters that would make the work explode (k = rows, a tiny λ, a huge n_init): what they cost.

Each case is timed from ``fit`` to its answer: a fit, or the
``CraftInputError`` that says why it is refused. Then the exact-k search's
cost as k grows on credit-g (1,000 rows, n_init = 1).
``python -m benchmarks.bounds --write-results`` replaces the "Parameter
bounds" section of ``docs/RESULTS.md``.
"""

from __future__ import annotations

import argparse
import time
import warnings
from typing import Any

from craft import CRAFT, CraftInputError, datasets

from .common import machine, md_table, produced_by, publish

TITLE = "Parameter bounds"


def timed(table, **params) -> tuple[float, str]:
    started = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = CRAFT(random_state=0, **params).fit(table)
        answer = f"fit, K = {model.n_clusters_}"
    except CraftInputError as error:
        answer = "refused: " + str(error).split(":")[0].split(" (")[0]
    return time.perf_counter() - started, answer


def run() -> dict:
    credit, _ = datasets.load("credit-g")
    zoo, _ = datasets.load("zoo")
    cases: list[tuple[str, Any, dict[str, Any], str]] = [
        ("k = rows (200 rows of credit-g)", credit.iloc[:200], dict(k=200), "≈ 136 s"),
        ("k = rows (Zoo, 101 rows, 59 distinct)", zoo, dict(k=101), "20 s (measured here)"),
        ("λ = 1e-300 (300 rows of credit-g)", credit.iloc[:300], dict(lam=1e-300), "252 s"),
        ("λ = 1e-6 (300 rows of credit-g)", credit.iloc[:300], dict(lam=1e-6), "54 s"),
        ("n_init = 1e9", credit, dict(n_init=10**9), "8.2 GB of seeds, never ends"),
        ("n_init = 1e6, max_iter = 1", credit, dict(n_init=10**6, max_iter=1), "never ends"),
    ]
    rows = []
    for name, table, params, unbounded in cases:
        seconds, answer = timed(table, **params)
        rows.append(dict(case=name, seconds=seconds, answer=answer, unbounded=unbounded))
    search = []
    for k in (2, 10, 50, 100, 200, 500):
        seconds, answer = timed(credit, k=k, n_init=1)
        search.append(dict(k=k, seconds=seconds, answer=answer))
    return {"cases": rows, "search": search}


def markdown(data: dict, info: dict) -> str:
    return "\n\n".join([
        "Each case timed from `fit` to its answer on this machine; the last column is what the same case costs with "
        "no bound, measured on another machine where it does not say otherwise. The rules are in `docs/numerics.md` (*Parameters that make the work explode*).",
        md_table(["case", "answer", "seconds", "with no bound"],
                 [[r["case"], r["answer"], f"{r['seconds']:.2f}", r["unbounded"]] for r in data["cases"]]),
        "**The exact-k search as k grows** (credit-g, 1,000 rows, n_init = 1; at most 500 clusters are allowed "
        "on 1,000 rows):",
        md_table(["k", "answer", "seconds"], [[r["k"], r["answer"], f"{r['seconds']:.2f}"] for r in data["search"]]),
        produced_by("bounds", info),
    ])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write-results", action="store_true")
    args = parser.parse_args(argv)
    data = run()
    publish("bounds", data, TITLE, markdown(data, machine()), write=args.write_results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
