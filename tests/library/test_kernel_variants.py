"""The compiled kernels' variants.

numba compiles ``_kernels`` once per argument type; the variant for a table
without missing cells (``observed`` None) drops the per-cell mask test. On a
table without gaps, giving it an all-True mask must change no bit: same costs
and clusters from the pass, same statistics. The numeric columns span six
orders of magnitude, so a sum in another order (or a skipped or doubled cell)
in either variant shows in the last bits.

The threaded and the serial pass are one function compiled twice; each must
keep its own machine code in numba's disk cache.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest

from craft import _engine, _kernels
from craft.encoding import Encoder
from craft.priors import prior_terms
from library_helpers import engine_options


def mixed_table(seed: int, n_rows: int) -> tuple[pd.DataFrame, list[str], list[str]]:
    """Numeric columns of very different scales, categorical columns with some missing cells (codes -1)."""
    rng = np.random.default_rng(seed)
    numeric = [f"x{j}" for j in range(7)]
    categorical = [f"c{q}" for q in range(4)]
    columns = {name: rng.normal(rng.normal(0, 3), 1.0, n_rows) * 10.0 ** rng.uniform(-3, 3) for name in numeric}
    for q, name in enumerate(categorical):
        levels = np.array(list("abcde"[: q + 2]), dtype=object)
        values = levels[rng.integers(0, len(levels), n_rows)]
        values[rng.random(n_rows) < 0.1] = None
        columns[name] = values
    return pd.DataFrame(columns), numeric, categorical


def both_variants(seed: int, n_rows: int):
    """The encoded table without a mask, the same with an all-True mask, and clusters with a random selection."""
    table, numeric, categorical = mixed_table(seed, n_rows)
    data = Encoder(numeric, categorical, standardize=False, missing="marginalise").fit_transform(table)
    assert data.observed is None
    masked = dataclasses.replace(data, observed=np.ones(data.numeric.shape, dtype=bool))
    rng = np.random.default_rng(seed + 100)
    n_clusters = 6
    opts = engine_options(terms=prior_terms(0.5), lam=1.0)
    clusters, _ = _engine.fit_clusters(data, rng.integers(0, n_clusters, n_rows), n_clusters, opts)
    # Some numeric features unselected in each cluster: the kernel loops over the selected ones only.
    clusters.weights[:] = rng.random(clusters.weights.shape) < 0.6
    return data, masked, clusters, opts


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("threads", ["serial", "parallel"])
def test_pass_is_bit_identical_with_and_without_an_all_true_mask(monkeypatch, seed, threads):
    data, masked, clusters, opts = both_variants(seed, 2000)
    monkeypatch.setattr(_kernels, "_PARALLEL_WORK", 0 if threads == "parallel" else 10**12)
    plain = _engine.nearest_cluster(data, clusters, opts.terms)
    with_mask = _engine.nearest_cluster(masked, clusters, opts.terms)
    np.testing.assert_array_equal(plain[0], with_mask[0])
    np.testing.assert_array_equal(plain[1], with_mask[1])
    # A subset of rows, with clusters opened during the pass (candidates only after their opener).
    rows = np.sort(np.random.default_rng(seed).choice(data.n_samples, 700, replace=False))
    start_row = np.array([-1, -1, 50, 400, 1200, 1900])
    plain = _engine.nearest_cluster(data, clusters, opts.terms, rows=rows, start_row=start_row)
    with_mask = _engine.nearest_cluster(masked, clusters, opts.terms, rows=rows, start_row=start_row)
    np.testing.assert_array_equal(plain[0], with_mask[0])
    np.testing.assert_array_equal(plain[1], with_mask[1])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_statistics_are_bit_identical_with_and_without_an_all_true_mask(seed):
    data, masked, clusters, opts = both_variants(seed, 2000)
    _, labels = _engine.nearest_cluster(data, clusters, opts.terms)
    plain = _engine.statistics(data, labels, clusters.n_clusters)
    with_mask = _engine.statistics(masked, labels, clusters.n_clusters)
    for field in dataclasses.fields(plain):
        np.testing.assert_array_equal(getattr(plain, field.name), getattr(with_mask, field.name), err_msg=field.name)
    # Without a mask every numeric cell of a cluster counts: its row count, per feature.
    np.testing.assert_array_equal(plain.numeric_counts, np.repeat(plain.counts[:, None], data.n_numeric, axis=1))


_CACHE_SCRIPT = textwrap.dedent(
    """
    import sys
    import numba
    import numpy as np
    from craft import _kernels

    call = _kernels.tiny_pass

    def threads_started():
        try:
            numba.threading_layer()
        except ValueError:  # no threaded code has run in this process
            return False
        return True

    mask = np.ones((2, 1), dtype=np.bool_)
    if sys.argv[1] == "compile":
        # Each signature compiled by one of the two variants only.
        call(_kernels._nearest_serial, None)
        call(_kernels._nearest_parallel, mask)
    else:
        # Each variant asked for the signature the other one cached.
        call(_kernels._nearest_serial, mask)
        assert not threads_started(), "the serial pass ran the threaded machine code"
        call(_kernels._nearest_parallel, None)
        assert threads_started(), "the threaded pass ran the serial machine code"
    """
)


@pytest.mark.slow  # fresh Python processes, each compiling: in `make test`, not `make test-fast`
def test_threaded_and_serial_passes_do_not_share_cached_machine_code(tmp_path):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba")}
    for step in ("compile", "check"):
        done = subprocess.run([sys.executable, "-c", _CACHE_SCRIPT, step], env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr[-2000:]
    assert any((tmp_path / "numba").rglob("*.nbi"))  # the kernels did go through the disk cache
