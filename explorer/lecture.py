"""Teach's lesson: a preset from :mod:`craft.lectures`, predict-then-reveal questions, steps back and forth,
lecture mode and a handout.

The questions are answered from the lesson fit's own numbers: the clusters
after a pass are ``history_[t-1].n_clusters`` with its ``n_opened``; the
features a cluster keeps are ``inspect_iteration(X, t).selection`` (the
same :class:`craft.Selection` whose scores and cut the profiles show); a
merge under a larger λ is read from the fit refitted at that λ. Nothing is
recomputed beside the engine.

Link parameters (listed in :data:`explorer.state.LECTURE_URL_KEYS`, the one
place the app's link keys are named): ``lesson`` (a lecture's name),
``lecture`` (1: lecture mode), ``hide`` (comma-separated parts hidden from
the audience: :data:`HIDEABLE`), ``ask`` (0: no questions).
"""

from __future__ import annotations

import html
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

from craft import CRAFT, plots
from craft.lectures import LECTURES, SEEDS, Lecture
from craft.report import Section, render_report

from . import cache, figure_export, plotly_view, ui

#: Parts of the page a lecturer can hide from the audience's link.
HIDEABLE = {
    "sidebar": "The parameter sidebar",
    "rest": "Teach below the lesson (formulas, ρ, mask path)",
    "lecturer": "These lecturer settings",
}
#: Lecture mode's sizes, chosen for a 1920 × 1080 projector read from the back of a room: body text of
#: 28 px is about 2.6 % of the screen's height (the usual rule for slides is at least 24 pt on a 1080-line
#: screen); chart labels 22 px. ``tests/browser/test_lesson.py`` measures them in Chromium.
LECTURE_TEXT_PX = 28
LECTURE_CHART_FONT_PX = 22
#: The keys of lecture mode, bound to the buttons of the same labels.
KEYS = {"ArrowRight": "Next ▶", "ArrowLeft": "◀ Previous", "r": "Reveal", "0": "Reset"}
#: λ is raised by this factor in the merge question (the λ lecture's "too large").
RAISE_LAM = 3.0


# ---------------------------------------------------------------------------
# Questions, answered from the fit's numbers (no Streamlit)


@dataclass(frozen=True)
class Question:
    """One predict-then-reveal question about step ``step`` of a lesson fit."""

    key: str
    text: str
    kind: str  # "count", "features" or "yesno"
    answer: object
    reason: str
    options: tuple = ()

    def correct(self, given) -> bool:
        if self.kind == "features":
            return frozenset(given or ()) == self.answer
        return given == self.answer


def count_question(model, t: int) -> Question:
    """How many clusters after pass ``t``: the record's ``n_clusters``, with its ``n_opened`` as the reason."""
    record = model.history_[t - 1]
    threshold = model.options_.threshold(len(model.engine_features_))
    opened = record.n_opened
    far = f"farther than λ + D F₀ = {threshold:.4g} from every cluster"
    parts = []
    if t == 1 and model.init != "random":
        parts.append(f"The start seeded {record.n_clusters - opened} cluster(s) before pass 1 (craft++: far points "
                     "first)")
    elif t == 1:
        parts.append("The run started with one cluster (the paper's start)")
    else:
        parts.append(f"Pass {t - 1} left {model.history_[t - 2].n_clusters} cluster(s)")
    parts.append(f"pass {t} opened no cluster: no point was {far}" if opened == 0 else
                 f"pass {t} opened {opened} cluster(s) at point(s) {far}")
    before = record.n_clusters - opened if t == 1 else model.history_[t - 2].n_clusters
    if before + opened > record.n_clusters:
        parts.append(f"{before + opened - record.n_clusters} cluster(s) emptied and closed")
    reason = "; ".join(parts) + f". {record.n_changed:,} point(s) changed cluster."
    return Question(f"count_{t}", f"How many clusters will there be after pass {t}?", "count",
                    int(record.n_clusters), reason)


def feature_question(model, X, t: int) -> Question:
    """Which features the largest cluster after pass ``t`` keeps: ``inspect_iteration(X, t).selection``."""
    state = model.inspect_iteration(X, t)
    labels = model.history_[t - 1].labels
    sizes = np.bincount(labels[labels >= 0], minlength=state.selection.selected.shape[0])
    cluster = int(np.argmax(sizes))
    selection = state.selection
    names = list(model.engine_features_)
    kept = [names[j] for j in np.flatnonzero(selection.selected[cluster])]
    n_numeric = len(model.schema_.numeric)

    def listed(columns) -> str:
        return ", ".join(f"{names[j]} {selection.criterion[cluster, j]:.3g}" for j in columns)

    order = np.argsort(selection.rank[cluster], kind="stable")
    numeric = [j for j in order if j < n_numeric]
    categorical = [j for j in order if j >= n_numeric]
    def part(columns, rule: str) -> str:
        """The rule for one kind of feature, its cut, what it kept and the next it dropped (in rank order)."""
        keep = [j for j in columns if selection.selected[cluster, j]]
        drop = [j for j in columns if not selection.selected[cluster, j]][:3]
        return (f"{rule} {selection.cut[cluster, columns[0]]:.3g}: kept {listed(keep) or 'none'}; "
                f"the next dropped {listed(drop) or 'none'}")

    parts = []
    if numeric:
        parts.append(part(numeric, "numeric features are kept lowest within-cluster variance first, up to the cut"))
    if categorical:
        parts.append(part(categorical, "categorical features are kept highest entropy gain first, above the cut"))
    reason = f"Cluster {cluster} ({sizes[cluster]:,} rows after pass {t}): " + "; ".join(parts) + "."
    return Question(f"features_{t}", f"Which features will cluster {cluster} keep after pass {t}? "
                    "Click its mask cells.", "features", frozenset(kept), reason, tuple(names))


def merge_question(model, raised) -> Question | None:
    """Whether refitting at ``RAISE_LAM`` × λ puts most rows of the two largest clusters together.

    ``raised`` is the CRAFT fitted at that λ on the same data (``None`` when it could not be fitted).
    """
    if raised is None or model.n_clusters_ < 2:
        return None
    sizes = np.bincount(model.labels_[model.labels_ >= 0])
    a, b = (int(c) for c in np.sort(np.argsort(sizes)[::-1][:2]))

    def home(c: int) -> tuple[int, float]:
        rows = raised.labels_[model.labels_ == c]
        counts = np.bincount(rows[rows >= 0], minlength=max(raised.n_clusters_, 1))
        return int(np.argmax(counts)), float(counts.max() / max(len(rows), 1))

    (ha, sa), (hb, sb) = home(a), home(b)
    merged = ha == hb
    reason = (f"Refitted at λ = {raised.lam_:.4g} ({RAISE_LAM:g} × {model.lam_:.4g}) the fit has K = "
              f"{raised.n_clusters_}: {sa:.0%} of cluster {a}'s rows go to its cluster {ha} and {sb:.0%} of "
              f"cluster {b}'s to its cluster {hb}"
              + (" — the same one: a larger λ makes a cluster dearer than the distance it saves."
                 if merged else " — still apart: their distance exceeds even the dearer cluster's price."))
    return Question("merge", f"Will raising λ to {raised.lam_:.4g} ({RAISE_LAM:g} × λ) merge clusters {a} and {b}?",
                    "yesno", "yes" if merged else "no", reason, ("yes", "no"))


# ---------------------------------------------------------------------------
# Lesson fits (cached per lecture and seed)


@dataclass(frozen=True)
class LessonFit:
    lecture: Lecture
    seed: int
    model: CRAFT
    X: pd.DataFrame
    y: np.ndarray
    true_mask: np.ndarray
    numbers: dict
    raised: CRAFT | None


@cache.kept_in(cache.FIGURES, spinner="Fitting the lesson…")
def lesson_fit(name: str, seed: int) -> LessonFit:
    lecture = LECTURES[name]
    model, X, y, mask = lecture.fit(seed, history_labels=True)
    raised = None
    if model.n_clusters_ >= 2:
        settings = {k: v for k, v in lecture.settings.items() if k not in ("k", "lam")}
        raised = CRAFT(**{**settings, "lam": RAISE_LAM * model.lam_, "random_state": seed}).fit(X)
    return LessonFit(lecture, seed, model, X, y, mask, lecture.measure(seed), raised)


def step_questions(fit: LessonFit, t: int) -> list[Question]:
    questions = [count_question(fit.model, t), feature_question(fit.model, fit.X, t)]
    if t == len(fit.model.history_):
        merge = merge_question(fit.model, fit.raised)
        if merge is not None:
            questions.append(merge)
    return questions


# ---------------------------------------------------------------------------
# Link parameters


def _flag(value, default: bool) -> bool:
    if value is None:
        return default
    return str(value).strip().lower() in ("1", "true", "yes", "on")


def link_settings() -> dict:
    """``lesson``, ``lecture``, ``hide`` and ``ask`` as the link gives them (checked: unknown values dropped)."""
    params = st.query_params
    lesson = params.get("lesson")
    hide = [part for part in (params.get("hide") or "").split(",") if part in HIDEABLE]
    return {"lesson": lesson if lesson in LECTURES else None, "lecture": _flag(params.get("lecture"), False),
            "hide": hide, "ask": _flag(params.get("ask"), True)}


def _write_link(lesson, lecture_mode: bool, hide: list, ask: bool) -> None:
    params = st.query_params
    wanted = {"lesson": lesson, "lecture": "1" if lecture_mode else None, "hide": ",".join(hide) or None,
              "ask": None if ask else "0"}
    for key, value in wanted.items():
        if value is None:
            if key in params:
                del params[key]
        elif params.get(key) != value:
            params[key] = value


# ---------------------------------------------------------------------------
# Page parts


def _style(lecture_mode: bool, hide: list) -> None:
    rules = []
    if lecture_mode:
        rules.append(f"""
        .stApp [data-testid="stMarkdownContainer"] p, .stApp [data-testid="stMarkdownContainer"] li,
        .stApp label, .stApp label p, .stApp button p, .stApp [data-testid="stMetricLabel"] p,
        .stApp [data-testid="stCaptionContainer"], .stApp [data-testid="stAlertContainer"] p
            {{ font-size: {LECTURE_TEXT_PX}px !important; line-height: 1.35 !important; }}
        .stApp [data-testid="stMetricValue"] {{ font-size: {2 * LECTURE_TEXT_PX}px !important; }}
        .stApp h1 {{ font-size: {2 * LECTURE_TEXT_PX}px !important; }}
        .stApp h2, .stApp h3 {{ font-size: {round(1.5 * LECTURE_TEXT_PX)}px !important; }}
        """)
    if "sidebar" in hide:
        rules.append('[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"],'
                     ' [data-testid="stExpandSidebarButton"] { display: none !important; }')
    if rules:
        ui.style("\n".join(rules))
    if lecture_mode:
        # Keys for next, previous, reveal and reset: a key press clicks the button of that label.
        labels = {key: html.escape(label) for key, label in KEYS.items()}
        script = """
        <script>
        const doc = window.parent.document;
        if (!doc.__craftLectureKeys) {
          doc.__craftLectureKeys = true;
          const keys = %s;
          doc.addEventListener("keydown", (event) => {
            const target = event.target;
            if (target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA" || target.isContentEditable)) return;
            const label = keys[event.key];
            if (!label) return;
            const button = [...doc.querySelectorAll("button")].find((b) => b.innerText.trim() === label);
            if (button && !button.disabled) { event.preventDefault(); button.click(); }
          });
        }
        </script>""" % str(labels).replace("'", '"')
        st.iframe(script, height=1)


def _chart(figure, lecture_mode: bool, key: str) -> None:
    if lecture_mode:
        # The figures set their own sizes per part (ticks, titles, legend): each is raised, not just the default.
        size = LECTURE_CHART_FONT_PX
        figure.update_layout(font_size=size, title_font_size=round(1.2 * size), legend_font_size=size)
        figure.update_xaxes(tickfont_size=size, title_font_size=size)
        figure.update_yaxes(tickfont_size=size, title_font_size=size)
        figure.update_annotations(font_size=size)
    # Drawn as every chart of the app is (the cartesian plotly.js bundle), not by st.plotly_chart's full one.
    plotly_view.show(figure, key=key, config=figure_export.chart_config(key))


def _answer_widget(question: Question, key: str):
    if question.kind == "count":
        return st.number_input(question.text, 0, 1000, None, step=1, key=key, placeholder="your guess")
    if question.kind == "features":
        return st.pills(question.text, list(question.options), selection_mode="multi", key=key)
    return st.radio(question.text, list(question.options), index=None, key=key, horizontal=True)


def _shown_answer(question: Question) -> str:
    if question.kind == "features":
        order = list(question.options)
        return ", ".join(name for name in order if name in question.answer) or "none"  # type: ignore[operator]
    return str(question.answer)


def _score() -> dict:
    return st.session_state.setdefault("lesson_score", {"asked": 0, "right": 0, "answers": {}})


def _reveal(fit: LessonFit, t: int, questions: list[Question]) -> None:
    score = _score()
    for q in questions:
        tag = f"{fit.lecture.name}:{fit.seed}:{q.key}"
        if tag in score["answers"]:
            continue
        given = st.session_state.get(f"lesson_q_{q.key}")
        right = q.correct(set(given) if q.kind == "features" and given is not None else given)
        score["answers"][tag] = {"question": q.text, "given": given, "right": right,
                                 "answer": _shown_answer(q), "reason": q.reason}
        score["asked"] += 1
        score["right"] += int(right)
    st.session_state.setdefault("lesson_revealed", set()).add((fit.lecture.name, fit.seed, t))


def _go(delta: int | None, n_steps: int) -> None:
    step = st.session_state.get("lesson_step", 1)
    st.session_state["lesson_step"] = 1 if delta is None else int(np.clip(step + delta, 1, n_steps))


def _step_view(fit: LessonFit, t: int, lecture_mode: bool, slot) -> None:
    record = fit.model.history_[t - 1]
    with slot.container():
        st.markdown(f"**After pass {t} of {len(fit.model.history_)}**")
        cols = st.columns(4)
        cols[0].metric("Clusters after the pass", record.n_clusters)
        cols[1].metric("Clusters opened", record.n_opened)
        cols[2].metric("Points that changed cluster", f"{record.n_changed:,}")
        cols[3].metric("Objective", f"{record.objective:,.6g}")
        figure = plots.fig_feature_masks(record.feature_mask, features=fit.model.engine_features_, order="natural",
                                         title=f"Selected features after pass {t}")
        _chart(figure, lecture_mode, key=f"lesson_masks_{t}_{time.monotonic_ns()}")


def handout(fit: LessonFit) -> str:
    """The lesson as one offline HTML page: its sentences, claim, numbers, figures and the questions asked."""
    lecture, model = fit.lecture, fit.model
    sections = [
        Section("What to look at", paragraphs=list(lecture.look_at)),
        Section("The claim", paragraphs=[
            lecture.claim, f"Checked over seeds {SEEDS[0]}–{SEEDS[-1]} by tests/library/test_lectures.py. "
            f"This handout's seed: {fit.seed}."],
            tables=[pd.DataFrame([{k: (round(v, 4) if isinstance(v, float) else v) for k, v in fit.numbers.items()}])]),
        Section("The fit", paragraphs=[
            f"Settings: {', '.join(f'{k}={v!r}' for k, v in lecture.settings.items())}; random_state={fit.seed}. "
            f"K = {model.n_clusters_}, λ = {model.lam_:.4g}, {len(model.history_)} pass(es)."],
            figures=[_masks_against_truth(fit)]),
    ]
    sections.append(Section("Pass by pass", paragraphs=[
        f"Pass {r.iteration}: {r.n_clusters} cluster(s), {r.n_opened} opened, {r.n_changed:,} point(s) changed "
        f"cluster, objective {r.objective:,.6g}." for r in model.history_],
        figures=[plots.fig_feature_masks(r.feature_mask, features=model.engine_features_, order="natural",
                                         title=f"Selected features after pass {r.iteration}")
                 for r in model.history_]))
    answers = _score()["answers"]
    mine = [a for tag, a in answers.items() if tag.startswith(f"{lecture.name}:{fit.seed}:")]
    rows = [{"question": a["question"], "your answer": "" if a["given"] is None else str(a["given"]),
             "right": "yes" if a["right"] else "no", "answer": a["answer"], "why": a["reason"]} for a in mine]
    questions = [q for t in range(1, len(model.history_) + 1) for q in step_questions(fit, t)]
    sections.append(Section(
        "Questions", paragraphs=[f"Answered: {sum(a['right'] for a in mine)} of {len(mine)} right."] if mine else
        ["Predict before each pass, then reveal:"] + [q.text for q in questions],
        tables=[pd.DataFrame(rows)] if rows else []))
    return render_report(f"Lesson: {lecture.title}", sections, subtitle="CRAFT Explorer handout")


def _masks_against_truth(fit: LessonFit):
    return plots.fig_feature_masks(fit.model, features=list(fit.model.feature_names_in_), true_mask=fit.true_mask,
                                   cluster_match=_match(fit), title="Planted | CRAFT")


def _match(fit: LessonFit):
    from craft.metrics import align_clusters

    return align_clusters(fit.y, fit.model.labels_)


def section() -> bool:
    """The lesson part of Teach. Returns whether the rest of Teach is to be shown."""
    link = link_settings()
    names = [None, *LECTURES]
    if "lesson_pick" not in st.session_state:
        st.session_state["lesson_pick"] = link["lesson"]
        st.session_state["lesson_lecture"] = link["lecture"]
        st.session_state["lesson_hide"] = link["hide"]
        st.session_state["lesson_ask"] = link["ask"]
    hide = st.session_state["lesson_hide"]
    if "lecturer" not in hide or not link["lecture"]:
        with st.expander("Lesson and lecturer settings", expanded=st.session_state["lesson_pick"] is None):
            st.selectbox("Lesson", names, key="lesson_pick",
                         format_func=lambda n: "(none: step through the fit on screen)" if n is None
                         else LECTURES[n].title)
            left, right = st.columns(2)
            left.toggle("Ask before each step", key="lesson_ask")
            left.toggle("Lecture mode (large text, keys → ← r 0)", key="lesson_lecture")
            right.multiselect("Hide for the audience", list(HIDEABLE), key="lesson_hide",
                              format_func=HIDEABLE.__getitem__)
    lesson, lecture_mode = st.session_state["lesson_pick"], st.session_state["lesson_lecture"]
    hide, ask = st.session_state["lesson_hide"], st.session_state["lesson_ask"]
    _write_link(lesson, lecture_mode, hide, ask)
    _style(lecture_mode, hide)
    if lesson is None:
        return "rest" not in hide
    seed = int(st.session_state.get("lesson_seed", 0))
    fit = lesson_fit(lesson, seed)
    lecture = fit.lecture
    st.header(lecture.title)
    for sentence in lecture.look_at:
        st.markdown(f"- {sentence}")
    st.info(f"**Claim** (checked over seeds 0–9 by the test suite): {lecture.claim}")
    st.caption("This seed's numbers: " + ", ".join(
        f"{k} = {v:.3g}" if isinstance(v, float) else f"{k} = {v}" for k, v in fit.numbers.items()))
    _chart(_masks_against_truth(fit), lecture_mode, key="lesson_truth")

    n_steps = len(fit.model.history_)
    step = int(np.clip(st.session_state.get("lesson_step", 1), 1, n_steps))
    st.session_state["lesson_step"] = step
    st.subheader(f"Step through the {n_steps} pass(es)")
    buttons = st.columns([1, 1, 1, 1, 2])
    buttons[0].button("◀ Previous", on_click=_go, args=(-1, n_steps), disabled=step <= 1, key="lesson_prev")
    buttons[1].button("Next ▶", on_click=_go, args=(1, n_steps), disabled=step >= n_steps, key="lesson_next")
    buttons[3].button("Reset", on_click=_go, args=(None, n_steps), key="lesson_reset")
    play = buttons[2].button("Play ▶▶", key="lesson_play", help="Animate the passes from this one to the last.")
    speed = buttons[4].select_slider("Seconds per pass", [0.25, 0.5, 1.0, 2.0, 3.0], 1.0, key="lesson_speed")
    st.caption(f"Pass {step} of {n_steps}. " + (
        f"Score: {_score()['right']} of {_score()['asked']} right." if ask else ""))
    revealed = (lesson, seed, step) in st.session_state.setdefault("lesson_revealed", set())
    questions = step_questions(fit, step) if ask else []
    if questions and not revealed and not play:
        st.markdown("**Predict, then reveal.**")
        for q in questions:
            _answer_widget(q, f"lesson_q_{q.key}")
        st.button("Reveal", on_click=_reveal, args=(fit, step, questions), key="lesson_reveal", type="primary")
        st.caption("The pass is shown once you reveal.")
    else:
        if questions:
            for q in questions:
                tag = f"{lesson}:{seed}:{q.key}"
                answer = _score()["answers"].get(tag)
                verdict = ("**Right.**" if answer["right"] else "**Not quite.**") if answer else ""
                st.success(f"{verdict} {q.text} Answer: **{_shown_answer(q)}**. Why: {q.reason}")
        slot = st.empty()
        if play:
            for t in range(step, n_steps + 1):
                _step_view(fit, t, lecture_mode, slot)
                time.sleep(float(speed))
            st.session_state["lesson_step"] = n_steps
        else:
            _step_view(fit, step, lecture_mode, slot)
    st.number_input("Seed of the data and the fit", SEEDS[0], SEEDS[-1], seed, key="lesson_seed")
    st.download_button("Handout (HTML, works offline)", handout(fit), file_name=f"lesson_{lesson}_{seed}.html",
                       mime="text/html", key="lesson_handout")
    return "rest" not in hide
