"""The noise threshold of ``noise=True`` on the planted tables of ``tests/library/test_noise.py`` (issue 30, item 6).

Two kinds of table, each over seeds 0-4 (each seed its own data and fit):

* a small real segment among larger groups, with scattered outliers:
  ``customers_with_a_segment_and_outliers`` (k = 4) and
  ``figure2_with_a_segment_and_outliers`` (k = 4, and without k);
* planted subspace clusters with uniform noise rows making 50 % and 70 % of
  the table (Figures 2 and 1, ``benchmarks.noise.with_noise_rows``, k = 3).

Reported as shares (medians over the seeds): of the outliers / noise rows
labelled -1, of the segment labelled -1 and in its main cluster, of the
other planted rows labelled -1. ``python -m benchmarks.noise_threshold``
prints the table (run it with another ``craft`` on the path to compare).
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

import numpy as np

from craft import CRAFT
from craft.synthetic import FIGURES

from .noise import with_noise_rows

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from test_noise import customers_with_a_segment_and_outliers, figure2_with_a_segment_and_outliers  # noqa: E402

SEEDS = range(5)


def _segment_row(name, make, params, seeds):
    out, seg, main, rest = [], [], [], []
    for seed in seeds:
        table, kind = make(seed)
        labels = CRAFT(noise=True, random_state=seed, **params).fit(table).labels_
        segment = labels[kind == 3]
        counts = np.bincount(segment[segment >= 0]) if (segment >= 0).any() else np.array([0])
        out.append((labels[kind == -1] == -1).mean())
        seg.append((segment == -1).mean())
        main.append(counts.max() / segment.size)
        rest.append((labels[(kind >= 0) & (kind < 3)] == -1).mean())
    return (f"| {name} | {', '.join(f'{k}={v:.3g}' for k, v in params.items()) or 'default λ'} | "
            f"{np.median(out):.0%} | {np.median(seg):.0%} | {np.median(main):.0%} | {np.median(rest):.0%} |")


def _noise_row(figure, share, seeds):
    noise, planted = [], []
    for seed in seeds:
        X, _, truth = FIGURES[figure](random_state=seed)
        table = with_noise_rows(X, share, np.random.default_rng([seed, 1]))
        labels = CRAFT(m=1 / 3, k=truth.shape[0], noise=True, random_state=seed).fit(table).labels_
        noise.append((labels[len(X):] == -1).mean())
        planted.append((labels[: len(X)] == -1).mean())
    return (f"| {figure} | {share:.0%} | {np.median(noise):.0%} ({min(noise):.0%}–{max(noise):.0%}) | "
            f"{np.median(planted):.0%} ({min(planted):.0%}–{max(planted):.0%}) |")


def main() -> None:
    warnings.simplefilter("ignore")
    start = time.perf_counter()
    print("| table | fit | outliers → noise | segment → noise | segment in its main cluster | other planted → noise |")
    print("|---|---|---|---|---|---|")
    print(_segment_row("customers (segment 6 %, outliers 2 %)", customers_with_a_segment_and_outliers, {"k": 4}, SEEDS))
    print(_segment_row("Figure 2 + segment (30 rows) + 12 outliers", figure2_with_a_segment_and_outliers,
                       {"k": 4, "m": 1 / 3}, SEEDS))
    print(_segment_row("Figure 2 + segment (30 rows) + 12 outliers", figure2_with_a_segment_and_outliers,
                       {"m": 1 / 3}, SEEDS))
    print()
    print("| set | noise share | noise rows → noise (median, range) | planted rows → noise |")
    print("|---|---|---|---|")
    for figure in ("fig2_numeric", "fig1_binary"):
        for share in (0.5, 0.7):
            print(_noise_row(figure, share, SEEDS))
    print(f"\n{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
