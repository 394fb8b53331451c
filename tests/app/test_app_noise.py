"""The app's noise switch (``noise=True``): counted, drawn and exported where the pages show it; the detection
itself is tested on the library (``tests/library/test_noise.py``, whose far rows this table uses)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from app_helpers import chart_elements, chart_spec, clear_caches, ctx, start, upload, visit  # noqa: F401 - clear_caches is an autouse fixture
from craft import plots
from craft.synthetic import fig2_numeric
from test_noise import far_rows


def test_app_switch_counts_draws_and_exports_noise_rows():
    X, _, _ = fig2_numeric(random_state=0)
    table = pd.concat([X, far_rows(X, 5, 0)], ignore_index=True)
    at = upload(start(), "noisy.csv", table.to_csv(index=False).encode())
    at.number_input(key="k").set_value(3).run()
    assert ctx(at).model.n_noise_ == 0  # the switch is off by default
    at.checkbox(key="noise").check().run()
    model = ctx(at).model
    n_noise = model.n_noise_
    # The plumbing is what is tested here (detection is above): noise rows are far rows, counted where shown.
    assert model.noise and n_noise >= 1 and set(np.flatnonzero(model.labels_ < 0)) <= set(range(len(X), len(table)))
    share = f"{n_noise / len(table):.0%}"
    assert any(f"{n_noise} of {len(table)} rows ({share}) fit no cluster** (noise, −1)" in element.value for element in at.success)
    visit(at, "evaluate")
    bars = [c for c in chart_elements(at) if '"noise"' in chart_spec(c) and plots.NOISE_COLOR in chart_spec(c)]
    assert bars, "the sizes chart has no grey noise bar"
    visit(at, "export")
    buttons = [b for b in at.get("download_button") if "Noise rows" in str(b.proto.label)]
    assert buttons and f"{n_noise} original rows" in buttons[0].proto.label
    # A link that names the switch opens the view with it on.
    assert ctx(start(dataset="fig2_numeric", syn_n=90, noise="true")).params.noise is True
