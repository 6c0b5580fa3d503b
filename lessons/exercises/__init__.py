"""Graded exercises: one spec per exercise, shared by the learner's check and the grader (``06``).

How to add an exercise (notebooks 07-09 do it the same way as 06):

1. In ``lessons/exercises/nbNN.py`` (one module per notebook; add the module name to
   ``MODULES`` below if it is new), register the exercise with a decorator:

   * a number or array the learner computes::

         @value_exercise("ex07_spread", title="Spread of the added score", points=1,
                         name="spread")
         def _():
             return <the value, computed with lessons code>

   * a function the learner writes, called on inputs drawn at grading time::

         def _cases(rng):            # rng: numpy.random.Generator
             return [{"x": rng.normal(size=(3, 4)).tolist(), "position": int(rng.integers(0, 100))}
                     for _ in range(10)]

         @function_exercise("ex07_added_score", title="The added score", points=2,
                            name="added_score", cases=_cases, tolerance=1e-6)
         def _(x, position):
             return <the reference answer, computed with lessons code>

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

``check(grade_id, answer)`` prints ``passes (N cases)``, one counterexample (the input, the
expected value, the value given) or ``not answered yet`` for a stub; it never raises in a
notebook unless the environment variable ``L13_CHECK_RAISES=1`` is set (for nbgrader's
autograder, where a grade cell earns its points by not raising).
"""

from __future__ import annotations

import os

import numpy as np

from .._modules import import_all
from ._spec import (
    _EXERCISES,
    MAX_ANSWER_SIZE,
    Exercise,
    call_arguments,
    compare,
    format_plain,
    function_exercise,
    shape_of,
    to_plain,
    value_exercise,
)

MODULES = ("nb06", "nb07", "nb08", "nb09")


def _load() -> None:
    import_all(__name__, MODULES)


def all_exercises(notebook: str | None = None) -> list[Exercise]:
    """Registered exercises in notebook order (then registration order), or one notebook's."""
    _load()
    order = {gid: i for i, gid in enumerate(_EXERCISES)}
    exercises = sorted(_EXERCISES.values(), key=lambda e: (e.notebook, order[e.grade_id]))
    return [e for e in exercises if notebook is None or e.notebook == notebook]


def get(grade_id: str) -> Exercise:
    """The exercise with this grade_id; the KeyError lists the known ones."""
    _load()
    try:
        return _EXERCISES[grade_id]
    except KeyError:
        known = ", ".join(_EXERCISES) or "none"
        raise KeyError(f"no exercise {grade_id!r}; known exercises: {known}") from None


class _NotAnswered(Exception):
    pass


def counterexample(ex: Exercise, answer, rng: np.random.Generator) -> tuple[int, dict | None]:
    """Run ``answer`` the way the grader judges it; return (cases checked, first failure or None).

    A failure is a dict with ``input`` (plain data, or None for a value exercise),
    ``expected``, ``given`` (plain data or a description) and ``reason``. Raises
    ``_NotAnswered`` for a stub.
    """
    if answer is None:
        raise _NotAnswered
    if ex.kind == "value":
        expected = ex.expected_value()
        try:
            given = to_plain(answer)
        except TypeError as exc:
            return 1, {"input": None, "expected": expected, "given": repr(answer)[:200], "reason": str(exc)}
        reason = compare(expected, given, ex.tolerance)
        return 1, None if reason is None else {"input": None, "expected": expected, "given": given,
                                               "reason": reason}
    if not callable(answer):
        return 0, {"input": None, "expected": f"a function named {ex.name}",
                   "given": repr(answer)[:200], "reason": f"{ex.name} is not a function"}
    cases = ex.draw_cases(rng)
    failures = []
    for case in cases:
        expected = ex.expected_for(case)
        try:
            result = answer(**call_arguments(case))
        except NotImplementedError:
            raise _NotAnswered from None
        except Exception as exc:
            failures.append({"input": case, "expected": expected,
                             "given": f"raised {type(exc).__name__}: {exc}"[:300],
                             "reason": f"it raised {type(exc).__name__}"})
            continue
        try:
            given = to_plain(result)
        except TypeError as exc:
            failures.append({"input": case, "expected": expected, "given": repr(result)[:200],
                             "reason": str(exc)})
            continue
        reason = compare(expected, given, ex.tolerance)
        if reason is not None:
            failures.append({"input": case, "expected": expected, "given": given, "reason": reason})
    return len(cases), smallest(failures)


def smallest(failures: list[dict]) -> dict | None:
    """The failure with the smallest input (the easiest counterexample to read), or None."""
    if not failures:
        return None
    return min(failures, key=lambda f: len(format_plain(f["input"], limit=10**9)))


def describe_failure(ex: Exercise, failure: dict) -> list[str]:
    """A counterexample as lines of text (used by check and by the grader's feedback)."""
    lines = []
    if failure["input"] is not None:
        args = ", ".join(f"{k}={format_plain(v, 200)}" for k, v in failure["input"].items())
        lines.append(f"input:    {ex.name}({args})")
    given = failure["given"]
    lines.append(f"expected: {format_plain(failure['expected'])}")
    lines.append(f"given:    {given if isinstance(given, str) else format_plain(given)}")
    lines.append(f"why:      {failure['reason']}")
    return lines


def check(grade_id: str, answer, *, seed: int | None = None) -> None:
    """Check a learner's answer in the notebook and print the verdict (``06``).

    Prints ``passes (N cases)``, ``not answered yet``, or one concrete counterexample.
    Function exercises are tried on inputs drawn afresh each time (``seed`` fixes them).
    """
    ex = get(grade_id)
    rng = np.random.default_rng(seed)
    try:
        n, failure = counterexample(ex, answer, rng)
    except _NotAnswered:
        print(f"{ex.title}: not answered yet")
        if os.environ.get("L13_CHECK_RAISES") == "1":
            raise AssertionError(f"{grade_id}: not answered yet") from None
        return
    if failure is None:
        print(f"{ex.title}: passes ({n} case{'s' if n != 1 else ''})")
        return
    print(f"{ex.title}: does not pass. A counterexample:")
    for line in describe_failure(ex, failure):
        print("  " + line)
    if os.environ.get("L13_CHECK_RAISES") == "1":
        raise AssertionError(f"{grade_id}: {failure['reason']}")


__all__ = [
    "MAX_ANSWER_SIZE",
    "Exercise",
    "all_exercises",
    "call_arguments",
    "check",
    "compare",
    "counterexample",
    "describe_failure",
    "format_plain",
    "function_exercise",
    "get",
    "shape_of",
    "smallest",
    "to_plain",
    "value_exercise",
]
