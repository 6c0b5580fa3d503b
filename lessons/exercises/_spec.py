"""The exercise spec and the ONE judge of an answer (``06``).

An :class:`Exercise` names the thing a learner defines in a notebook (a variable, a function,
a checker function, or a written answer) and says how the right answer is computed
*independently*, with the package's own code. The learner's ``check`` cell
(:func:`lessons.exercises.check`) and the instructor's grader (``python -m lessons.grade``)
both collect the answer's *outputs* as plain data (:mod:`lessons.exercises._plain`, a
self-contained module the grader ships into its sandbox) and call the same function,
:func:`judge`, which returns a typed :class:`Verdict`. Words are made from the verdict at the
very end (:meth:`Verdict.message`); nothing decides by message text.

What ``outputs`` is, per kind of exercise:

* ``value``: the ``to_plain``'d value (``None`` or ``{"missing": True}`` for a stub);
* ``function``: one entry per drawn case, each ``run_case(fn, case)`` (plain data or a tag);
  or a single tag for the whole answer (``{"missing": True}``: the name is not defined,
  ``{"not_function": "int"}``: it is not a function);
* ``checker``: a dict ``{"correct": r, <mutant name>: r, ...}``, each ``r`` what
  ``run_checker(checker, candidate)`` returned (True, False, or a tag; ``{"timeout": True}``
  for a call stopped at the time limit);
* ``written``: the answer text (graded by a person: the verdict is MANUAL, or MISSING).
"""

from __future__ import annotations

import enum
import inspect
import math
import numbers
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..i18n import gettext as _
from ._plain import MAX_ANSWER_SIZE, call_arguments, is_tag, run_case, to_plain


def N_(message: str) -> str:
    """Mark ``message`` for translation without translating it now (gettext's ``N_``): for
    words kept as data (a title, a hint) and translated where they are shown, in the language
    of that moment (``_(ex.title)``)."""
    return message


KINDS = ("value", "function", "checker", "written")

# A wrong answer whose numbers are all within this of the right ones, each relative to its own
# size or the case's median size, whichever is larger, is most likely right but computed in
# float32 or float16.
PRECISION_LEVEL = 1e-3

# What a written answer holds before the learner writes it.
UNANSWERED_TEXT = "YOUR ANSWER HERE"


@dataclass(frozen=True)
class Mutant:
    """A known wrong implementation: for hints (its words) and for "write the tests".

    name   a short id, ``"sign_flipped"``;
    hint   one sentence naming the bug, shown when an answer behaves like this mutant;
    fn     same parameters as the exercise's reference function (for a checker exercise:
           a SELF-CONTAINED top-level numpy-only function, shipped as source to the sandbox).
    """

    name: str
    hint: str
    fn: Callable = field(repr=False, compare=False)


class Outcome(enum.Enum):
    RIGHT = N_("right")
    MISSING = N_("not answered")
    ERROR = N_("raised an error")
    SIGNATURE = N_("wrong parameter names")
    NOT_A_FUNCTION = N_("not a function")
    WRONG_SHAPE = N_("wrong shape")
    WRONG_VALUE = N_("wrong value")
    NOT_REAL = N_("complex numbers")
    RAGGED = N_("ragged list")
    NOT_NUMBERS = N_("not numbers")
    PARTIAL = N_("some bugs caught")  # checker exercises: points in proportion
    REJECTS_CORRECT = N_("rejects the correct implementation")  # checker exercises
    MANUAL = N_("graded by a person")  # written questions


# Tag of _plain -> the outcome it stands for.
_TAG_OUTCOME = {
    "missing": Outcome.MISSING,
    "error": Outcome.ERROR,
    "signature": Outcome.SIGNATURE,
    "not_function": Outcome.NOT_A_FUNCTION,
    "complex": Outcome.NOT_REAL,
    "ragged": Outcome.RAGGED,
    "unsupported": Outcome.NOT_NUMBERS,
    "not_bool": Outcome.NOT_NUMBERS,
    "too_large": Outcome.WRONG_SHAPE,
    "timeout": Outcome.ERROR,
}


@dataclass(frozen=True)
class Failure:
    """The smallest failing case of an answer, as data (words come from :meth:`Verdict.message`).

    case      the input (plain data) of a function exercise, None for a value exercise;
    where     which number is wrong, in words ("q, token 1 (position 5), pair 0"), or "";
    expected  the expected number there (function exercises; value exercises only on reveal);
    given     the number given there;
    differ    how many numbers differ, of ``total``;
    shape_given / shape_expected   for WRONG_SHAPE;
    detail    an error text, the given parameter names, the type refused, the imaginary size;
    precision True when every difference is at the level of float32 rounding.
    """

    outcome: Outcome
    case: dict | None = None
    where: str = ""
    expected: float | None = None
    given: float | None = None
    differ: int = 0
    total: int = 0
    shape_given: tuple | None = None
    shape_expected: tuple | None = None
    detail: str = ""
    precision: bool = False


@dataclass(frozen=True)
class Verdict:
    """What the one judge decided about one answer."""

    grade_id: str
    title: str
    name: str
    kind: str
    outcome: Outcome
    points: float | None  # None: to be graded by a person
    max_points: float
    cases: int = 0
    passed: int = 0
    failure: Failure | None = None
    hint: str | None = None
    params: tuple[str, ...] = ()  # the exercise's parameter names
    caught: tuple[str, ...] = ()  # checker exercises: mutants caught
    missed: tuple[str, ...] = ()  # checker exercises: mutants missed
    public: bool = False  # checker exercises: judged on the public mutants (the self-check)
    expected: Any = field(default=None, compare=False, repr=False)  # value: shown on reveal

    @property
    def right(self) -> bool:
        return self.outcome is Outcome.RIGHT

    def message(self, reveal: bool = False) -> str:
        """The verdict in words: one line, then indented details. ``reveal`` adds the expected
        value of a value exercise (for after the deadline)."""
        return "\n".join(self.lines(reveal))

    def lines(self, reveal: bool = False) -> list[str]:
        """The lines of :meth:`message`, in the current language (:mod:`lessons.i18n`)."""
        o = self.outcome
        f = self.failure
        if o is Outcome.RIGHT:
            if self.kind == "checker":
                if self.public:
                    text = _("passes: accepts the correct implementation and catches all {count} "
                             "public bugs; the grade uses more bugs, not shown here")
                else:
                    text = _("passes: accepts the correct implementation and catches all {count} hidden bugs")
                return [self._head(text.format(count=len(self.caught)))]
            n = self.cases
            text = _("passes ({count} case)") if n == 1 else _("passes ({count} cases)")
            return [self._head(text.format(count=n))]
        if o is Outcome.MISSING and (f is None or f.case is None):
            return [self._head(_("not answered yet"))]
        if o is Outcome.MANUAL:
            return [self._head(_("answered; graded by a person"))]
        if self.kind == "checker":
            return self._checker_lines()
        out = [self._head(_("does not pass."))]
        if f is not None and f.case is not None:
            out.append("  " + label(_("tried:")) + format_call(self.name, f.case))
        out += ["  " + line for line in self._why(reveal)]
        if self.hint:
            out.append("  " + label(_("hint:")) + _(self.hint))
        if reveal and self.kind == "value" and self.expected is not None:
            out.append("  " + label(_("expected:")) + format_plain(self.expected, 200))
        return out

    def _head(self, verdict: str) -> str:
        return head_line(self.title, verdict)

    def _why(self, reveal: bool) -> list[str]:
        f = self.failure
        o = self.outcome
        if f is None:
            return []
        why = label(_("why:"))
        if o is Outcome.SIGNATURE:
            params = ", ".join(self.params)
            return [why + _(
                "{name}({given}) cannot take the arguments {params}: keep the parameter names ({params})"
            ).format(name=self.name, given=f.detail, params=params)]
        if o is Outcome.MISSING:
            return [why + _("it raises NotImplementedError for this input (not answered for every input)")]
        if o is Outcome.ERROR:
            return [why + _("it raised {error}").format(error=detail_text(f.detail))]
        if o is Outcome.NOT_A_FUNCTION:
            text = _("{name} is not a function (it is a {type}); define it with def {name}(...)")
            return [why + text.format(name=self.name, type=f.detail)]
        if o is Outcome.NOT_REAL:
            return [why + _(
                "the answer holds complex numbers (imaginary part up to {size}); "
                "the answer is real: take the part you mean (np.real) or compute with real numbers"
            ).format(size=f.detail)]
        if o is Outcome.RAGGED:
            return [why + _("the answer is a list whose items have different lengths, not a regular array")]
        if o is Outcome.NOT_NUMBERS:
            return [why + _("the answer is not numbers (got {what})").format(what=detail_text(f.detail))]
        if o is Outcome.WRONG_SHAPE:
            return [why + _("shape {given} given, {expected} expected").format(
                given=_shape_text(f.shape_given), expected=_shape_text(f.shape_expected)
            )]
        # WRONG_VALUE
        lines = []
        not_finite = f.given is not None and not math.isfinite(f.given)
        if self.kind == "function" or reveal:
            if not_finite:
                text = _("the output at {where} is {value}") if f.where else _("the output is {value}")
                lines.append(why + text.format(where=f.where, value=f.given))
            else:
                lines.append(label(_("at:")) + (f.where or _("the value")))
                lines.append(label(_("expected:")) + _num(f.expected))
                lines.append(label(_("given:")) + _num(f.given))
        elif not_finite:
            text = _("the value at {where} is {value}") if f.where else _("the value is {value}")
            lines.append(why + text.format(where=f.where, value=f.given))
        else:
            text = _("the value at {where} is not right") if f.where else _("the value is not right")
            lines.append(why + text.format(where=f.where))
        if f.total > 1:
            lines.append(" " * LABEL_WIDTH + _("{differ} of {total} numbers differ").format(
                differ=f.differ, total=f.total
            ))
        if f.precision:
            lines.append(" " * LABEL_WIDTH + _(
                "every difference is at the level of float32 rounding: the exercise "
                "asks for float64; precision is the likely cause (compute in float64, "
                "numpy's default, not np.float32 or np.float16)"
            ))
        return lines

    def _checker_lines(self) -> list[str]:
        o = self.outcome
        f = self.failure
        if o is Outcome.REJECTS_CORRECT:
            return [self._head(_(
                "does not pass: it says the CORRECT implementation is wrong "
                "(a checker that rejects everything catches nothing)"
            ))]
        if o in (Outcome.ERROR, Outcome.NOT_NUMBERS, Outcome.MISSING):
            detail = detail_text(f.detail) if f else ""
            if o is Outcome.ERROR:
                text = _("does not pass: on the correct implementation it raised {error}")
                text = text.format(error=detail)
            elif o is Outcome.NOT_NUMBERS:
                text = _(
                    "does not pass: on the correct implementation it returned {what}, not True or False"
                ).format(what=detail)
            else:
                text = _("does not pass: on the correct implementation it raised NotImplementedError")
            return [self._head(text)]
        total = len(self.caught) + len(self.missed)
        if self.public:
            text = _("accepts the correct implementation; catches {caught} of {total} public bugs")
        else:
            text = _("accepts the correct implementation; catches {caught} of {total} hidden bugs")
        out = [self._head(text.format(caught=len(self.caught), total=total))]
        if self.public:
            for name in self.missed:
                out.append("  " + label(_("missed:")) + name)
        if self.hint:
            out.append("  " + label(_("hint:")) + _(self.hint))
        return out


# ------------------------------------------------------------------------------ words
# Details of a Failure that are words of the judge's own (translated where shown): what a
# function that returns nothing gave, and what a call stopped at the time limit did.
RETURNED_NONE = N_("None (did the function forget its return?)")
TIMED_OUT = N_("nothing: it ran past the time limit")

# Labels ("why:", "expected:", ...) are padded to this many columns, where details start.
LABEL_WIDTH = 10


def _columns(text: str) -> int:
    """How many terminal columns ``text`` takes: a wide (e.g. Chinese) character takes two."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def label(text: str) -> str:
    """``"why:"`` -> ``"why:      "``: a label padded to :data:`LABEL_WIDTH` columns (at least
    one space after it), so the details of a verdict line up in any language."""
    return text + " " * max(1, LABEL_WIDTH - _columns(text))


def head_line(title: str, verdict: str) -> str:
    """The first line of a verdict: ``"Exercise 1: the score ...: passes (8 cases)"``, with
    the title (an English msgid, see :func:`N_`) in the current language."""
    return _("{title}: {verdict}").format(title=_(title) if title else title, verdict=verdict)


def detail_text(detail: str) -> str:
    """A Failure's detail in the current language: the judge's own words are translated; an
    error text, a type name or a number is shown as it is. ``_plain`` (shipped into the
    grader's sandbox, without the package) describes a non-numeric array as "an array of
    <dtype>": that phrase is translated here."""
    if detail in (RETURNED_NONE, TIMED_OUT):
        return _(detail)
    if detail.startswith("an array of "):
        return _("an array of {dtype}").format(dtype=detail.removeprefix("an array of "))
    return detail


def _num(x) -> str:
    return "?" if x is None else f"{x:.8g}"


def _shape_text(shape) -> str:
    if shape is None:
        return "?"
    return "(" + ", ".join(str(n) for n in shape) + ("," if len(shape) == 1 else "") + ")"


@dataclass(frozen=True)
class Exercise:
    """One graded exercise.

    grade_id   unique id, ``ex<NN>_<what>``; equals ``metadata.nbgrader.grade_id`` of the
               notebook cell holding the answer.
    notebook   the two-digit notebook number ("06").
    title      a short title for feedback and the gradebook.
    points     what a correct answer earns.
    name       the name the learner defines: a variable (value), a function (function,
               checker), or the answer's name (written).
    kind       "value", "function", "checker" or "written".
    expected   (value) no arguments -> the expected value, computed with ``lessons``.
    cases      (function) ``cases(rng)`` with a ``numpy.random.Generator`` -> a list of
               keyword-argument dicts of plain data, drawn anew at each grading.
    reference  (function) ``reference(**case)`` -> the expected return value.
    tolerance  an answer agrees when |given - expected| <= tolerance * max(1, |expected|)
               element by element, with the same shape.
    mutants    (function) known wrong implementations whose hints name the bug.
    wrong_values  (value) ``(value_fn, hint)`` pairs: typical wrong answers and their hints.
    where      (function, value) ``where(index, case)`` -> words for an output position
               (``index`` a tuple into the expected array; ``case`` None for a value).
    correct, public_mutants, hidden_mutants   (checker) see :func:`checker_exercise`.
    prompt     (written) the question.
    practises  what the exercise practises (the exercise list in the grading guide).
    hides      dotted names of the course's functions that would answer the exercise
               ("lessons.rope.apply_rope"): the grader hides them from the graded kernel
               (calling one says the exercise asks you to write it); the rest of the course
               stays importable there.
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
    mutants: tuple[Mutant, ...] = field(default=(), repr=False, compare=False)
    wrong_values: tuple = field(default=(), repr=False, compare=False)
    where: Callable[[tuple, dict | None], str] | None = field(default=None, repr=False, compare=False)
    correct: Mutant | None = field(default=None, repr=False, compare=False)
    public_mutants: tuple[Mutant, ...] = field(default=(), repr=False, compare=False)
    hidden_mutants: tuple[Mutant, ...] = field(default=(), repr=False, compare=False)
    prompt: str = ""
    practises: str = ""
    time_limit: float = 10.0  # seconds per checker call
    hides: tuple[str, ...] = ()

    @property
    def params(self) -> tuple[str, ...]:
        """The parameter names the learner's function must keep (function exercises)."""
        fn = self.reference if self.kind == "function" else (self.correct.fn if self.correct else None)
        if fn is None:
            return ()
        return tuple(inspect.signature(fn).parameters)

    def expected_value(self):
        """The expected answer of a value exercise, as plain data."""
        if self.kind != "value":
            raise TypeError(
                f"{self.grade_id} is a {self.kind} exercise; expected_value is for value exercises"
            )
        return to_plain(self.expected())

    def draw_cases(self, rng: np.random.Generator) -> list[dict]:
        """Inputs for a function exercise, drawn from ``rng`` (plain data, JSON-serialisable)."""
        if self.kind != "function":
            raise TypeError(f"{self.grade_id} is a {self.kind} exercise; it has no cases")
        cases = self.cases(rng)
        if not cases:
            raise ValueError(f"{self.grade_id}: the case generator returned no cases")
        return [{key: to_plain(value) for key, value in case.items()} for case in cases]

    def expected_for(self, case: dict):
        """The reference answer for one case, as plain data."""
        return to_plain(self.reference(**call_arguments(case)))


# ---------------------------------------------------------------------------- plain data
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


def _index(flat_index: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    if not shape:
        return ()
    return tuple(int(i) for i in np.unravel_index(flat_index, shape))


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


def format_call(name: str, case: dict) -> str:
    """A short call: small arrays in full, larger ones by their shape (``q=<array 1x1x2x4>``)."""
    parts = []
    for key, value in case.items():
        shape = shape_of(value)
        if isinstance(value, list) and shape is not None and (len(shape) > 1 or math.prod(shape) > 8):
            parts.append(f"{key}=<array {'x'.join(str(n) for n in shape)}>")
        else:
            parts.append(f"{key}={format_plain(value, 80)}")
    return f"{name}({', '.join(parts)})"


def _case_size(case: dict | None) -> int:
    if case is None:
        return 0
    return sum(len(_flat(v)) if isinstance(v, list) else 1 for v in case.values())


# ---------------------------------------------------------------------------- the judge
def _differences(expected, given, tolerance: float):
    """(number of differing numbers, flat index of the worst, precision-level?) of equal shapes."""
    e = np.asarray(expected, dtype=np.float64).reshape(-1)
    g = np.asarray(given, dtype=np.float64).reshape(-1)
    with np.errstate(invalid="ignore"):
        err = np.abs(g - e)
        bad = ~(err <= tolerance * np.maximum(1.0, np.abs(e)))  # NaN counts as bad
    n = int(bad.sum())
    if n == 0:
        return 0, -1, False
    nonfinite = ~np.isfinite(g)
    worst = int(np.argmax(nonfinite)) if nonfinite.any() else int(np.argmax(np.where(bad, err, -1.0)))
    # Rounding in float32 leaves each number close to its own size, or, where it comes from
    # larger numbers (a sum, an angle of thousands of radians), to the case's typical size:
    # an error large against both (a small frequency 10% off) is a bug, not precision.
    typical = float(np.median(np.abs(e))) if e.size else 0.0
    scale = np.maximum(np.abs(e), typical)
    precision = bool(not nonfinite.any() and np.all(err <= PRECISION_LEVEL * scale))
    return n, worst, precision


def _matches(expected, given, tolerance: float) -> bool:
    if is_tag(expected) or is_tag(given):
        return False
    se, sg = shape_of(expected), shape_of(given)
    if se is None or se != sg:
        return False
    e = np.asarray(expected, dtype=np.float64)
    g = np.asarray(given, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        same = (
            (np.abs(g - e) <= tolerance * np.maximum(1.0, np.abs(e))) | (e == g) | (np.isnan(e) & np.isnan(g))
        )
    return bool(np.all(same))


def _judge_one(ex: Exercise, expected, given, case: dict | None) -> Failure | None:
    """None when ``given`` is right for this case, else its Failure."""
    if given is None:
        if ex.kind == "value":
            return Failure(Outcome.MISSING)
        return Failure(Outcome.NOT_NUMBERS, case, detail=RETURNED_NONE)
    if is_tag(given):
        tag = next(iter(given))
        outcome = _TAG_OUTCOME[tag]
        if tag == "missing":
            return Failure(outcome, case)
        if tag == "signature":
            return Failure(outcome, case, detail=", ".join(str(p) for p in given[tag]))
        if tag == "complex":
            return Failure(outcome, case, detail=f"{given.get('max_imag', 0.0):.4g}")
        if tag == "too_large":
            return Failure(outcome, case, shape_given=tuple(given[tag]), shape_expected=shape_of(expected))
        if tag == "timeout":
            return Failure(outcome, case, detail=TIMED_OUT)
        return Failure(outcome, case, detail=str(given[tag]))
    if isinstance(given, dict):
        return Failure(Outcome.NOT_NUMBERS, case, detail="dict")
    exp_shape, given_shape = shape_of(expected), shape_of(given)
    if given_shape is None:
        if isinstance(given, bool):
            return Failure(Outcome.NOT_NUMBERS, case, detail="bool")
        return Failure(Outcome.RAGGED, case)
    if given_shape != exp_shape:
        return Failure(Outcome.WRONG_SHAPE, case, shape_given=given_shape, shape_expected=exp_shape)
    n, worst, precision = _differences(expected, given, ex.tolerance)
    if n == 0:
        return None
    index = _index(worst, exp_shape)
    if ex.where is not None:
        where = ex.where(index, case)
    elif index:
        where = f"output {list(index)}"
    else:
        where = ""
    return Failure(
        Outcome.WRONG_VALUE,
        case,
        where=where,
        expected=float(_flat(expected)[worst]),
        given=float(_flat(given)[worst]),
        differ=n,
        total=len(_flat(expected)),
        precision=precision,
    )


# The order in which failures of different kinds are reported (first: the most useful).
_PRIORITY = {Outcome.SIGNATURE: 0, Outcome.NOT_A_FUNCTION: 0}


def _verdict(ex: Exercise, outcome: Outcome, points, **kw) -> Verdict:
    return Verdict(
        ex.grade_id, ex.title, ex.name, ex.kind, outcome, points, ex.points, params=ex.params, **kw
    )


def judge(
    exercise: Exercise,
    outputs,
    cases: list[dict] | None = None,
    *,
    expected: list | None = None,
    public: bool = False,
) -> Verdict:
    """THE judge: the verdict on what the learner's answer gave (see the module docstring).

    ``cases``: the drawn inputs of a function exercise (``outputs`` has one entry per case);
    ``expected``: their expected values, if already computed (else the reference computes
    them); ``public``: a checker exercise judged on its public mutants (the notebook's
    self-check) instead of the hidden ones (the grade).
    """
    ex = exercise
    if ex.kind == "written":
        text = outputs if isinstance(outputs, str) else ""
        blank = not text.strip() or text.strip() == UNANSWERED_TEXT
        return _verdict(ex, Outcome.MISSING if blank else Outcome.MANUAL, 0 if blank else None)
    if ex.kind == "checker":
        return _judge_checker(ex, outputs, public)
    if ex.kind == "value":
        exp = to_plain(ex.expected())
        if isinstance(outputs, dict) and not is_tag(outputs):
            outputs = {"unsupported": "dict"}
        failure = _judge_one(ex, exp, outputs, None)
        if failure is None:
            return _verdict(ex, Outcome.RIGHT, ex.points, cases=1, passed=1, expected=exp)
        hint = None
        if failure.outcome is Outcome.WRONG_VALUE:
            for value_fn, text in ex.wrong_values:
                if _matches(to_plain(value_fn()), outputs, ex.tolerance):
                    hint = text
                    break
        return _verdict(ex, failure.outcome, 0, cases=1, failure=failure, hint=hint, expected=exp)
    # a function exercise
    if is_tag(outputs):  # one tag for the whole answer
        failure = _judge_one(ex, None, outputs, None)
        return _verdict(
            ex, failure.outcome, 0, failure=failure if failure.outcome is not Outcome.MISSING else None
        )
    if cases is None:
        raise ValueError(f"{ex.grade_id}: judge needs the cases of a function exercise")
    outputs = list(outputs)
    if len(outputs) != len(cases):
        raise ValueError(f"{ex.grade_id}: {len(outputs)} outputs for {len(cases)} cases")
    if expected is None:
        expected = [ex.expected_for(c) for c in cases]
    if all(isinstance(o, dict) and "missing" in o for o in outputs):
        return _verdict(ex, Outcome.MISSING, 0, cases=len(cases))
    failures = []
    for i, (case, exp, out) in enumerate(zip(cases, expected, outputs, strict=True)):
        f = _judge_one(ex, exp, out, case)
        if f is not None:
            failures.append((_PRIORITY.get(f.outcome, 1), _case_size(case), i, f))
    passed = len(cases) - len(failures)
    if not failures:
        return _verdict(ex, Outcome.RIGHT, ex.points, cases=len(cases), passed=passed)
    failure = min(failures, key=lambda t: t[:3])[3]
    hint = None
    if failure.outcome in (Outcome.WRONG_VALUE, Outcome.WRONG_SHAPE):
        hint = mutant_hint(ex, cases, outputs)
    return _verdict(ex, failure.outcome, 0, cases=len(cases), passed=passed, failure=failure, hint=hint)


def mutant_hint(ex: Exercise, cases: list[dict], outputs: list) -> str | None:
    """The hint of the first mutant whose outputs equal ``outputs`` on every case, or None."""
    for mutant in ex.mutants:
        try:
            theirs = [to_plain(mutant.fn(**call_arguments(c))) for c in cases]
        except Exception:
            continue
        if all(_matches(t, o, ex.tolerance) for t, o in zip(theirs, outputs, strict=True)):
            return mutant.hint
    return None


def _judge_checker(ex: Exercise, outputs, public: bool) -> Verdict:
    mutants = ex.public_mutants if public else ex.hidden_mutants
    if is_tag(outputs):
        outputs = {"correct": outputs}
    if not isinstance(outputs, dict):
        raise ValueError(f"{ex.grade_id}: a checker's outputs are a dict of results by candidate name")
    on_correct = outputs.get("correct", {"missing": True})
    if on_correct is False:
        return _verdict(ex, Outcome.REJECTS_CORRECT, 0, public=public, missed=tuple(m.name for m in mutants))
    if on_correct is not True:
        f = _judge_one(
            ex, None, on_correct if is_tag(on_correct) else {"not_bool": type(on_correct).__name__}, None
        )
        return _verdict(ex, f.outcome, 0, public=public, failure=f, missed=tuple(m.name for m in mutants))
    caught = tuple(m.name for m in mutants if outputs.get(m.name) is False)
    missed = tuple(m.name for m in mutants if outputs.get(m.name) is not False)
    points = ex.points * len(caught) / len(mutants) if mutants else ex.points
    outcome = Outcome.RIGHT if not missed else Outcome.PARTIAL
    hint = None
    if public and missed:
        hint = next(m.hint for m in mutants if m.name == missed[0])
    return _verdict(
        ex,
        outcome,
        points,
        cases=len(mutants),
        passed=len(caught),
        caught=caught,
        missed=missed,
        public=public,
        hint=hint,
    )


# ---------------------------------------------------------------------------- the registry
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
    for m in (*ex.mutants, *ex.public_mutants, *ex.hidden_mutants):
        if not isinstance(m, Mutant):
            raise TypeError(f"{ex.grade_id}: mutants must be Mutant(name, hint, fn); got {type(m).__name__}")
    _EXERCISES[ex.grade_id] = ex
    return ex


def value_exercise(
    grade_id: str,
    *,
    title: str,
    points: float,
    name: str,
    tolerance: float = 1e-6,
    wrong_values: tuple = (),
    where=None,
    practises: str = "",
    hides: tuple[str, ...] = (),
):
    """Decorator: the decorated function (no arguments) computes the expected value.

    ``wrong_values``: ``(value_fn, hint)`` pairs, zero-argument functions computing typical
    wrong answers; an answer equal to one gets its hint (never the expected value).

    >>> @value_exercise("ex06_example", title="cos 1", points=1, name="answer")  # doctest: +SKIP
    ... def _():
    ...     return np.cos(1.0)
    """
    notebook = grade_id[2:4]

    def register(fn):
        _register(
            Exercise(
                grade_id,
                notebook,
                title,
                points,
                name,
                "value",
                expected=fn,
                tolerance=tolerance,
                wrong_values=tuple(wrong_values),
                where=where,
                practises=practises,
                hides=tuple(hides),
            )
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
    mutants: tuple[Mutant, ...] = (),
    where=None,
    practises: str = "",
    hides: tuple[str, ...] = (),
):
    """Decorator: the decorated function is the reference; ``cases(rng)`` draws its inputs.

    The reference receives the same arguments as the learner's function (lists as float64
    arrays, see :func:`call_arguments`) and must compute the answer with ``lessons`` code,
    not with a copy of the solution. Its parameter names are the ones the learner must keep.
    ``mutants`` give hints; ``where(index, case)`` names an output position in words.
    ``hides``: the course functions that would answer it, hidden while it is graded.
    """
    notebook = grade_id[2:4]

    def register(fn):
        _register(
            Exercise(
                grade_id,
                notebook,
                title,
                points,
                name,
                "function",
                cases=cases,
                reference=fn,
                tolerance=tolerance,
                mutants=tuple(mutants),
                where=where,
                practises=practises,
                hides=tuple(hides),
            )
        )
        return fn

    return register


def checker_exercise(
    grade_id: str,
    *,
    title: str,
    points: float,
    name: str,
    correct: Mutant,
    public_mutants: tuple[Mutant, ...],
    hidden_mutants: tuple[Mutant, ...],
    practises: str = "",
    time_limit: float = 10.0,
) -> Exercise:
    """Register a "write the tests" exercise: the learner writes ``name(candidate) -> bool``.

    Score = points * (hidden mutants rejected) / (hidden mutants), and 0 when the checker
    rejects ``correct``, raises on it or does not return a bool. ``correct.fn`` and every
    mutant's ``fn`` are self-contained top-level numpy-only functions (the grader ships their
    source into its sandbox). The notebook's check runs only ``correct`` and the public ones.
    """
    names = [m.name for m in (*public_mutants, *hidden_mutants)]
    if "correct" in names or len(set(names)) != len(names):
        raise ValueError(f"{grade_id}: mutant names must be unique and not 'correct'; got {names}")
    if not hidden_mutants:
        raise ValueError(f"{grade_id}: a checker exercise needs hidden mutants")
    return _register(
        Exercise(
            grade_id,
            grade_id[2:4],
            title,
            points,
            name,
            "checker",
            correct=correct,
            public_mutants=tuple(public_mutants),
            hidden_mutants=tuple(hidden_mutants),
            practises=practises,
            time_limit=time_limit,
        )
    )


def written_question(
    grade_id: str, *, title: str, points: float, prompt: str, practises: str = ""
) -> Exercise:
    """Register a question answered in words and graded by a person (an nbgrader markdown
    answer cell with ``"solution": true, "grade": true``, see :mod:`.release`)."""
    return _register(
        Exercise(
            grade_id, grade_id[2:4], title, points, grade_id, "written", prompt=prompt, practises=practises
        )
    )


__all__ = [
    "KINDS",
    "MAX_ANSWER_SIZE",
    "Exercise",
    "Failure",
    "Mutant",
    "Outcome",
    "Verdict",
    "call_arguments",
    "checker_exercise",
    "format_call",
    "format_plain",
    "function_exercise",
    "judge",
    "mutant_hint",
    "run_case",
    "shape_of",
    "to_plain",
    "value_exercise",
    "written_question",
]
