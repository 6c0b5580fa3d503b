"""Graded exercises: one spec per exercise, shared by the learner's check and the grader (``06``).

How to add an exercise (notebooks 07-09 do it the same way as 06):

1. In ``lessons/exercises/nbNN.py`` (one module per notebook; add the module name to
   ``MODULES`` below if it is new), register the exercise with a decorator:

   * a number or array the learner computes::

         @value_exercise("ex07_spread", title=N_("Spread of the added score"), points=1,
                         name="spread")
         def _():
             return <the value, computed with lessons code>

   * a function the learner writes, called on inputs drawn at grading time::

         def _cases(rng):            # rng: numpy.random.Generator
             return [{"x": rng.normal(size=(3, 4)).tolist(), "position": int(rng.integers(0, 100))}
                     for _ in range(10)]

         @function_exercise("ex07_added_score", title=N_("The added score"), points=2,
                            name="added_score", cases=_cases, tolerance=1e-6,
                            practises="what the exercise practises (the grading guide's list)",
                            mutants=(Mutant("sign_flipped", N_("your output is what you get with "
                                            "the angle's sign flipped: ..."), <wrong function>),),
                            where=lambda index, case: gettext("row {row}").format(row=index[0]))
         def _(x, position):
             return <the reference answer, computed with lessons code>

   The reference's parameter names are the ones the learner must keep (a renamed one is
   reported as "keep the parameter names (x, position)"). Give every function exercise
   mutants: a wrong answer that gives a mutant's outputs on every drawn case gets its hint.

   Cases are plain data (ints, floats, nested lists): the learner's function and the
   reference receive lists as float64 numpy arrays (:func:`call_arguments`). Draw other
   shapes, positions and values from ``rng`` so that a hard-coded answer fails; keep a
   case small (the grader sends it to the student's kernel as JSON).

2. In ``solutions/NN_*.ipynb``, the answer cell holds the code between ``### BEGIN
   SOLUTION`` and ``### END SOLUTION`` and carries nbgrader metadata with the same
   ``grade_id``; the locked check cell below it runs ``check("ex07_spread", spread)``.
   See :mod:`lessons.exercises.release` for the exact cell layout, then run
   ``python -m lessons.exercises.release`` to write and execute the student notebook.

3. ``python -m lessons.grade`` grades the new exercise with no further change.

4. The words a learner reads are translated (:mod:`lessons.i18n`, domain ``lessons``): a
   title and a hint are kept in English as data and marked with ``N_("...")`` (translated
   where they are shown), a counterexample label is made with ``gettext("... {name} ...")``
   and ``.format(name=...)`` (``from ..i18n import gettext``; not ``_``, which the modules
   use for the registered reference functions). Add the Chinese of every new message to
   ``lessons/locale/zh_CN/LC_MESSAGES/lessons.po`` and run ``python -m lessons.i18n
   compile``: ``tests/test_i18n_messages.py`` lists any message without a translation.

Other kinds: :func:`checker_exercise` ("write the tests": the learner writes a checker,
graded by how many hidden buggy implementations, :class:`Mutant`, it rejects) and
:func:`written_question` (an answer in words, graded by a person). Function exercises take
``mutants=`` (known bugs whose hints name the bug), value exercises ``wrong_values=``.

``check(grade_id, answer)`` collects the answer's outputs (:mod:`._plain`), asks the one
judge (:func:`judge`) and prints the verdict: ``passes (N cases)``, ``not answered yet``, or
the smallest failing input with a hint. It never raises in a notebook unless the environment
variable ``L13_CHECK_RAISES=1`` is set (for nbgrader's autograder, where a grade cell earns
its points by not raising). The grader calls the same :func:`judge` on the outputs it gets
back from the student's kernel (computed there by the same :mod:`._plain` code).
"""

from __future__ import annotations

import os

import numpy as np

from .._modules import import_all
from ..i18n import gettext as _
from ._plain import run_case, run_checker
from ._spec import (
    _EXERCISES,
    KINDS,
    MAX_ANSWER_SIZE,
    N_,
    UNANSWERED_TEXT,
    Exercise,
    Failure,
    Mutant,
    Outcome,
    Verdict,
    call_arguments,
    checker_exercise,
    format_call,
    format_plain,
    function_exercise,
    head_line,
    judge,
    label,
    mutant_hint,
    shape_of,
    to_plain,
    value_exercise,
    written_question,
)

MODULES = ("nb06", "nb07", "nb08", "nb09", "nb10")


def _load() -> None:
    import_all(__name__, MODULES)


def all_exercises(notebook: str | None = None, kinds: tuple[str, ...] = KINDS) -> list[Exercise]:
    """Registered exercises in notebook order (then registration order), or one notebook's;
    ``kinds`` keeps only those kinds (e.g. ``("value", "function")``)."""
    _load()
    order = {gid: i for i, gid in enumerate(_EXERCISES)}
    exercises = sorted(_EXERCISES.values(), key=lambda e: (e.notebook, order[e.grade_id]))
    return [e for e in exercises if (notebook is None or e.notebook == notebook) and e.kind in kinds]


def get(grade_id: str) -> Exercise:
    """The exercise with this grade_id; the KeyError lists the known ones."""
    _load()
    try:
        return _EXERCISES[grade_id]
    except KeyError:
        known = ", ".join(_EXERCISES) or "none"
        raise KeyError(f"no exercise {grade_id!r}; known exercises: {known}") from None


# ------------------------------------------------------------------ collecting outputs
def _with_time_limit(seconds: float, fn, *args):
    """fn(*args), stopped after ``seconds`` where a timer signal can be used (the main
    thread, as in a notebook's kernel); returns {"timeout": True} when stopped."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        return fn(*args)

    class _Timeout(BaseException):
        pass

    def on_alarm(signum, frame):
        raise _Timeout

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return fn(*args)
    except _Timeout:
        return {"timeout": True}
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def outputs_of(ex: Exercise, answer, rng: np.random.Generator, *, public: bool = True):
    """(outputs, cases) of ``answer`` for the judge, computed here as the grader's kernel
    computes them (the same :mod:`._plain` functions)."""
    if ex.kind == "value":
        return to_plain(answer), None
    if ex.kind == "written":
        return answer if isinstance(answer, str) else "", None
    if answer is None:
        return {"missing": True}, None
    if not callable(answer):
        return {"not_function": type(answer).__name__}, None
    if ex.kind == "checker":
        candidates = [ex.correct] + list(ex.public_mutants if public else ex.hidden_mutants)
        outputs = {}
        for i, m in enumerate(candidates):
            outputs["correct" if i == 0 else m.name] = _with_time_limit(
                ex.time_limit, run_checker, answer, m.fn
            )
        return outputs, None
    cases = ex.draw_cases(rng)
    return [run_case(answer, case) for case in cases], cases


def verdict_of(grade_id: str, answer, *, seed=None, public: bool = True) -> Verdict:
    """The one judge's verdict on ``answer`` now (what ``check`` prints). A checker exercise
    is judged on its public mutants unless ``public=False``."""
    ex = get(grade_id)
    outputs, cases = outputs_of(ex, answer, np.random.default_rng(seed), public=public)
    return judge(ex, outputs, cases, public=public)


def check(grade_id: str, answer=None, *, seed: int | None = None) -> None:
    """Check a learner's answer in the notebook and print the verdict (``06``).

    Prints ``passes (N cases)``, ``not answered yet``, or the smallest input that fails and,
    where the answer behaves like a known bug, a hint naming it. Function exercises are tried
    on inputs drawn afresh each time (``seed`` fixes them). Never raises in a notebook, unless
    ``L13_CHECK_RAISES=1`` (nbgrader's autograder) and the answer is not right.
    """
    try:
        verdict = verdict_of(grade_id, answer, seed=seed)
    except KeyError:
        raise
    except Exception as exc:  # a fault of the course's own code: say so, never crash the cell
        print(_("{grade_id}: could not be checked ({error})").format(
            grade_id=grade_id, error=f"{type(exc).__name__}: {exc}"
        ))
        if os.environ.get("L13_CHECK_RAISES") == "1":
            raise AssertionError(_("{grade_id}: could not be checked").format(grade_id=grade_id)) from exc
        return
    print(verdict.message())
    if os.environ.get("L13_CHECK_RAISES") == "1" and verdict.outcome is not Outcome.RIGHT:
        outcome = _(verdict.outcome.value)
        raise AssertionError(_("{grade_id}: {outcome}").format(grade_id=grade_id, outcome=outcome))


__all__ = [
    "KINDS",
    "MAX_ANSWER_SIZE",
    "UNANSWERED_TEXT",
    "Exercise",
    "Failure",
    "Mutant",
    "N_",
    "Outcome",
    "Verdict",
    "all_exercises",
    "call_arguments",
    "check",
    "checker_exercise",
    "format_call",
    "format_plain",
    "function_exercise",
    "get",
    "head_line",
    "judge",
    "label",
    "mutant_hint",
    "outputs_of",
    "run_case",
    "run_checker",
    "shape_of",
    "to_plain",
    "value_exercise",
    "verdict_of",
    "written_question",
]
