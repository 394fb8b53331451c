"""The Evaluate page's "How much to trust this partition" and a card's stability, driven by AppTest; what they
read (``craft.stability``) is tested on the library, ``tests/library/test_stability.py``."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from app_helpers import chart_elements, chart_spec, clear_caches, start, text  # noqa: F401  (fixture)
from craft import CRAFT, synthetic
from craft import stability as trust
from explorer import cache, evidence

pytestmark = [pytest.mark.filterwarnings("ignore:k=.* clusters were not reachable:UserWarning"),
              pytest.mark.filterwarnings("ignore:CRAFT did not converge")]


# ---------------------------------------------------------------------------
# The Evaluate page


def _finish(at, kind):
    job = at.session_state["_evidence_jobs"][kind]
    assert job.wait(120), f"the {kind} job did not finish"
    at.run()
    assert not at.exception, at.exception


def test_evaluate_shows_stability_and_the_null_without_labels():
    at = start("evaluate", dataset="mixed_planted", k=4, label="(none)")
    assert [h.value for h in at.header] == ["How much to trust this partition"]
    at.button(key="run_evidence_stability").click().run()
    assert not at.exception, at.exception
    _finish(at, "stability")
    model = at.session_state["ctx"].model
    stored = evidence.result(at.session_state["ctx"], "stability")
    markdown = " ".join(text(m) for m in at.markdown)
    assert stored.summary() in markdown
    table = [d.value for d in at.dataframe if "mean Jaccard" in d.value.columns][0]
    np.testing.assert_allclose(table["mean Jaccard"], stored.mean_jaccard)
    assert table["rows"].tolist() == model.cluster_sizes_.tolist()
    titles = [chart_spec(c) for c in chart_elements(at)]
    assert any("Which selected features are solid" in spec for spec in titles)
    assert any("Is each cluster found again" in spec for spec in titles)
    at.button(key="run_evidence_null").click().run()
    _finish(at, "null")
    null = evidence.result(at.session_state["ctx"], "null")
    assert null.p_value < 0.1 and any(text(m) == null.sentence() for m in at.markdown)
    at.button(key="run_evidence_k").click().run()
    _finish(at, "k")
    k_table = [d.value for d in at.dataframe if "silhouette" in d.value.columns][0]
    assert k_table["k"].tolist() == [2, 3, 4, 5, 6]
    assert any("Evidence on k" in chart_spec(c) for c in chart_elements(at))


def _card(key, model, X, cluster):
    # AppTest.from_function runs this function's source alone: its imports are its own.
    from types import SimpleNamespace

    from explorer import evidence

    evidence.show_cluster_stability(SimpleNamespace(key=key, model=model, X=X), cluster)


def test_a_card_shows_one_clusters_stability():
    X, _ = synthetic.mixed_planted(n_samples=400, random_state=0)[:2]  # the library tests' planted table
    model = CRAFT(k=4, n_init=2, random_state=0).fit(X)
    found = trust.bootstrap_stability(model, X, n_resamples=3, n_init=1, random_state=0)
    cache.STORE.put(evidence.evidence_key("a-fit", "stability"), found)
    at = AppTest.from_function(_card, args=("a-fit", model, X, 2), default_timeout=60).run()
    assert not at.exception, at.exception
    assert at.metric[0].value == f"{found.mean_jaccard[2]:.2f}"
    assert text(at.markdown[0]) == found.sentence(2)
    shown = at.dataframe[0].value
    assert shown["selected in this fit"].tolist() == sorted(shown["selected in this fit"], reverse=True)
    by_name = shown.set_index("feature")["selected in the refits"]
    np.testing.assert_allclose(by_name[found.features].to_numpy(), found.feature_frequency.loc[2].to_numpy())


def test_a_running_stability_can_be_cancelled_and_other_pages_are_usable(monkeypatch):
    gate = threading.Event()

    def held(model, X, report):
        while not gate.wait(0.01):
            report(0.1, "refit 1 of 20")
        return None

    monkeypatch.setitem(evidence.KINDS, "stability", evidence.Kind("stability", "stability", "Run stability", held))
    at = start("evaluate", dataset="mixed_planted", k=4, label="(none)")
    at.button(key="run_evidence_stability").click().run()
    job = at.session_state["_evidence_jobs"]["stability"]
    assert not job.done
    assert any("in the background" in bar.proto.text for bar in at.get("progress"))
    # Another page is drawn while it runs, and the job goes on.
    at.switch_page("pages/clusters.py").run()
    assert not at.exception and not job.done and not job.cancelled
    at.switch_page("pages/evaluate.py").run()
    at.button(key="cancel_evidence_stability").click().run()
    assert job.wait(10) and job.cancelled and job.result() is None
    at.run()
    assert any("You cancelled the stability" in text(m) for m in at.info)
    assert at.button(key="run_evidence_stability")
    gate.set()
