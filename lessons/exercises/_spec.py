"""The exercise spec: what an exercise asks for and how an answer is compared (``06``).

An :class:`Exercise` names the thing a learner defines in a notebook (a variable or a
function) and says how the right answer is computed *independently*, with the package's
own code. The learner's ``check`` cell (:func:`lessons.exercises.check`) and the
instructor's grader (``python -m lessons.grade``) both use this spec and the same
comparison, :func:`compare`, so a notebook check and a grade cannot disagree.

Answers travel as *plain data*: floats, ints and nested lists of them (what
:func:`to_plain` returns). The grader takes exactly this back from a student's kernel as
JSON text, so nothing a student's code returns is ever unpickled or evaluated.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

KINDS = ("value", "function")

# How many numbers one answer may hold before it is refused (a guard against huge outputs).
MAX_ANSWER_SIZE = 100_000


@dataclass(frozen=True)
class Exercise:
    """One graded exercise.

    grade_id   unique id, ``ex<NN>_<what>``; equals ``metadata.nbgrader.grade_id`` of the
               notebook cell holding the answer.
    notebook   the two-digit notebook number ("06").
    title      a short title for feedback and the gradebook.
    points     what a correct answer earns.
    name       the name the learner defines: a variable (kind "value") or a function
               (kind "function").
    kind       "value" or "function".
    expected   (value) no arguments -> the expected value, computed with ``lessons``.
    cases      (function) ``cases(rng)`` with a ``numpy.random.Generator`` -> a list of
               keyword-argument dicts of plain data, drawn anew at each grading.
    reference  (function) ``reference(**case)`` -> the expected return value.
    tolerance  an answer agrees when |given - expected| <= tolerance * max(1, |expected|)
               element by element, with the same shape.
    """

    grade_id: str
    notebook: str
    title: str
    points: float
    name: str
    kind: str
    expected: Callable[[], Any] | None = field(default=None, repr=False, compare=False)
    cases: Callable[[np.random.Generator], list[dict]] | None = field(default=None, repr=False, compare=False)
    reference: Callable[..., Any] | None = field(default=None, repr=False, compare=False)
    tolerance: float = 1e-6

    def expected_value(self):
        """The expected answer of a value exercise, as plain data."""
        if self.kind != "value":
            raise TypeError(f"{self.grade_id} is a function exercise; use expected_for(case)")
        return to_plain(self.expected())

    def draw_cases(self, rng: np.random.Generator) -> list[dict]:
        """Inputs for a function exercise, drawn from ``rng`` (plain data, JSON-serialisable)."""
        if self.kind != "function":
            raise TypeError(f"{self.grade_id} is a value exercise; it has no cases")
        cases = self.cases(rng)
        if not cases:
            raise ValueError(f"{self.grade_id}: the case generator returned no cases")
        return [{key: to_plain(value) for key, value in case.items()} for case in cases]

    def expected_for(self, case: dict):
        """The reference answer for one case, as plain data."""
        return to_plain(self.reference(**call_arguments(case)))


def call_arguments(case: dict) -> dict:
    """How a case is passed to a function: every list becomes a float64 numpy array.

    Scalars (ints, floats) are passed as they are. The grader's probe, the learner's check
    and the reference all call with the same arguments.
    """
    return {key: np.array(value, dtype=np.float64) if isinstance(value, list) else value
            for key, value in case.items()}


def to_plain(value):
    """A number, or nested lists of numbers, as Python floats/ints and lists.

    Arrays and tuples become lists; numpy scalars become Python numbers; ``None`` stays
    ``None``. Anything else raises ``TypeError``.
    """
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    if isinstance(value, (list, tuple, np.ndarray)):
        arr = np.asarray(value)
        if arr.dtype == object:
            return [to_plain(v) for v in value]
        if not (np.issubdtype(arr.dtype, np.number) or arr.dtype == np.bool_):
            raise TypeError(f"expected numbers; got an array of dtype {arr.dtype}")
        if np.issubdtype(arr.dtype, np.complexfloating):
            raise TypeError("expected real numbers; got complex numbers")
        return arr.astype(np.float64).tolist()
    raise TypeError(f"expected a number or an array of numbers; got {type(value).__name__}")


def shape_of(value) -> tuple[int, ...] | None:
    """The shape of plain data (nested lists of numbers), or None if it is ragged or not numeric."""
    if isinstance(value, bool):
        return None
    if isinstance(value, numbers.Real):
        return ()
    if not isinstance(value, list):
        return None
    if not value:
        return (0,)
    inner = [shape_of(v) for v in value]
    if inner[0] is None or any(s != inner[0] for s in inner):
        return None
    return (len(value), *inner[0])


def _flat(value) -> list:
    if isinstance(value, list):
        return [x for v in value for x in _flat(v)]
    return [value]


def _index_text(flat_index: int, shape: tuple[int, ...]) -> str:
    if not shape:
        return ""
    return "[" + ", ".join(str(int(i)) for i in np.unravel_index(flat_index, shape)) + "]"


def compare(expected, given, tolerance: float) -> str | None:
    """``None`` when ``given`` agrees with ``expected``; otherwise the reason, in words.

    Both are plain data. The shapes must be equal and every number finite and within
    ``tolerance * max(1, |expected|)``.
    """
    exp_shape = shape_of(expected)
    if given is None:
        return "no answer (None)"
    given_shape = shape_of(given)
    if given_shape is None:
        return "the answer is not a number or a regular array of numbers"
    if given_shape != exp_shape:
        return f"shape {given_shape} given, {exp_shape} expected"
    for i, (e, g) in enumerate(zip(_flat(expected), _flat(given), strict=True)):
        g = float(g)
        where = _index_text(i, exp_shape)
        if not math.isfinite(g):
            return f"element {where} is {g}".replace("element  ", "the value ")
        if abs(g - e) > tolerance * max(1.0, abs(e)):
            label = f"element {where}" if where else "the value"
            return f"{label} differs: {g:.8g} given, {e:.8g} expected"
    return None


def format_plain(value, limit: int = 400) -> str:
    """Plain data as short readable text (8 significant digits), cut at ``limit`` characters."""

    def fmt(v):
        if isinstance(v, list):
            return "[" + ", ".join(fmt(x) for x in v) + "]"
        if isinstance(v, bool) or v is None:
            return repr(v)
        if isinstance(v, numbers.Integral):
            return str(v)
        if isinstance(v, numbers.Real):
            return f"{v:.8g}"
        return repr(v)

    text = fmt(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


_EXERCISES: dict[str, Exercise] = {}


def _register(ex: Exercise) -> Exercise:
    if ex.kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}; got {ex.kind!r}")
    prefix = f"ex{ex.notebook}_"
    if not (len(ex.notebook) == 2 and ex.notebook.isdigit() and ex.grade_id.startswith(prefix)):
        raise ValueError(f"grade_id must start with {prefix!r} (the notebook number); got {ex.grade_id!r}")
    if not ex.name.isidentifier():
        raise ValueError(f"name must be a Python identifier; got {ex.name!r}")
    if not (isinstance(ex.points, (int, float)) and ex.points > 0):
        raise ValueError(f"points must be a positive number; got {ex.points!r}")
    if ex.grade_id in _EXERCISES:
        raise ValueError(f"exercise {ex.grade_id!r} is registered twice")
    _EXERCISES[ex.grade_id] = ex
    return ex


def value_exercise(grade_id: str, *, title: str, points: float, name: str, tolerance: float = 1e-6):
    """Decorator: the decorated function (no arguments) computes the expected value.

    >>> @value_exercise("ex06_example", title="cos 1", points=1, name="answer")  # doctest: +SKIP
    ... def _():
    ...     return np.cos(1.0)
    """
    notebook = grade_id[2:4]

    def register(fn):
        _register(
            Exercise(grade_id, notebook, title, points, name, "value", expected=fn, tolerance=tolerance)
        )
        return fn

    return register


def function_exercise(
    grade_id: str,
    *,
    title: str,
    points: float,
    name: str,
    cases: Callable[[np.random.Generator], list[dict]],
    tolerance: float = 1e-6,
):
    """Decorator: the decorated function is the reference; ``cases(rng)`` draws its inputs.

    The reference receives the same arguments as the learner's function (lists as float64
    arrays, see :func:`call_arguments`) and must compute the answer with ``lessons`` code,
    not with a copy of the solution.
    """
    notebook = grade_id[2:4]

    def register(fn):
        _register(
            Exercise(grade_id, notebook, title, points, name, "function",
                     cases=cases, reference=fn, tolerance=tolerance)
        )
        return fn

    return register
