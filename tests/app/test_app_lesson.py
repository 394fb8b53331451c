"""Teach's lesson (explorer.lecture): predict-then-reveal, steps back and forth, lecture mode's link, handout.

AppTest, with ``test_app.py``'s helpers; the browser checks are in ``tests/browser/test_lesson.py``.
"""

from __future__ import annotations

import html
import re
import time

import numpy as np
from app_helpers import clear_caches, pytestmark, start, text

from craft.lectures import LECTURES
from craft.report import figure_count
from explorer import lecture

__all__ = ["clear_caches", "pytestmark"]


def lesson(at):
    return lecture.lesson_fit(at.session_state["lesson_pick"], int(at.session_state["lesson_seed"]))


def button(at, label):
    return next(b for b in at.button if b.label == label)


def test_count_and_feature_answers_come_from_the_fit_and_its_selection():
    fit = lecture.lesson_fit("noise_features", 0)
    model, t = fit.model, len(fit.model.history_)
    count = lecture.count_question(model, t)
    assert count.answer == model.history_[t - 1].n_clusters == model.n_clusters_
    features = lecture.feature_question(model, fit.X, t)
    cluster = int(features.text.split("cluster ")[1].split()[0])
    # The answer is the final selection of that cluster: selection_ (the profiles' numbers) at the last pass.
    kept = {model.engine_features_[j] for j in np.flatnonzero(model.selection_.selected[cluster])}
    assert features.answer == kept and len(kept) == 6
    assert features.correct(kept) and not features.correct(set(list(kept)[:5]))
    assert "cut" in features.reason and all(name in features.reason for name in kept)


def test_merge_answer_reads_the_refit_at_a_larger_lambda():
    fit = lecture.lesson_fit("lambda", 0)
    merge = lecture.merge_question(fit.model, fit.raised)
    assert fit.raised is not None and fit.raised.n_clusters_ == 1  # the lecture's claim: 3 λ₃ keeps one cluster
    assert merge is not None and merge.answer == "yes" and "K = 1" in merge.reason


def test_student_answers_reveals_and_scores():
    at = start("teach", lesson="noise_features")
    fit = lesson(at)
    assert at.session_state["lesson_step"] == 1
    truth = fit.model.history_[0].n_clusters
    at.number_input(key="lesson_q_count_1").set_value(truth)
    button(at, "Reveal").click().run()
    assert not at.exception, at.exception
    shown = " ".join(text(s) for s in at.success)
    assert f"Answer: **{truth}**" in shown or f"Answer: {truth}" in shown
    assert "λ + D F₀" in shown  # the reason, from the record's n_opened and the threshold
    score = at.session_state["lesson_score"]
    assert score["asked"] == 2 and score["right"] == 1  # the count right, the features left blank


def test_step_forward_and_back():
    at = start("teach", lesson="lambda", ask="0")
    n = len(lesson(at).model.history_)
    assert n >= 2
    button(at, "Next ▶").click().run()
    assert at.session_state["lesson_step"] == 2
    assert any("After pass 2" in text(m) for m in at.markdown)
    button(at, "◀ Previous").click().run()
    assert at.session_state["lesson_step"] == 1
    assert any("After pass 1" in text(m) for m in at.markdown)


def test_lecture_link_hides_the_chosen_controls_and_keeps_them_in_the_link():
    at = start("teach", lesson="rho", lecture="1", hide="sidebar,lecturer")
    assert not [s for s in at.selectbox if s.key == "lesson_pick"]  # the lecturer's settings are hidden
    styles = " ".join(str(h.proto.body) for h in at.get("html"))
    assert "stSidebar" in styles and f"{lecture.LECTURE_TEXT_PX}px" in styles
    assert dict(at.query_params).get("lecture") in ("1", ["1"])
    assert dict(at.query_params).get("hide") in ("sidebar,lecturer", ["sidebar,lecturer"])
    assert dict(at.query_params).get("lesson") in ("rho", ["rho"])


def test_handout_is_offline_html_with_the_lessons_text():
    fit = lecture.lesson_fit("noise_features", 0)
    page = lecture.handout(fit)
    assert not re.search(r"<script[^>]*\bsrc=", page)  # plotly.js embedded: the page works offline
    assert figure_count(page) == 1 + len(fit.model.history_)  # planted | CRAFT, then one per pass
    assert html.escape(LECTURES["noise_features"].claim.split(";")[0], quote=False) in page
    assert "Which features will cluster" in page


def test_hiding_the_rest_stops_teach_below_the_lesson_and_the_link_keys_are_not_reported_ignored():
    at = start("teach", lesson="start", hide="rest", ask="0")
    headers = [text(h) for h in at.subheader]
    assert any("Step through the" in h for h in headers)
    assert not any("term by term" in h for h in headers)  # the rest of Teach is not drawn
    said = " ".join(text(w) for w in [*at.warning, *at.info])
    assert "not a parameter of this app" not in said
    shown = start("teach", lesson="start")
    assert any("term by term" in text(h) for h in shown.subheader)


def test_play_animates_to_the_last_pass_at_the_chosen_speed():
    at = start("teach", lesson="noise_features", ask="0")
    n = len(lesson(at).model.history_)
    at.select_slider(key="lesson_speed").set_value(0.25).run()
    started = time.monotonic()
    button(at, "Play ▶▶").click().run()
    assert not at.exception, at.exception
    assert time.monotonic() - started >= 0.25 * n  # one pause per pass drawn
    assert at.session_state["lesson_step"] == n
    assert any(f"After pass {n} of {n}" in text(m) for m in at.markdown)
