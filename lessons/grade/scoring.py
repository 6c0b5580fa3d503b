"""Scoring: the questions drawn for a notebook, and the one judge's verdict on each reply.

The grader never decides by itself whether an answer is right: it hands the plain data the
kernel sent back to :func:`lessons.exercises.judge` (the same judge as the learner's
``check``) and stores the typed verdict's outcome, points and words.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..exercises import N_, Exercise, Outcome, Verdict, all_exercises, head_line, judge
from ..i18n import gettext as _
from .probe import Question, candidate_source
from .runner import NoAnswer, Unanswered

GRADED_KINDS = ("value", "function", "checker")


@dataclass
class Drawn:
    """A notebook's questions for one seed, with the expected values computed once."""

    notebook: str
    seed: int
    questions: list[Question]
    written: list[Exercise]
    expected: dict = field(default_factory=dict)  # grade_id -> expected values of the cases

    @property
    def exercises(self) -> list[Exercise]:
        order = {e.grade_id: i for i, e in enumerate(all_exercises(self.notebook))}
        exs = [q.exercise for q in self.questions] + self.written
        return sorted(exs, key=lambda e: order[e.grade_id])


def draw(notebook: str, seed: int) -> Drawn:
    """The cases (function exercises) and the candidates' order (checker exercises) for this seed."""
    questions = []
    written = []
    for i, ex in enumerate(all_exercises(notebook)):
        rng = np.random.default_rng([seed, int(notebook), i])
        if ex.kind == "written":
            written.append(ex)
        elif ex.kind == "function":
            questions.append(Question(ex, ex.draw_cases(rng)))
        elif ex.kind == "checker":
            named = [("correct", ex.correct.fn)] + [(m.name, m.fn) for m in ex.hidden_mutants]
            order = rng.permutation(len(named))
            keys = {f"c{j}": named[k][0] for j, k in enumerate(order)}
            candidates = tuple((f"c{j}", candidate_source(named[k][1])) for j, k in enumerate(order))
            questions.append(Question(ex, None, candidates, keys))
        else:
            questions.append(Question(ex))
    drawn = Drawn(notebook, seed, questions, written)
    for q in questions:
        if q.exercise.kind == "function":
            drawn.expected[q.exercise.grade_id] = [q.exercise.expected_for(c) for c in q.cases]
    return drawn


def draw_questions(notebook: str, seed: int) -> list[Question]:
    return draw(notebook, seed).questions


def column_label(ex: Exercise) -> str:
    """"Exercise 1a" from the title "Exercise 1a: the dot ..." (else the grade id)."""
    head = ex.title.split(":", 1)[0].strip()
    return head if head.lower().startswith(("exercise", "question")) and len(head) <= 24 else ex.grade_id


# Words kept in English here (N_) and translated where a record is made (see unanswered):
# every one starts with the words of NOT_GRADED_PREFIX, in every language.
NOT_GRADED_PREFIX = N_("not graded: {detail}")
NOT_GRADED_WORDS = {
    NoAnswer.OUT_OF_TIME: N_("not graded: the submission ran out of time or its kernel kept dying"),
    NoAnswer.TIMED_OUT: NOT_GRADED_PREFIX,
    NoAnswer.KILLED_KERNEL: N_("not graded: grading it stopped the kernel ({detail})"),
    NoAnswer.UNREADABLE: N_("not graded: could not read the answer: {detail}"),
    NoAnswer.FORGED: NOT_GRADED_PREFIX,
    NoAnswer.NOT_A_NOTEBOOK: NOT_GRADED_PREFIX,
}


def _base(ex: Exercise) -> dict:
    return {"grade_id": ex.grade_id, "title": ex.title, "column": column_label(ex), "name": ex.name,
            "kind": ex.kind, "max": ex.points}


def from_verdict(ex: Exercise, v: Verdict, where: int | None = None) -> dict:
    out = _base(ex)
    out.update({
        "points": v.points, "outcome": v.outcome.name, "outcome_words": v.outcome.value,
        "cases": v.cases, "passed": v.passed,
        "message": v.message(reveal=False), "hint": v.hint,
    })
    if ex.kind == "value":
        revealed = v.message(reveal=True)
        if revealed != out["message"]:
            out["message_revealed"] = revealed
    if ex.kind == "checker":
        out["caught"], out["missed"] = list(v.caught), list(v.missed)
    if where is not None:
        out["judged_after_cell"] = where or None
    return out


def unanswered(ex: Exercise, u: Unanswered) -> dict:
    out = _base(ex)
    words = _(NOT_GRADED_WORDS[u.why]).format(detail=u.detail)
    out.update({"points": 0, "outcome": u.why.name, "cases": 0, "passed": 0,
                "message": head_line(ex.title, words), "hint": None,
                "not_graded": words.removeprefix(_(NOT_GRADED_PREFIX).format(detail=""))})
    return out


def score(q: Question, reply, drawn: Drawn | None = None, where: int | None = None) -> dict:
    """The record of one exercise: the one judge's verdict on the kernel's reply (plain data),
    or why there is no reply (:class:`Unanswered`)."""
    ex = q.exercise
    if isinstance(reply, Unanswered):
        return unanswered(ex, reply)
    expected = drawn.expected.get(ex.grade_id) if drawn is not None else None
    try:
        v = judge(ex, reply, q.cases, expected=expected)
    except Exception as exc:  # a fault of the course's judge must not stop the class's grading
        why = _("the judge failed ({error})").format(error=f"{type(exc).__name__}: {exc}")
        return unanswered(ex, Unanswered(NoAnswer.UNREADABLE, why))
    return from_verdict(ex, v, where)


def score_written(ex: Exercise, text: str | None) -> dict:
    v = judge(ex, text or "")
    out = from_verdict(ex, v)
    out["answer"] = (text or "").strip()[:5000]
    if v.outcome is Outcome.MANUAL:
        out["points"] = None  # to be graded by a person (--manual)
    return out


def written_answers(markdown: list[tuple[int, str, str | None]], written: list[Exercise],
                    questions: dict[str, frozenset[str]] | None = None) -> dict[str, str]:
    """The text of each written answer: the markdown cell carrying its nbgrader grade_id (the
    last one, as for code, but an answered cell is never replaced by a later copy that still
    holds only the placeholder: a duplicated answer cell loses nothing).

    An answer whose cell lost its nbgrader metadata (a tool that drops cell metadata) is the
    text cell right after its question: ``questions`` maps a grade id to the hash of the
    question cell, in any edition and version (:func:`lessons.grade.course.question_cells`)."""
    from ..exercises._spec import UNANSWERED_TEXT
    from .course import cell_hash

    ids = {ex.grade_id for ex in written}
    out: dict[str, str] = {}
    for _number, source, gid in markdown:
        if gid in ids and isinstance(source, str):
            blank = not source.strip() or source.strip() == UNANSWERED_TEXT
            if blank and gid in out:
                continue
            out[gid] = source
    tagged = {gid for _, _, gid in markdown if gid in ids}
    by_number = {number: (source, gid) for number, source, gid in markdown}
    for gid, question in (questions or {}).items():  # question: the set of its cell's hashes
        if gid not in ids or gid in tagged:
            continue
        for number, source, _gid in markdown:
            if isinstance(source, str) and cell_hash(source) in question:
                after = by_number.get(number + 1)
                if after is not None and after[1] is None and isinstance(after[0], str):
                    out[gid] = after[0]
    return out
