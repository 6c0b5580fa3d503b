"""The exercise framework: plain data, the one judge, the learner's check, the student generator."""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import nbformat
import numpy as np
import pytest

from lessons.exercises import (
    Outcome,
    _plain,
    all_exercises,
    call_arguments,
    check,
    get,
    judge,
    run_case,
    run_checker,
    to_plain,
    verdict_of,
)
from lessons.exercises.release import (
    BEGIN,
    END,
    differences,
    release,
    stub_source,
    student_notebook,
    written_metadata,
)
from lessons.rope import apply_rope
from lessons.rotation import rotate_2d

ROOT = Path(__file__).resolve().parent.parent
SOLUTION = ROOT / "solutions" / "06_exercises.ipynb"
STUDENT = ROOT / "notebooks" / "06_exercises.ipynb"
NB06 = all_exercises("06")
NOTEBOOKS = ("06", "07", "08", "09")


def _right_rotate_pair(pair, angle):
    return rotate_2d(pair, angle)


# ---------------------------------------------------------------------------- plain data
def test_to_plain_numbers_arrays_and_tuples():
    assert to_plain(np.float64(0.5)) == 0.5 and type(to_plain(np.float64(0.5))) is float
    assert to_plain(np.int64(3)) == 3 and type(to_plain(np.int64(3))) is int
    assert to_plain((np.array([1, 2]), np.array([3, 4]))) == [[1.0, 2.0], [3.0, 4.0]]
    assert to_plain(None) is None


@pytest.mark.parametrize(
    "value, tag",
    [
        (np.conj(np.exp(2j)) * np.exp(3j), "complex"),
        (np.array([1 + 0j, 2 + 0j]), "complex"),
        ([[1.0], [2.0, 3.0]], "ragged"),
        ([np.zeros(2), np.zeros(3)], "ragged"),
        ("0.5", "unsupported"),
        ({"a": 1}, "unsupported"),
        (object(), "unsupported"),
        (np.zeros(_plain.MAX_ANSWER_SIZE + 1), "too_large"),
    ],
)
def test_to_plain_refuses_with_a_tag_and_never_raises(value, tag):
    out = to_plain(value)
    assert isinstance(out, dict) and next(iter(out)) == tag


def test_to_plain_of_an_object_whose_conversion_fails():
    class Evil:
        def __array__(self, *args, **kwargs):
            raise RuntimeError("no")

    assert to_plain(Evil()) == {"unsupported": "Evil"}


def test_plain_module_is_self_contained():
    """The grader ships _plain's source into its sandbox: it must run with nothing else."""
    ns: dict = {}
    exec(compile(inspect.getsource(_plain), "shipped", "exec"), ns)  # noqa: S102 - our own source
    assert ns["to_plain"](np.array([[1, 2]])) == [[1.0, 2.0]]
    assert ns["run_case"](_right_rotate_pair, {"pair": [1.0, 0.0], "angle": 0.0}) == [1.0, 0.0]
    imports = [line for line in inspect.getsource(_plain).splitlines() if line.startswith(("import", "from"))]
    assert imports == ["import numbers", "import numpy as np"]


def test_call_arguments():
    args = call_arguments({"pair": [1.0, 0.0], "angle": 0.5, "d": 4})
    assert isinstance(args["pair"], np.ndarray) and args["pair"].dtype == np.float64
    assert args["angle"] == 0.5 and args["d"] == 4


def test_run_case_tags():
    case = {"pair": [1.0, 0.0], "angle": 0.5}

    def stub(pair, angle):
        raise NotImplementedError()

    def broken(pair, angle):
        raise ValueError("oops")

    def renamed(pair, theta):
        return pair

    def leaves(pair, angle):
        raise SystemExit(3)

    assert run_case(stub, case) == {"missing": True}
    assert run_case(broken, case) == {"error": "ValueError: oops"}
    assert run_case(renamed, case) == {"signature": ["pair", "theta"]}
    assert run_case(leaves, case) == {"error": "SystemExit: 3"}


def test_run_checker_tags():
    assert run_checker(lambda c: True, None) is True
    assert run_checker(lambda c: np.bool_(False), None) is False
    assert run_checker(lambda c: 1, None) == {"not_bool": "int"}
    assert run_checker(lambda c: 1 / 0, None) == {"error": "ZeroDivisionError: division by zero"}


# ---------------------------------------------------------------------------- the judge
def test_judge_outcomes_of_a_value_exercise():
    ex = get("ex06_rotated_d4")
    right = ex.expected_value()
    assert judge(ex, right).outcome is Outcome.RIGHT
    assert judge(ex, None).outcome is Outcome.MISSING
    assert judge(ex, {"missing": True}).outcome is Outcome.MISSING
    assert judge(ex, to_plain(np.exp(1j * np.arange(4)))).outcome is Outcome.NOT_REAL
    assert judge(ex, to_plain([[1.0], [2.0, 3.0]])).outcome is Outcome.RAGGED
    assert judge(ex, to_plain("x")).outcome is Outcome.NOT_NUMBERS
    assert judge(ex, [1.0, 2.0]).outcome is Outcome.WRONG_SHAPE
    assert judge(ex, [1.0, 2.0, 3.0, 4.0]).outcome is Outcome.WRONG_VALUE
    assert judge(ex, [float("nan")] * 4).outcome is Outcome.WRONG_VALUE
    assert judge(ex, right).points == ex.points and judge(ex, [1.0] * 4).points == 0


def test_a_value_verdict_never_shows_the_expected_value_unless_revealed():
    ex = get("ex06_rotated_d4")
    verdict = judge(ex, [0.1, 0.2, 0.3, 0.4])
    expected = ex.expected_value()
    for places in (4, 6, 8):
        assert f"{expected[0]:.{places}f}" not in verdict.message()
    assert f"{expected[0]:.8g}" in verdict.message(reveal=True)


def test_value_hint_for_a_typical_wrong_answer():
    verdict = judge(get("ex06_rotated_d4"), [1.0, 0.0, 1.0, 0.0])  # x, not rotated
    assert verdict.outcome is Outcome.WRONG_VALUE and "unrotated" in verdict.hint


@pytest.mark.parametrize("shift", [1, -1])
def test_an_off_by_one_apply_rope_is_told_it_is_one_position_off(shift):
    """Counting positions from 1 (or from -1) is a common slip: it scores 0 and names the slip."""

    def off_by_one(q, k, positions):
        return apply_rope(q, k, np.asarray(positions, dtype=float) + shift)

    verdict = verdict_of("ex06_apply_rope", off_by_one, seed=3)
    assert verdict.points == 0 and verdict.outcome is Outcome.WRONG_VALUE
    assert "one position off" in verdict.hint


def test_slips_that_turn_the_other_way_are_named_in_the_hint():
    """q turned by n and k by m, or pair @ R instead of R @ pair, give exactly the clockwise
    turn of a flipped minus sign: the hint names those slips too, not only the sign."""

    def swapped_positions(q, k, m, n):
        return float(rotate_2d(q, n) @ rotate_2d(k, m))

    def row_times_matrix(pair, angle):
        c, s = np.cos(angle), np.sin(angle)
        return np.asarray(pair, dtype=float) @ np.array([[c, -s], [s, c]])

    score = verdict_of("ex06_score", swapped_positions, seed=2)
    assert score.points == 0 and "q turns by m and k by n" in score.hint
    pair = verdict_of("ex06_rotate_pair", row_times_matrix, seed=2)
    assert pair.points == 0 and "R @ pair (pair @ R turns the other way)" in pair.hint


def test_a_look_back_weight_divided_by_sqrt_d_is_told_so():
    """Notebook 05's attention divides by sqrt(d); this exercise does not, and the hint says so."""
    from lessons.exercises.nb06 import _look_back_weight

    def with_sqrt_d(d, D, m, scale):
        return _look_back_weight(d, D, m, scale / np.sqrt(d))

    verdict = verdict_of("ex06_look_back_weight", with_sqrt_d, seed=3)
    assert verdict.points == 0 and verdict.outcome is Outcome.WRONG_VALUE
    assert "divided by sqrt(d)" in verdict.hint


def test_a_look_back_weight_with_the_scale_applied_twice_is_told_so():
    """Scaling the query and then the scores squares the scale; the hint names the slip."""
    from lessons.exercises.nb06 import _look_back_weight

    def scaled_twice(d, D, m, scale):
        return _look_back_weight(d, D, m, scale * scale)

    verdict = verdict_of("ex06_look_back_weight", scaled_twice, seed=3)
    assert verdict.points == 0 and verdict.outcome is Outcome.WRONG_VALUE
    assert "multiplied by the scale twice" in verdict.hint


def test_judge_function_outcomes():
    ex = get("ex06_rotate_pair")
    cases = ex.draw_cases(np.random.default_rng(0))
    right = [ex.expected_for(c) for c in cases]
    assert judge(ex, right, cases).outcome is Outcome.RIGHT
    assert judge(ex, [{"missing": True}] * len(cases), cases).outcome is Outcome.MISSING
    assert judge(ex, {"missing": True}).outcome is Outcome.MISSING
    assert judge(ex, {"not_function": "int"}).outcome is Outcome.NOT_A_FUNCTION
    one_error = right[:-1] + [{"error": "NameError: name 'helper' is not defined"}]
    verdict = judge(ex, one_error, cases)
    assert verdict.outcome is Outcome.ERROR and verdict.points == 0 and "NameError" in verdict.message()
    with pytest.raises(ValueError, match="needs the cases"):
        judge(ex, right)


def test_signature_message_names_the_parameters_to_keep():
    def rotate_pair(pair, theta):
        return rotate_2d(pair, theta)

    verdict = verdict_of("ex06_rotate_pair", rotate_pair, seed=0)
    assert verdict.outcome is Outcome.SIGNATURE
    assert "keep the parameter names (pair, angle)" in verdict.message()


def test_counterexample_is_short_labelled_and_on_the_smallest_input():
    verdict = verdict_of(
        "ex06_apply_rope", lambda q, k, positions: apply_rope(q, k, np.asarray(positions) + 1), seed=1
    )
    text = verdict.message()
    assert verdict.outcome is Outcome.WRONG_VALUE
    assert len(text) < 700 and max(len(line) for line in text.splitlines()) < 200
    assert "token" in text and "pair" in text and ("q[" in text or "k[" in text)
    sizes = [np.size(c["q"]) for c in get("ex06_apply_rope").draw_cases(np.random.default_rng(1))]
    assert f"<array {'x'.join(str(n) for n in np.shape(verdict.failure.case['q']))}>" in text
    assert np.size(verdict.failure.case["q"]) == min(sizes)


def test_float32_answers_get_the_precision_message():
    def apply_rope32(q, k, positions):
        d = q.shape[-1]
        omega = np.float32(10000.0) ** (-np.arange(0, d, 2, dtype=np.float32) / np.float32(d))
        angles = np.asarray(positions, dtype=np.float32)[:, None] * omega
        cos, sin = np.cos(angles), np.sin(angles)

        def rotate(x):
            x = x.astype(np.float32)
            out = np.empty_like(x)
            out[..., 0::2] = x[..., 0::2] * cos - x[..., 1::2] * sin
            out[..., 1::2] = x[..., 0::2] * sin + x[..., 1::2] * cos
            return out

        return rotate(q), rotate(k)

    verdicts = [verdict_of("ex06_apply_rope", apply_rope32, seed=s) for s in range(3)]
    failed = [v for v in verdicts if not v.right]
    assert failed, "float32 angles at positions in the thousands should differ"
    for v in failed:
        assert v.failure.precision and "precision is the likely cause" in v.message()


def test_a_real_bug_is_not_blamed_on_precision():
    verdict = verdict_of("ex06_rotate_pair", lambda pair, angle: rotate_2d(pair, angle * 1.001), seed=0)
    assert verdict.outcome is Outcome.WRONG_VALUE and not verdict.failure.precision
    # Small numbers 10% off (YaRN's slow frequencies, high clamped at d/2 - 1) are a bug too,
    # although every difference is below 1e-3.
    from lessons.exercises.nb09 import _yarn_unclamped

    def clamped_at_last_pair(d, factor, original_length):
        return _yarn_unclamped(d, factor, original_length, high_cap=d // 2 - 1)

    for seed in range(5):
        verdict = verdict_of("ex09_yarn_inv_freq", clamped_at_last_pair, seed=seed)
        assert verdict.outcome is Outcome.WRONG_VALUE and not verdict.failure.precision
        assert "clamp high at d - 1" in verdict.message() and "float32" not in verdict.message()


# --------------------------------------------------------------------- the learner's check
def test_check_prints_passes(capsys):
    check("ex06_rotate_pair", _right_rotate_pair)
    assert capsys.readouterr().out == "Exercise 2a: rotate one pair: passes (8 cases)\n"


def test_check_of_stubs_says_not_answered(capsys):
    def stub(pair, angle):
        raise NotImplementedError()

    check("ex06_rotate_pair", stub)
    check("ex06_rotated_d4", None)
    check("ex06_check_rope", None)
    assert capsys.readouterr().out.splitlines() == [
        "Exercise 2a: rotate one pair: not answered yet",
        "Exercise 2d: [1, 0, 1, 0] rotated at position 1: not answered yet",
        "Exercise 5: write the tests: not answered yet",
    ]


@pytest.mark.parametrize(
    "answer",
    [
        "text",
        object(),
        3,
        [[1.0], [2.0, 3.0]],
        np.exp(1j * np.arange(4)),
        lambda pair, angle: "x",
        lambda pair, angle: None,
        lambda *a, **k: 1 / 0,
    ],
)
def test_check_never_raises_in_a_notebook(answer, capsys, monkeypatch):
    monkeypatch.delenv("L13_CHECK_RAISES", raising=False)
    for gid in ("ex06_rotate_pair", "ex06_rotated_d4", "ex06_check_rope"):
        check(gid, answer)
    assert "does not pass" in capsys.readouterr().out


def test_check_raises_for_nbgrader_when_asked(monkeypatch, capsys):
    monkeypatch.setenv("L13_CHECK_RAISES", "1")
    with pytest.raises(AssertionError, match="ex06_rotated_d4"):
        check("ex06_rotated_d4", [0.0, 0.0, 0.0, 0.0])
    with pytest.raises(AssertionError, match="not answered"):
        check("ex06_rotated_d4", None)
    check("ex06_rotate_pair", _right_rotate_pair)  # a right answer does not raise
    assert "passes" in capsys.readouterr().out


def test_unknown_exercise_names_the_known_ones():
    with pytest.raises(KeyError, match="ex06_rotate_pair"):
        get("ex06_nope")


# ---------------------------------------------------------------------------- the registry
@pytest.mark.parametrize("ex", [e for e in all_exercises() if e.kind == "function"], ids=lambda e: e.grade_id)
def test_cases_are_plain_data_and_change_with_the_seed(ex):
    a = ex.draw_cases(np.random.default_rng(1))
    b = ex.draw_cases(np.random.default_rng(2))
    assert json.loads(json.dumps(a)) == a  # JSON round trip: plain data only
    assert a != b
    assert a == ex.draw_cases(np.random.default_rng(1))  # a seed reproduces its cases


@pytest.mark.parametrize("ex", [e for e in all_exercises() if e.kind == "function"], ids=lambda e: e.grade_id)
def test_every_function_exercise_has_hints_and_each_hint_is_reachable(ex):
    """Each mutant, submitted as the answer, gets a hint (its own, or that of an earlier mutant
    that gives the same outputs on the drawn cases)."""
    assert ex.mutants, f"{ex.grade_id} has no mutants, so no hint can name a bug"
    for mutant in ex.mutants:
        verdict = verdict_of(ex.grade_id, mutant.fn, seed=5)
        assert not verdict.right, (ex.grade_id, mutant.name)
        assert verdict.hint is not None, (ex.grade_id, mutant.name, verdict.message())


def test_apply_rope_cases_vary_shapes_and_positions():
    cases = [c for s in range(5) for c in get("ex06_apply_rope").draw_cases(np.random.default_rng(s))]
    shapes = {np.asarray(c["q"]).shape for c in cases}
    assert len({s[-1] for s in shapes}) >= 3 and len({s[-2] for s in shapes}) >= 3
    assert any(min(c["positions"]) > 100 for c in cases)  # positions that do not start at 0


def test_exercise_lists_of_the_notebooks():
    kinds = {nb: [(e.grade_id, e.kind) for e in all_exercises(nb)] for nb in NOTEBOOKS}
    assert [k for _, k in kinds["06"]].count("written") == 3
    assert ("ex06_check_rope", "checker") in kinds["06"]
    assert {gid for gid, _ in kinds["08"]} >= {
        "ex08_split_half_rows",
        "ex08_cache_reset_bug",
        "ex08_layout_bug",
    }
    assert all(e.practises for e in all_exercises())


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


def test_a_written_answer_with_wrong_metadata_is_refused():
    nb = nbformat.read(SOLUTION, as_version=4)
    cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "ex06_gap_question")
    cell.metadata["nbgrader"]["grade"] = False
    with pytest.raises(ValueError, match="written answer"):
        student_notebook(nb)


def _solution_path(nb: str) -> Path:
    return next((ROOT / "solutions").glob(f"{nb}_*.ipynb"))


@pytest.mark.parametrize("nb", NOTEBOOKS)
def test_student_notebook_holds_no_solution_and_keeps_every_answer_cell(nb):
    student = student_notebook(nbformat.read(_solution_path(nb), as_version=4))
    text = "\n".join(c.source for c in student.cells)
    assert BEGIN not in text and END not in text
    for ex in all_exercises(nb):
        answer = next(
            c for c in student.cells if c.metadata.get("nbgrader", {}).get("grade_id") == ex.grade_id
        )
        if ex.kind in ("function", "checker"):
            assert "return" not in answer.source.split('"""')[-1]
            assert "raise NotImplementedError()" in answer.source
            assert f"def {ex.name}(" in answer.source
        elif ex.kind == "value":
            assert answer.source.endswith(f"{ex.name} = None  # YOUR CODE HERE")
        else:
            assert answer.source == "YOUR ANSWER HERE" and answer.cell_type == "markdown"


@pytest.mark.parametrize("nb", NOTEBOOKS)
@pytest.mark.parametrize("where", ["solutions", "notebooks"])
def test_nbgrader_schema_3_metadata(nb, where):
    """nbgrader's rules (nbgraderformat v3): ids present and unique, points on grade cells,
    written answers as manually graded markdown cells."""
    path = next((ROOT / where).glob(f"{nb}_*.ipynb"))
    cells = [
        (c, c.metadata["nbgrader"])
        for c in nbformat.read(path, as_version=4).cells
        if "nbgrader" in c.metadata
    ]
    ids = [m["grade_id"] for _, m in cells]
    assert len(ids) == len(set(ids))
    for _, m in cells:
        assert m["schema_version"] == 3
        assert {"grade", "solution", "locked", "grade_id"} <= set(m)
        if m["grade"]:
            assert m["points"] > 0
    for ex in all_exercises(nb):
        answer = [(c, m) for c, m in cells if m["grade_id"] == ex.grade_id]
        assert len(answer) == 1
        cell, meta = answer[0]
        if ex.kind == "written":
            assert meta == written_metadata(ex.grade_id, ex.points) and cell.cell_type == "markdown"
            continue
        grade = [m for _, m in cells if m["grade_id"] == f"{ex.grade_id}_check"]
        assert meta["solution"] and not meta["grade"] and not meta["locked"] and cell.cell_type == "code"
        assert len(grade) == 1 and grade[0]["points"] == ex.points and grade[0]["locked"]
        assert ex.name in cell.source


def test_committed_student_notebook_is_what_release_produces(tmp_path):
    fresh = release(SOLUTION, tmp_path)
    assert differences(STUDENT, fresh) == []
    outputs = [
        o for c in nbformat.read(STUDENT, as_version=4).cells if c.cell_type == "code" for o in c.outputs
    ]
    checked = [e for e in NB06 if e.kind != "written"]
    assert sum("not answered yet" in o.get("text", "") for o in outputs) == len(checked)
    assert not any(o.get("output_type") == "error" for o in outputs)


def test_differences_notices_a_stale_notebook(tmp_path):
    nb = nbformat.read(STUDENT, as_version=4)
    nb.cells[3].source += "\n# edited by hand"
    nbformat.write(nb, tmp_path / "stale.ipynb")
    assert differences(tmp_path / "stale.ipynb", STUDENT) == ["cell 4: the source differs"]


def test_a_checker_that_hangs_is_stopped_at_the_time_limit():
    import dataclasses
    import time

    from lessons.exercises import outputs_of

    ex = dataclasses.replace(get("ex06_check_rope"), time_limit=0.2)

    def hangs(rope):
        while True:
            time.sleep(0.01)

    start = time.perf_counter()
    outputs, _ = outputs_of(ex, hangs, np.random.default_rng(0))
    assert time.perf_counter() - start < 5
    assert outputs["correct"] == {"timeout": True}
    verdict = judge(ex, outputs, public=True)
    assert verdict.points == 0 and verdict.outcome is Outcome.ERROR and "time limit" in verdict.message()


def test_cache_scores_left_undivided_are_told_they_lack_the_sqrt_d():
    """The hint for exercise 4 of 08 describes the learner's slip (no division), not the rule."""
    from lessons.exercises.nb08 import _cache_scores

    verdict = verdict_of("ex08_cache_reset_bug", _cache_scores(3) * np.sqrt(2))
    assert verdict.points == 0
    assert verdict.hint.startswith("your scores are not divided by sqrt(d) = sqrt(2)")


def test_decoding_scores_left_undivided_are_told_they_lack_the_sqrt_d():
    from lessons.exercises.nb08 import _fixed_scores

    verdict = verdict_of("ex08_double_rotation_bug", _fixed_scores() * np.sqrt(4))
    assert verdict.points == 0
    assert verdict.hint.startswith("your scores are not divided by sqrt(d) = sqrt(4)")
