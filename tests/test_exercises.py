"""Exercises of notebook 06: the specs, the learner's check, and the student-version generator."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import numpy as np
import pytest

from lessons.claims import get as get_claim
from lessons.exercises import (
    all_exercises,
    call_arguments,
    check,
    compare,
    counterexample,
    get,
    to_plain,
)
from lessons.exercises.release import (
    BEGIN,
    END,
    differences,
    release,
    stub_source,
    student_notebook,
)

ROOT = Path(__file__).resolve().parent.parent
SOLUTION = ROOT / "solutions" / "06_exercises.ipynb"
STUDENT = ROOT / "notebooks" / "06_exercises.ipynb"
NB06 = all_exercises("06")


def _solution_namespace() -> dict:
    """Run the solution notebook's code cells (our own code) in one namespace, checks skipped."""
    nb = nbformat.read(SOLUTION, as_version=4)
    ns: dict = {}
    for cell in nb.cells:
        if cell.cell_type == "code" and "check(" not in cell.source:
            exec(compile(cell.source, "solution", "exec"), ns)  # noqa: S102 - our own notebook
    return ns


# ---------------------------------------------------------------------------- the registry
def test_notebook_06_has_the_exercises_of_the_curriculum():
    ids = [e.grade_id for e in NB06]
    assert ids == ["ex06_dot_2_3", "ex06_dot_9_10", "ex06_angles_d4", "ex06_length_d4",
                   "ex06_rotate_pair", "ex06_pair_frequencies", "ex06_apply_rope",
                   "ex06_cache_bug", "ex06_layout_bug"]
    assert sum(e.points for e in NB06) == 15
    functions = {e.name for e in NB06 if e.kind == "function"}
    assert functions == {"rotate_pair", "pair_frequencies", "apply_rope"}


def test_expected_values_agree_with_the_claims():
    def close(gid, claim_id):
        expected = np.asarray(get(gid).expected_value(), dtype=float)
        stated = np.asarray(get_claim(claim_id).stated_values())
        np.testing.assert_allclose(expected, stated, atol=1e-8)

    close("ex06_dot_2_3", "06.ex1.positions_2_3")
    close("ex06_dot_9_10", "06.ex1.positions_9_10")
    close("ex06_angles_d4", "06.ex2.angles")
    close("ex06_length_d4", "06.ex2.length")
    close("ex06_cache_bug", "06.ex4.cache_fixed")
    close("ex06_layout_bug", "06.ex4.layout_fixed")


@pytest.mark.parametrize("ex", [e for e in NB06 if e.kind == "function"], ids=lambda e: e.grade_id)
def test_cases_are_plain_data_and_change_with_the_seed(ex):
    a = ex.draw_cases(np.random.default_rng(1))
    b = ex.draw_cases(np.random.default_rng(2))
    assert json.loads(json.dumps(a)) == a  # JSON round trip: plain data only
    assert a != b
    assert a == ex.draw_cases(np.random.default_rng(1))  # a seed reproduces its cases


def test_apply_rope_cases_vary_shapes_and_positions():
    cases = [c for s in range(5) for c in get("ex06_apply_rope").draw_cases(np.random.default_rng(s))]
    shapes = {np.asarray(c["q"]).shape for c in cases}
    assert len({s[-1] for s in shapes}) >= 3 and len({s[-2] for s in shapes}) >= 3
    assert any(min(c["positions"]) > 100 for c in cases)  # positions that do not start at 0


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_solution_passes_every_exercise(seed):
    ns = _solution_namespace()
    for ex in NB06:
        n, failure = counterexample(ex, ns[ex.name], np.random.default_rng(seed))
        assert failure is None, (ex.grade_id, failure)
        assert n >= 1


# ----------------------------------------------------------------------------- comparison
def test_compare_names_shape_element_and_non_finite():
    assert compare([1.0, 2.0], [1.0, 2.0 + 1e-9], 1e-6) is None
    assert compare([1.0, 2.0], [1.0, 2.1], 1e-6) == "element [1] differs: 2.1 given, 2 expected"
    assert compare([[1.0, 2.0]], [1.0, 2.0], 1e-6) == "shape (2,) given, (1, 2) expected"
    assert "nan" in compare(0.5, float("nan"), 1e-6)
    assert compare(0.5, None, 1e-6) == "no answer (None)"
    assert compare(1000.0, 1000.0005, 1e-6) is None  # relative for large values
    assert compare(0.5, [[1.0], [2.0, 3.0]], 1e-6).startswith("the answer is not")


def test_to_plain_and_call_arguments():
    assert to_plain(np.float64(0.5)) == 0.5 and type(to_plain(np.float64(0.5))) is float
    assert to_plain((np.array([1, 2]), np.array([3, 4]))) == [[1.0, 2.0], [3.0, 4.0]]
    with pytest.raises(TypeError):
        to_plain("0.5")
    args = call_arguments({"pair": [1.0, 0.0], "angle": 0.5, "d": 4})
    assert isinstance(args["pair"], np.ndarray) and args["pair"].dtype == np.float64
    assert args["angle"] == 0.5 and args["d"] == 4


# --------------------------------------------------------------------- the learner's check
def test_check_prints_passes_for_a_right_function(capsys):
    from lessons.rotation import rotate_2d

    check("ex06_rotate_pair", lambda pair, angle: rotate_2d(pair, angle))
    assert capsys.readouterr().out == "Exercise 3a: rotate one pair: passes (8 cases)\n"


def test_check_prints_one_counterexample(capsys):
    from lessons.rotation import rotate_2d

    check("ex06_rotate_pair", lambda pair, angle: rotate_2d(pair, -angle), seed=3)
    out = capsys.readouterr().out
    assert "does not pass. A counterexample:" in out
    assert out.count("input:") == 1 and "rotate_pair(pair=[1, 0], angle=" in out  # the smallest input
    assert "expected:" in out and "given:" in out and "element [1] differs" in out


def test_check_reports_an_exception_as_the_given_value(capsys):
    def broken(pair, angle):
        raise ValueError("oops")

    check("ex06_rotate_pair", broken)
    assert "given:    raised ValueError: oops" in capsys.readouterr().out


def test_check_of_a_stub_says_not_answered_without_raising(capsys):
    def stub(pair, angle):
        raise NotImplementedError()

    check("ex06_rotate_pair", stub)
    check("ex06_dot_2_3", None)
    assert capsys.readouterr().out.splitlines() == [
        "Exercise 3a: rotate one pair: not answered yet",
        "Exercise 1a: the dot at positions 2 and 3: not answered yet",
    ]


def test_check_of_a_value(capsys):
    check("ex06_dot_2_3", np.cos(1.0))
    check("ex06_dot_2_3", 0.5)
    out = capsys.readouterr().out
    assert "passes (1 case)" in out
    assert "expected: 0.54030231" in out and "given:    0.5" in out


def test_check_raises_for_nbgrader_when_asked(monkeypatch, capsys):
    monkeypatch.setenv("L13_CHECK_RAISES", "1")
    with pytest.raises(AssertionError, match="ex06_dot_2_3"):
        check("ex06_dot_2_3", 0.5)
    with pytest.raises(AssertionError, match="not answered"):
        check("ex06_dot_2_3", None)
    check("ex06_dot_2_3", np.cos(1.0))  # a right answer does not raise
    assert "passes" in capsys.readouterr().out


def test_unknown_exercise_names_the_known_ones():
    with pytest.raises(KeyError, match="ex06_rotate_pair"):
        get("ex06_nope")


# ------------------------------------------------------------------ the student generator
def test_stub_of_a_function_body_keeps_the_signature_and_docstring():
    src = 'def f(x):\n    """doc"""\n    ### BEGIN SOLUTION\n    return x + 1\n    ### END SOLUTION'
    stub = 'def f(x):\n    """doc"""\n    # YOUR CODE HERE\n    raise NotImplementedError()'
    assert stub_source(src) == stub


def test_stub_of_a_value_answer_and_of_markdown():
    src = "### BEGIN SOLUTION\nanswer = 2 * 3\n### END SOLUTION\nprint(answer)"
    assert stub_source(src, value_name="answer") == "answer = None  # YOUR CODE HERE\nprint(answer)"
    assert stub_source("### BEGIN SOLUTION\nIt is 4.\n### END SOLUTION", "markdown") == "YOUR ANSWER HERE"


def test_unbalanced_markers_are_refused():
    with pytest.raises(ValueError, match="unbalanced"):
        stub_source("### BEGIN SOLUTION\nx = 1\n")


def test_student_notebook_holds_no_solution():
    student = student_notebook(nbformat.read(SOLUTION, as_version=4))
    text = "\n".join(c.source for c in student.cells)
    assert BEGIN not in text and END not in text
    code = "\n".join(c.source for c in student.cells if c.cell_type == "code")
    assert code.count("raise NotImplementedError()") == 3
    for ex in NB06:
        answer = next(c for c in student.cells
                      if c.metadata.get("nbgrader", {}).get("grade_id") == ex.grade_id)
        if ex.kind == "function":
            assert "return" not in answer.source and "raise NotImplementedError()" in answer.source
        else:
            assert answer.source == f"{ex.name} = None  # YOUR CODE HERE"
    assert all(c.outputs == [] for c in student.cells if c.cell_type == "code")


def _nbgrader(nb) -> list[tuple[object, dict]]:
    return [(c, c.metadata["nbgrader"]) for c in nb.cells if "nbgrader" in c.metadata]


@pytest.mark.parametrize("path", [SOLUTION, STUDENT], ids=["solution", "student"])
def test_nbgrader_schema_3_metadata(path):
    """nbgrader's rules (nbgraderformat v3): ids present and unique, points on grade cells."""
    nb = nbformat.read(path, as_version=4)
    cells = _nbgrader(nb)
    ids = [m["grade_id"] for _, m in cells]
    assert len(ids) == len(set(ids))
    for cell, m in cells:
        assert m["schema_version"] == 3
        assert {"grade", "solution", "locked", "grade_id"} <= set(m)
        if m["grade"]:
            assert m["points"] > 0 and m["locked"] and not m["solution"] and cell.cell_type == "code"
        if m["solution"]:
            assert not m["locked"] and not m["grade"] and cell.cell_type == "code"
    for ex in NB06:
        answer = [c for c, m in cells if m["grade_id"] == ex.grade_id]
        grade = [m for c, m in cells if m["grade_id"] == f"{ex.grade_id}_check"]
        assert len(answer) == 1 and answer[0].metadata["nbgrader"]["solution"]
        assert len(grade) == 1 and grade[0]["points"] == ex.points
        assert ex.name in answer[0].source


def test_solution_check_cells_print_passes():
    nb = nbformat.read(SOLUTION, as_version=4)
    texts = [o.get("text", "") for c in nb.cells if c.cell_type == "code" and "check(" in c.source
             for o in c.outputs]
    assert len(texts) == len(NB06)
    assert all(": passes (" in t for t in texts), texts


def test_committed_student_notebook_is_what_release_produces(tmp_path):
    fresh = release(SOLUTION, tmp_path)
    assert differences(STUDENT, fresh) == []
    outputs = [o for c in nbformat.read(STUDENT, as_version=4).cells if c.cell_type == "code"
               for o in c.outputs]
    assert sum("not answered yet" in o.get("text", "") for o in outputs) == len(NB06)
    assert not any(o.get("output_type") == "error" for o in outputs)


def test_differences_notices_a_stale_notebook(tmp_path):
    nb = nbformat.read(STUDENT, as_version=4)
    nb.cells[3].source += "\n# edited by hand"
    nbformat.write(nb, tmp_path / "stale.ipynb")
    assert differences(tmp_path / "stale.ipynb", STUDENT) == ["cell 4: the source differs"]
