"""One judge, property-tested: on any answer, the learner's check and the grader agree.

For each answer drawn below (right ones, and wrong ones built from drawn perturbations: a
scale, an offset, a flipped sign, swapped outputs, a wrong shape, NaN, infinity, complex
numbers, a ragged list, a string, an exception, a stub, ``None``, a renamed parameter, a
wrong only on some inputs, output printed along the way), the same answer is judged twice:

* as the learner's ``check`` judges it: :func:`lessons.exercises.verdict_of`, the function
  ``check`` prints;
* as the grader judges it, along the grader's own path without a kernel: the real
  :func:`lessons.grade.probe.prelude` runs in a fresh namespace (the kernel's globals), the
  answer's cells run there, then the probe cell :func:`lessons.grade.probe.probe_source`
  writes for the question :func:`lessons.grade.scoring.draw` drew; the lines it prints are
  read by the grader's :class:`lessons.grade.kernel.CappedClient`, parsed by
  :func:`lessons.grade.probe.parse_reply` and scored by :func:`lessons.grade.scoring.score`.

Both judge the same cases (``draw`` seeds each exercise's generator with ``[seed, notebook,
index]``; the learner's check is given that seed), so the verdicts must be equal: outcome,
points, cases passed, hint and the words the learner reads. The slow test with real
sandboxed kernels is ``tests/test_grade_judge.py``.
"""

from __future__ import annotations

import contextlib
import io
from functools import cache

import nbformat
import numpy as np
import pytest
from hypothesis import currently_in_test_context, event, given
from hypothesis import strategies as st

from lessons.exercises import all_exercises, get, verdict_of
from lessons.grade import probe, scoring
from lessons.grade.kernel import CappedClient

# The drawn answers compute with NaN, infinity and complex numbers on purpose.
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning", "ignore::numpy.exceptions.ComplexWarning")

NOTEBOOK = "06"
NONCE = "L13-property-test:"

# The answer's cells: helpers a learner might write, in plain numpy (nothing of the course).
HELPERS = '''
import numpy as np


def turn(pair, angle):
    c, s = np.cos(angle), np.sin(angle)
    return np.array([c * pair[0] - s * pair[1], s * pair[0] + c * pair[1]])


def rope(x, positions, inv, split=False):
    x = np.asarray(x, dtype=float)
    angles = np.asarray(positions, dtype=float)[:, None] * inv[None, :]
    c, s = np.cos(angles), np.sin(angles)
    half = x.shape[-1] // 2
    a, b = (x[..., :half], x[..., half:]) if split else (x[..., 0::2], x[..., 1::2])
    out = np.empty_like(x)
    ra, rb = a * c - b * s, a * s + b * c
    if split:
        out[..., :half], out[..., half:] = ra, rb
    else:
        out[..., 0::2], out[..., 1::2] = ra, rb
    return out


def with_first(out, value):
    out = np.array(out, dtype=float)
    out.flat[0] = value
    return out
'''

# ------------------------------------------------------------------ drawn answers
# Each exercise: the expressions of its inputs (right first, then known bugs) and the line
# that computes its right output ``out`` (an ndarray) from them.
ROTATE_PAIR = {
    "params": ("pair", "angle"),
    "inputs": ["angle", "-angle", "np.radians(angle)", "angle + 1e-3", "0.0"],
    "body": "out = turn(pair, {inp})",
    "condition": "angle > 0",
}
APPLY_ROPE = {
    "params": ("q", "k", "positions"),
    "inputs": ["positions", "-np.asarray(positions, dtype=float)", "np.arange(q.shape[-2])",
               "np.zeros(len(positions))"],
    "body": ("d = q.shape[-1]\n"
             "inv = 10000.0 ** (-np.arange(0, d, 2) / d) if {freq} else 10000.0 ** (-np.arange(d // 2) / d)\n"
             "out = np.stack([rope(q, {inp}, inv, {split}), rope(k, {inp}, inv, {split})])"),
    "condition": "q.shape[-1] > 6",
}

# What may be done to a right output (``{o}`` stands for it); each entry draws its parameter.
TRANSFORMS = {
    "scale": lambda v: f"{{o}} * {v!r}",
    "offset": lambda v: f"{{o}} + {v!r}",
    "swap": lambda v: "{o}[::-1]",
    "first_only": lambda v: "{o}[:1]",
    "extra_axis": lambda v: "{o}[None]",
    "flat": lambda v: "np.ravel({o})",
    "appended": lambda v: "np.append({o}, 0.0)",
    "nan": lambda v: "with_first({o}, np.nan)",
    "inf": lambda v: "with_first({o}, -np.inf)",
    "first_set": lambda v: f"with_first({{o}}, {v!r})",
    "complex": lambda v: f"{{o}} * np.exp(1j * {v!r})",
    "complex_zero_imag": lambda v: "{o} + 0j",
    "float32": lambda v: "np.asarray({o}, dtype=np.float32)",
    "float16": lambda v: "np.asarray({o}, dtype=np.float16)",
    "ints": lambda v: "np.round({o}).astype(int)",
    "ragged": lambda v: "[np.ravel({o}).tolist(), [1.0]]",
    "list": lambda v: "np.asarray({o}).tolist()",
    "tuple": lambda v: "tuple(np.asarray({o}).tolist())",
    "string": lambda v: "str({o})",
    "bool": lambda v: "True",
    "none": lambda v: "None",
    "dict": lambda v: "{{'out': {o}}}",
    "object_array": lambda v: "np.array([1.0, 'a'], dtype=object)",
    "scalar": lambda v: f"{v!r}",
}
SMALL = st.sampled_from([2.0, -1.0, 1.01, 0.5, 1.0 + 1e-9, 1e-7, 1e-3, 0.0, 100.0])
TRANSFORM = st.tuples(st.sampled_from(sorted(TRANSFORMS)), SMALL)


TRANSFORMS_DRAWN = st.lists(TRANSFORM, max_size=2)

# How the function as a whole may go wrong (before it computes anything).
SHAPES = ("normal", "stub", "raises", "raises_sometimes", "renamed", "extra_param", "var_kwargs",
          "prints", "prints_forged", "not_a_function", "none_returned_sometimes")
MESSAGE = st.text(alphabet=st.characters(codec="ascii"), max_size=30)


@st.composite
def function_answers(draw, spec: dict, name: str) -> str:
    """The source of a learner's cell defining ``name`` (right or wrong, as drawn)."""
    shape = draw(st.sampled_from(SHAPES))
    params = list(spec["params"])
    if shape == "not_a_function":  # (None: a known divergence, see test_a_function_bound_to_none_...)
        return f"{name} = {draw(st.sampled_from(['3.0', '[1.0, 2.0]', repr('text'), '{}']))}\n"
    if shape == "renamed":
        params[draw(st.integers(0, len(params) - 1))] += "_renamed"
    if shape == "extra_param":
        params.append("extra=None")
    if shape == "var_kwargs":
        params.append("**kwargs")
    lines = [f"def {name}({', '.join(params)}):"]
    if shape == "stub":
        lines.append("    raise NotImplementedError()")
        return "\n".join(lines) + "\n"
    if shape == "raises":
        exc = draw(st.sampled_from(["ValueError", "ZeroDivisionError", "KeyError", "SystemExit"]))
        lines.append(f"    raise {exc}({draw(MESSAGE)!r})")
        return "\n".join(lines) + "\n"
    if shape == "raises_sometimes":
        lines.append(f"    if {spec['condition']}:")
        lines.append(f"        raise RuntimeError({draw(MESSAGE)!r})")
    if shape == "none_returned_sometimes":
        lines.append(f"    if {spec['condition']}:")
        lines.append("        return None")
    if shape == "prints":
        lines.append(f"    print({draw(MESSAGE)!r})")
    if shape == "prints_forged":  # a line that looks like a reply, without the run's nonce
        lines.append("    print('{\"id\": \"' + " + repr(get(GRADE_IDS[name]).grade_id)
                     + " + '\", \"results\": [[0.0]]}')")
    body = spec["body"].format(
        inp=draw(st.sampled_from(spec["inputs"])),
        freq=draw(st.sampled_from(["True", "True", "False"])),
        split=draw(st.sampled_from(["False", "False", "True"])),
    )
    for line in body.splitlines():
        lines.append("    " + line)
    for kind, value in draw(TRANSFORMS_DRAWN):
        expr = TRANSFORMS[kind](value).format(o="out")
        if draw(st.booleans()):  # wrong only on some inputs
            expr = f"({expr}) if {spec['condition']} else out"
        lines.append(f"    out = {expr}")
    if name == "apply_rope" and draw(st.booleans()):
        lines.append("    if isinstance(out, np.ndarray) and out.ndim and len(out) == 2:")
        lines.append("        out = (out[0], out[1])  # q and k as a tuple, as the reference returns them")
    lines.append("    return out")
    return "\n".join(lines) + "\n"


@st.composite
def value_answers(draw, name: str) -> list[str]:
    """The learner's cells defining the value ``name`` (right or wrong, as drawn); a later
    cell may fail (e.g. a dict times a number), leaving the value of the cell before."""
    position = draw(st.sampled_from(["[1.0]", "[1.0]", "[-1.0]", "[0.0]", "[2.0]"]))
    freq = draw(st.sampled_from(["10000.0 ** (-np.arange(0, 4, 2) / 4)", "10000.0 ** (-np.arange(2) / 4)"]))
    split = draw(st.sampled_from(["False", "False", "True"]))
    cells = [f"{name} = rope(np.array([[1.0, 0.0, 1.0, 0.0]]), {position}, {freq}, {split})[0]\n"]
    for kind, value in draw(TRANSFORMS_DRAWN):
        cells.append(f"{name} = {TRANSFORMS[kind](value).format(o=name)}\n")
    return cells


GRADE_IDS = {"rotate_pair": "ex06_rotate_pair", "apply_rope": "ex06_apply_rope",
             "rotated_d4": "ex06_rotated_d4"}
SEEDS = st.integers(0, 7)  # a few seeds: each one's questions are drawn once (cached)


# ------------------------------------------------------------------ the two judges
@cache
def drawn(seed: int) -> scoring.Drawn:
    return scoring.draw(NOTEBOOK, seed)


def question(seed: int, grade_id: str) -> probe.Question:
    return next(q for q in drawn(seed).questions if q.exercise.grade_id == grade_id)


def learner_seed(seed: int, grade_id: str) -> list[int]:
    """The seed that gives the learner's check the cases the grader drew for this exercise."""
    index = [e.grade_id for e in all_exercises(NOTEBOOK)].index(grade_id)
    return [seed, int(NOTEBOOK), index]


def run_cells(sources: list[str]) -> tuple[dict, io.StringIO]:
    """A fresh kernel namespace: the grader's prelude first (as the runner runs it, its output
    stream bound to what the kernel prints), then the answer's cells."""
    ns: dict = {"__name__": "__main__"}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(probe.prelude(), ns)  # noqa: S102 - the grader's own prelude
        for source in sources:
            try:  # as in the notebook and in the grader's kernel, an error ends only its cell
                exec(source, ns)  # noqa: S102 - the test's own answers
            except Exception:
                pass
    return ns, printed


def grader_record(seed: int, grade_id: str, ns: dict, printed: io.StringIO) -> dict:
    """The grader's record of the exercise: its probe cell run in ``ns`` right after the check
    cell, its printed lines read, parsed and scored by the grader's own code."""
    q = question(seed, grade_id)
    printed.seek(0)
    printed.truncate()
    with contextlib.redirect_stdout(printed):
        exec(probe.probe_source(q, NONCE), ns)  # noqa: S102 - the grader's own probe cell
    client = CappedClient(nbformat.v4.new_notebook(), nonce=NONCE)
    client.clear_before_next_output = False  # as nbclient sets it before a cell's outputs
    client.reset_cap()
    message = {"msg_type": "stream", "header": {"msg_type": "stream"}, "parent_header": {"msg_id": "probe"},
               "content": {"name": "stdout", "text": printed.getvalue()}}
    client.output([], message, None, 0)
    try:
        reply = probe.parse_reply(client.probe_lines, q)
    except probe.ReplyError as exc:  # as the runner records an unreadable reply
        reply = scoring.Unanswered(scoring.NoAnswer.UNREADABLE, str(exc))
    return scoring.score(q, reply, drawn(seed), where=1)


def assert_same_verdict(seed: int, grade_id: str, sources: list[str]) -> None:
    ex = get(grade_id)
    ns, printed = run_cells(sources)
    if ex.kind == "function":  # the guard of this test: both judge the same cases
        rng = np.random.default_rng(learner_seed(seed, grade_id))
        assert ex.draw_cases(rng) == question(seed, grade_id).cases
    learner = verdict_of(grade_id, ns[ex.name], seed=learner_seed(seed, grade_id))
    grader = grader_record(seed, grade_id, ns, printed)
    answer = "\n".join(sources[1:])
    if currently_in_test_context():  # the outcomes drawn: pytest --hypothesis-show-statistics
        event(f"{grade_id}: {learner.outcome.name}" + (" with a hint" if learner.hint else ""))
    seen = (grader["outcome"], grader["points"], grader["passed"], grader["hint"])
    assert seen == (learner.outcome.name, learner.points, learner.passed, learner.hint), answer
    mine, theirs = learner.message(), grader["message"]
    if learner.outcome.name == "ERROR":  # the reply spells an error's text with "?" for the
        # characters its encoding does not carry (quotes, braces, ...): the rest is the same
        assert len(theirs) == len(mine), answer
        assert all(a == b or b == "?" for a, b in zip(mine, theirs, strict=True)), answer
    else:
        assert theirs == mine, answer


# ------------------------------------------------------------------ the properties
@given(seed=SEEDS, data=st.data())
def test_rotate_pair_the_check_and_the_grader_agree(seed, data):
    source = data.draw(function_answers(ROTATE_PAIR, "rotate_pair"), label="answer")
    assert_same_verdict(seed, "ex06_rotate_pair", [HELPERS, source])


@given(seed=SEEDS, data=st.data())
def test_apply_rope_the_check_and_the_grader_agree(seed, data):
    source = data.draw(function_answers(APPLY_ROPE, "apply_rope"), label="answer")
    assert_same_verdict(seed, "ex06_apply_rope", [HELPERS, source])


@given(seed=SEEDS, data=st.data())
def test_a_value_the_check_and_the_grader_agree(seed, data):
    cells = data.draw(value_answers("rotated_d4"), label="answer")
    assert_same_verdict(seed, "ex06_rotated_d4", [HELPERS, *cells])


# ------------------------------------------------------------------ the test can fail
RIGHT_ROTATE_PAIR = "def rotate_pair(pair, angle):\n    return turn(pair, angle)\n"
RIGHT_APPLY_ROPE = ("def apply_rope(q, k, positions):\n    d = q.shape[-1]\n"
                    "    inv = 10000.0 ** (-np.arange(0, d, 2) / d)\n"
                    "    return rope(q, positions, inv), rope(k, positions, inv)\n")
RIGHT_VALUE = ("rotated_d4 = rope(np.array([[1.0, 0.0, 1.0, 0.0]]), [1.0], "
               "10000.0 ** (-np.arange(0, 4, 2) / 4))[0]\n")


@pytest.mark.parametrize("grade_id, source", [
    ("ex06_rotate_pair", RIGHT_ROTATE_PAIR),
    ("ex06_apply_rope", RIGHT_APPLY_ROPE),
    ("ex06_rotated_d4", RIGHT_VALUE),
])
def test_the_drawn_answers_are_built_on_right_ones(grade_id, source):
    """The unperturbed answers the strategies start from are right (so a perturbation is what
    makes a drawn answer wrong), for both judges."""
    ns, printed = run_cells([HELPERS, source])
    ex = get(grade_id)
    assert verdict_of(grade_id, ns[ex.name], seed=learner_seed(3, grade_id)).outcome.name == "RIGHT"
    record = grader_record(3, grade_id, ns, printed)
    assert (record["outcome"], record["points"]) == ("RIGHT", ex.points)


NAN_IMAGINARY = [
    ("ex06_rotated_d4", "rotated_d4 = np.array([np.nan, 0.0, 1.0, 0.0]) * np.exp(2j)\n"),
    ("ex06_rotate_pair",
     "def rotate_pair(pair, angle):\n    return turn(pair, angle) * np.exp(1j * np.inf)\n"),
]


@pytest.mark.parametrize("grade_id, source", NAN_IMAGINARY, ids=["value_nan", "function_inf"])
def test_a_complex_answer_with_a_nan_imaginary_part_gets_the_same_verdict(grade_id, source):
    """NaN or infinite imaginary parts: NOT_REAL in both (the reply sends them as text)."""
    assert_same_verdict(0, grade_id, [HELPERS, source])


@pytest.mark.parametrize("grade_id", ["ex06_rotate_pair", "ex06_apply_rope"])
def test_a_function_bound_to_none_gets_the_same_verdict(grade_id):
    """A name bound to None is "not answered yet" in both."""
    assert_same_verdict(0, grade_id, [HELPERS, f"{get(grade_id).name} = None\n"])


COMPLEX_VALUE = "rotated_d4 = np.array([1.0, 0.0, 1.0, 0.0]) * (np.conj(np.exp(2j)) * np.exp(3j))\n"


def test_the_comparison_sees_a_grader_that_drops_the_imaginary_part(monkeypatch):
    """With the grader's copy of ``_plain`` made to drop imaginary parts (the old bug), the
    comparison above fails on a complex answer: the property can fail."""
    assert_same_verdict(0, "ex06_rotated_d4", [HELPERS, COMPLEX_VALUE])
    real_source = probe.plain_source()
    dropping = real_source.replace("if np.issubdtype(arr.dtype, np.complexfloating):",
                                   "if False:\n            pass\n        arr = arr.real\n        if False:")
    assert dropping != real_source
    monkeypatch.setattr(probe, "plain_source", lambda: dropping)
    with pytest.raises(AssertionError):
        assert_same_verdict(0, "ex06_rotated_d4", [HELPERS, COMPLEX_VALUE])
