"""Fits in several threads at once (the app runs every fit in its own thread).

numba's fallback threading layer, "workqueue" (used where no OpenMP or TBB
runtime is installed), aborts the whole process when two threads launch
parallel kernels at the same time; the engine serialises its threaded pass.
The test forces that layer in a fresh interpreter and runs three fits whose
passes are large enough to take the threaded kernel.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import threading, warnings
    import numba
    from craft import CRAFT, _kernels
    from craft.synthetic import mixed_planted

    warnings.simplefilter("ignore")
    X, _, _ = mixed_planted(30_000, n_clusters=6, random_state=0)
    # Rows x clusters x features of one pass: over the threshold of the threaded kernel.
    assert 30_000 * 6 * X.shape[1] >= _kernels._PARALLEL_WORK
    labels, errors = {}, []

    def fit(seed):
        try:
            labels[seed] = CRAFT(k=6, n_init=2, random_state=seed).fit(X).labels_
        except Exception as error:
            errors.append(repr(error))

    threads = [threading.Thread(target=fit, args=(seed,)) for seed in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    assert numba.threading_layer() == "workqueue"
    # Each equals the same fit alone.
    for seed in range(3):
        assert (CRAFT(k=6, n_init=2, random_state=seed).fit(X).labels_ == labels[seed]).all()
    print("ok")
""")


def test_three_fits_in_threads_under_the_workqueue_layer():
    env = dict(os.environ, NUMBA_THREADING_LAYER="workqueue")
    done = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), done.stdout[-2000:] + done.stderr[-2000:]
