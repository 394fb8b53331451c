"""How much to trust a partition, in the app: stability, the null of one cluster and the evidence on k.

Each computation (:mod:`craft.stability`) is many refits, so it runs as a
background job like every fit (:mod:`explorer.jobs`): one
:class:`explorer.jobs.FitJob` per digest of the fit and the settings, for the whole
server, held by the sessions that asked for it, cancellable, and its result
kept in the fit store (:data:`explorer.cache.STORE`) under that digest. A
page starts one with a button, shows its progress with a Cancel button in a
fragment that polls it (the rest of the app stays usable: the job does not
belong to the page), and draws the result once it is in the store. A job for
a fit the session no longer shows is released when the section is next
drawn (and cancelled unless another session holds it).

:func:`trust_section` is the Evaluate page's section; :func:`show_cluster_stability`
shows one cluster's part for a cluster card.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd
import streamlit as st

from craft import CraftInputError
from craft import stability as trust
from craft.plots import stability as trust_plots

from . import cache, jobs
from .figure_export import chart
from .ui import error, esc, note

#: Refits of the app's stability run (the cost is that many fits).
STABILITY_RESAMPLES = 20
#: Reference tables (no clusters) of the app's null of one cluster.
NULL_PERMUTATIONS = 19
#: Bootstrap refits per k of the evidence on k.
K_RESAMPLES = 5

#: The evidence computations running in background threads; a finished one goes to the fit store.
JOBS = cache.background_jobs()


@dataclass(frozen=True)
class Kind:
    """One evidence computation: its name, its button and what it computes from (model, X, report)."""

    name: str
    title: str
    button: str
    compute: Callable


def _ks(model) -> list[int]:
    """The range of k shown: two below and two above the fit's K (at least 2)."""
    return list(range(max(2, model.n_clusters_ - 2), model.n_clusters_ + 3))


KINDS = {
    "stability": Kind("stability", "stability", "Run stability",
                      lambda model, X, report: trust.bootstrap_stability(
                          model, X, n_resamples=STABILITY_RESAMPLES, random_state=0, callback=report)),
    "null": Kind("null", "null of one cluster", "Run the null of one cluster",
                 lambda model, X, report: trust.permutation_null(
                     model, X, n_permutations=NULL_PERMUTATIONS, random_state=0, callback=report)),
    "k": Kind("k", "evidence on k", "Compare k",
              lambda model, X, report: trust.k_evidence(
                  model.get_params(), X, _ks(model), n_resamples=K_RESAMPLES, random_state=0, callback=report)),
}


def evidence_key(fit_key: str, kind: str) -> str:
    """The digest naming one computation on the fit named ``fit_key`` (its settings are the module's constants)."""
    settings = (STABILITY_RESAMPLES, NULL_PERMUTATIONS, K_RESAMPLES)
    return hashlib.sha256(repr(("evidence", fit_key, kind, settings)).encode()).hexdigest()[:20]


def _held() -> dict:
    return st.session_state.setdefault("_evidence_jobs", {})


def request(ctx, kind: str) -> jobs.FitJob:
    """Start (or join) the ``kind`` computation on this session's fit; the session holds it."""
    key = evidence_key(ctx.key, kind)
    held = _held()
    previous = held.get(kind)
    if previous is not None and previous.key != key:
        JOBS.release(previous.key, cache.session_token())
    model, X = ctx.model, ctx.X
    job = JOBS.submit(key, cache.session_token(), lambda report: KINDS[kind].compute(model, X, report))
    held[kind] = job
    st.session_state.pop(f"_evidence_cancelled_{kind}", None)
    return job


def result(ctx, kind: str):
    """The finished ``kind`` computation on this session's fit (its own copy), or None."""
    key = evidence_key(ctx.key, kind)
    found = cache.STORE.get(key)
    if found is not None:
        return found
    job = _held().get(kind)
    if job is not None and job.key == key and job.done and not job.cancelled:
        return job.result()
    return None


def _running(ctx, kind: str) -> jobs.FitJob | None:
    """This session's running ``kind`` job for its current fit; one for a previous fit is released."""
    job = _held().get(kind)
    if job is not None and job.key != evidence_key(ctx.key, kind):
        JOBS.release(job.key, cache.session_token())  # cancelled unless another session waits for it
        del _held()[kind]
        return None
    if job is None or job.done or job.cancelled:
        return None
    return job


def _cancel(job: jobs.FitJob, kind: str) -> None:
    st.session_state[f"_evidence_cancelled_{kind}"] = job.summary()
    JOBS.cancel(job.key)


def _progress(job: jobs.FitJob, kind: str) -> None:
    cache.background_progress(job, key=f"evidence_{kind}", text=f"Computing the {KINDS[kind].title}",
                        on_cancel=_cancel, args=(job, kind))


def outcome_or_controls(ctx, kind: str, help_text: str):
    """The finished ``kind`` computation, else its progress or a button to start it (and None)."""
    try:
        found = result(ctx, kind)
    except CraftInputError as problem:
        _held().pop(kind, None)
        error(f"The {KINDS[kind].title} could not be computed: {problem}")
        return None
    if found is not None:
        return found
    job = _running(ctx, kind)
    if job is not None:
        _progress(job, kind)
        return None
    cancelled = st.session_state.get(f"_evidence_cancelled_{kind}")
    if cancelled:
        note(f"You cancelled the {KINDS[kind].title} ({cancelled}).")
    if st.button(KINDS[kind].button, key=f"run_evidence_{kind}", help=help_text, icon=":material/play_arrow:"):
        _progress(request(ctx, kind), kind)
    return None


# ---------------------------------------------------------------------------
# What the pages draw


def stability_table(result: trust.Stability) -> pd.DataFrame:
    """The per-cluster table of a stability run, with its columns named for the page."""
    return result.frame().rename(columns={"mean_jaccard": "mean Jaccard", "dissolved": "dissolved (Jaccard ≤ 0.5)",
                                          "resamples": "refits testing it",
                                          "matched": "matched one-to-one (Jaccard ≥ 0.5)"})


def trust_section(ctx) -> None:
    """Evaluate's "How much to trust this partition": stability, the null of one cluster, the evidence on k."""
    model = ctx.model
    st.header("How much to trust this partition")
    st.markdown(
        "Three kinds of evidence for your choice of clustering, none of them needs labels. Each one refits CRAFT "
        "many times, in the background: start it, keep using the other pages, and come back.")

    st.subheader("Stability: are the clusters found again?")
    found = outcome_or_controls(
        ctx, "stability",
        f"{STABILITY_RESAMPLES} refits on bootstrap resamples of the rows, each with this fit's parameters; every "
        "cluster is matched to its most similar refit cluster by the Jaccard similarity of their rows.")
    if found is not None:
        st.markdown(esc(found.summary()))
        st.caption(esc(trust.UNSTABLE_MEANING))
        chart(cache.figure(evidence_key(ctx.key, "stability"), "jaccard", lambda: trust_plots.fig_jaccard(found)),
              key="trust_jaccard", name="craft_stability_jaccard")
        chart(cache.figure(evidence_key(ctx.key, "stability"), "frequency",
                           lambda: trust_plots.fig_selection_frequency(model, found)),
              key="trust_frequency", name="craft_selection_frequency")
        st.caption("Left, the features this fit selects per cluster; right, of the refits that matched the cluster "
                   "one-to-one with a Jaccard of at least 0.5, the share whose matched cluster selects them (the table "
                   "below says how many matched): a selected cell near 100 % is solid, one far below flickers.")
        st.dataframe(stability_table(found), hide_index=True, key="trust_stability_table",
                     column_config={"mean Jaccard": st.column_config.NumberColumn(format="%.2f")})

    st.subheader("More than one cluster? A null of one blob")
    null = outcome_or_controls(
        ctx, "null",
        f"Fits {NULL_PERMUTATIONS} tables drawn with no clusters and compares their objective with the data's: the "
        "numeric columns from one Gaussian with the data's means and covariances (so correlated columns stay "
        "correlated), each categorical column shuffled on its own (its values kept), missing cells where they were.")
    if null is not None:
        st.markdown(esc(null.sentence()))

    st.subheader("Which k? Evidence over a range")
    evidence = outcome_or_controls(
        ctx, "k",
        f"Fits k = {', '.join(map(str, _ks(model)))} with this fit's other parameters; for each, the data cost, "
        f"the stability over {K_RESAMPLES} refits and a silhouette on CRAFT's own cost.")
    if evidence is not None:
        chart(cache.figure(evidence_key(ctx.key, "k"), "k",
                          lambda: trust_plots.fig_k_evidence(evidence, chosen=model.n_clusters_)),
              key="trust_k", name="craft_k_evidence")
        st.dataframe(evidence, hide_index=True, key="trust_k_table")
        st.caption("No one number picks k: the data cost always falls as k grows; prefer a k after which it falls "
                   "little, whose clusters are stable (mean Jaccard ≥ 0.6) and whose silhouette is high. The "
                   "silhouette takes a row's cost to its own cluster as a and to the next cluster as b (the "
                   "distance of CRAFT without its per-cluster feature-control constant).")


def show_cluster_stability(ctx, cluster: int) -> None:
    """One cluster's stability for a cluster card: its mean Jaccard, what it means, its features' frequencies.

    Starts the stability run (the same job as the Evaluate page's) when
    asked, and shows its progress while it runs. Call it once per page run
    (its button and progress have fixed keys).
    """
    found = outcome_or_controls(ctx, "stability", f"{STABILITY_RESAMPLES} bootstrap refits with this fit's parameters.")
    if found is None:
        return
    jaccard = float(found.mean_jaccard[cluster])
    st.metric("Mean Jaccard of its best match", f"{jaccard:.2f}",
              help=f"Over {int(found.n_present[cluster])} bootstrap refits; below {trust.UNSTABLE_JACCARD} the "
                   "cluster is marked unstable.")
    st.markdown(esc(found.sentence(cluster)))
    mask = np.asarray(ctx.model.feature_mask_[cluster], dtype=bool)
    frequency = found.feature_frequency.loc[cluster]
    st.caption(f"Features: over the {int(found.n_matched[cluster])} refits that matched this cluster one-to-one "
               f"(Jaccard ≥ {trust.MATCHED_JACCARD}).")
    table = pd.DataFrame({"feature": found.features, "selected in this fit": mask,
                          "selected in the refits": frequency.to_numpy()})
    table = table.sort_values(["selected in this fit", "selected in the refits"], ascending=False, kind="stable")
    st.dataframe(table, hide_index=True, key=f"cluster_stability_{cluster}", column_config={
        "selected in the refits": st.column_config.ProgressColumn(format="percent", min_value=0, max_value=1)})
