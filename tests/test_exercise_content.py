"""What the exercises teach and give away: no answers in the student notebooks, solutions at
full marks, the write-the-tests exercise, hints that name the bug, and the one judge's verdict
on the cases of the grader issue (the learner's check and the grader agree)."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import nbformat
import numpy as np
import pytest

from lessons.exercises import (
    Outcome,
    _plain,
    all_exercises,
    get,
    judge,
    run_checker,
    to_plain,
    verdict_of,
)
from lessons.exercises.release import student_notebook

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ("06", "07", "08", "09")


def _path(where: str, nb: str) -> Path:
    return next((ROOT / where).glob(f"{nb}_*.ipynb"))


def _cell_texts(nb) -> list[str]:
    texts = []
    for cell in nb.cells:
        texts.append(cell.source)
        for out in cell.get("outputs", []):
            text = out.get("text", "")
            texts.append("".join(text) if isinstance(text, list) else text)
            for key, value in out.get("data", {}).items():
                if not key.startswith("image/"):
                    texts.append("".join(value) if isinstance(value, list) else str(value))
    return texts


def _formats(x: float) -> set[str]:
    out = {repr(x), f"{x:.8g}", f"{x:.6g}", f"{x:.5g}"}
    for places in (3, 4, 5, 6, 8):
        out.add(f"{x:.{places}f}")
    return out


# ------------------------------------------------------- no answer in the student notebooks
@pytest.mark.parametrize("nb", NOTEBOOKS)
def test_no_student_notebook_states_the_answer_of_a_graded_value(nb):
    text = "\n".join(_cell_texts(nbformat.read(_path("notebooks", nb), as_version=4)))
    values = [e for e in all_exercises(nb) if e.kind == "value"]
    for ex in values:
        numbers = np.ravel(np.asarray(ex.expected_value(), dtype=float))
        # Where a bug the exercise shows gives the right number too (a key at position 0 is
        # not moved by a second rotation), the buggy code's printout holds it: not a giveaway.
        shown_by_the_bug = [np.ravel(np.asarray(to_plain(fn()), dtype=float)) for fn, _ in ex.wrong_values]
        for i, x in enumerate(numbers):
            if float(x).is_integer():
                continue  # 0, 1, ... appear everywhere and give nothing away
            if any(
                w.shape == numbers.shape and np.isclose(w[i], x, rtol=0, atol=1e-12) for w in shown_by_the_bug
            ):
                continue
            for form in _formats(float(x)):
                if len(form.lstrip("-").replace(".", "").lstrip("0")) < 3:
                    continue  # too few digits to be the answer rather than a coincidence
                found = re.search(rf"(?<![\d.]){re.escape(form)}(?!\d)", text)
                assert found is None, f"{ex.grade_id}: the answer {form} is in notebooks/{nb}"


def test_the_answer_test_catches_a_stated_answer():
    """The test above can fail: the old 06's giveaway, cos 1 printed in the notebook, is found."""
    text = "both answers are 0.54030231"
    assert any(re.search(rf"(?<![\d.]){re.escape(f)}(?!\d)", text) for f in _formats(float(np.cos(1.0))))


@pytest.mark.parametrize("nb", NOTEBOOKS)
def test_written_answers_are_blank_in_the_student_notebooks(nb):
    student = student_notebook(nbformat.read(_path("solutions", nb), as_version=4))
    for ex in all_exercises(nb, kinds=("written",)):
        cell = next(c for c in student.cells if c.metadata.get("nbgrader", {}).get("grade_id") == ex.grade_id)
        assert cell.source == "YOUR ANSWER HERE"


# ------------------------------------------------- solutions at full marks, students at zero
def _judged_at_check_cells(path: Path, whole: bool) -> dict:
    """Run a notebook's code cells in order (06 whole; 07-09 from '## Exercises', which uses
    numpy only) and judge each answer at its check cell, as the learner's check does."""
    import matplotlib

    matplotlib.use("Agg")
    nb = nbformat.read(path, as_version=4)
    start = 0 if whole else next(i for i, c in enumerate(nb.cells) if c.source.startswith("## Exercises"))
    ns: dict = {}
    verdicts = {}
    for cell in nb.cells[start:]:
        if cell.cell_type == "markdown" and cell.source.startswith("## Try it"):
            break
        meta = cell.metadata.get("nbgrader", {})
        gid = meta.get("grade_id", "")
        if cell.cell_type == "markdown":
            if gid and get(gid).kind == "written":
                verdicts[gid] = judge(get(gid), cell.source)
            continue
        if gid.endswith("_check"):
            ex = get(gid[: -len("_check")])
            verdicts[ex.grade_id] = verdict_of(ex.grade_id, ns.get(ex.name), seed=0, public=False)
            continue
        try:
            exec(compile(cell.source, str(path), "exec"), ns)  # noqa: S102 - our own notebooks
        except NotImplementedError:
            pass
    return verdicts


@pytest.mark.parametrize("nb", NOTEBOOKS)
def test_solutions_earn_full_marks_and_students_zero(nb):
    exercises = all_exercises(nb)
    solved = _judged_at_check_cells(_path("solutions", nb), whole=nb == "06")
    assert set(solved) == {e.grade_id for e in exercises}
    for ex in exercises:
        v = solved[ex.grade_id]
        if ex.kind == "written":
            assert v.outcome is Outcome.MANUAL, ex.grade_id  # a model answer, for a person to grade
        else:
            assert v.outcome is Outcome.RIGHT and v.points == ex.points, (ex.grade_id, v.message())
    untouched = _judged_at_check_cells(_path("notebooks", nb), whole=nb == "06")
    for ex in exercises:
        v = untouched[ex.grade_id]
        assert v.outcome is Outcome.MISSING and v.points == 0, (ex.grade_id, v.message())


# ------------------------------------------------------------------ write the tests
CHECKER = get("ex06_check_rope")


def _solution_checker():
    """check_rope of the solution notebook, with the apply_rope it builds on."""
    nb = nbformat.read(_path("solutions", "06"), as_version=4)
    ns: dict = {}
    for cell in nb.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id", "")
        if cell.cell_type == "code" and not gid.endswith("_check"):
            exec(compile(cell.source, "solution", "exec"), ns)  # noqa: S102 - our own notebook
    return ns["check_rope"]


def _hidden_outputs(checker) -> dict:
    candidates = [CHECKER.correct, *CHECKER.hidden_mutants]
    return {"correct" if i == 0 else m.name: run_checker(checker, m.fn) for i, m in enumerate(candidates)}


def test_accept_everything_scores_zero():
    v = judge(CHECKER, _hidden_outputs(lambda rope: True))
    assert v.points == 0 and v.outcome is Outcome.PARTIAL and len(v.missed) == len(CHECKER.hidden_mutants)


def test_reject_everything_scores_zero():
    v = judge(CHECKER, _hidden_outputs(lambda rope: False))
    assert v.points == 0 and v.outcome is Outcome.REJECTS_CORRECT


def test_a_checker_that_raises_or_returns_no_bool_scores_zero():
    assert judge(CHECKER, _hidden_outputs(lambda rope: 1 / 0)).outcome is Outcome.ERROR
    assert judge(CHECKER, _hidden_outputs(lambda rope: "yes")).outcome is Outcome.NOT_NUMBERS
    assert judge(CHECKER, {"correct": {"timeout": True}}).points == 0


def test_the_solution_checker_catches_every_hidden_mutant():
    v = judge(CHECKER, _hidden_outputs(_solution_checker()))
    assert v.outcome is Outcome.RIGHT and v.points == CHECKER.points and not v.missed
    assert len(CHECKER.hidden_mutants) >= 10


def test_a_shift_check_alone_catches_only_part_of_the_hidden_mutants():
    """Partial credit: a checker that tests only "same distance, same score" misses the bugs
    that keep the distance (sign flipped, positions off by one, ...)."""

    def shift_only(rope):
        rng = np.random.default_rng(1)
        q, k, v = rng.normal(size=(1, 8)), rng.normal(size=(1, 8)), rng.normal(size=(1, 8))
        a = rope(q, k, v, [3], [7])
        b = rope(q, k, v, [103], [107])
        return bool(np.isclose(a[0] @ a[1].T, b[0] @ b[1].T).all())

    v = judge(CHECKER, _hidden_outputs(shift_only))
    assert 0 < v.points < CHECKER.points
    assert {"sign_flipped", "positions_off_by_one", "positions_ignored"} <= set(v.missed)


def test_the_self_check_uses_only_the_public_mutants(capsys):
    from lessons.exercises import check

    check("ex06_check_rope", lambda rope: True)
    out = capsys.readouterr().out
    for m in CHECKER.public_mutants:
        assert m.name in out
    for m in CHECKER.hidden_mutants:
        assert m.name not in out


@pytest.mark.parametrize(
    "m", [CHECKER.correct, *CHECKER.public_mutants, *CHECKER.hidden_mutants], ids=lambda m: m.name
)
def test_every_candidate_is_self_contained_and_distinct(m):
    """The grader ships each candidate's source into its sandbox: run from the source alone it
    gives what the function gives; and every mutant differs from the correct one somewhere."""
    ns: dict = {}
    exec(compile(inspect.getsource(m.fn), "shipped", "exec"), ns)  # noqa: S102 - our own source
    shipped = ns[m.fn.__name__]
    rng = np.random.default_rng(0)
    q, k, v = rng.normal(size=(3, 8)), rng.normal(size=(5, 8)), rng.normal(size=(5, 8))
    args = (q, k, v, np.array([4000, 4003, 4010]), np.array([7, 300, 3999, 4000, 4001]))
    for a, b in zip(shipped(*args), m.fn(*args), strict=True):
        np.testing.assert_array_equal(a, b)
    if m is not CHECKER.correct:
        right = CHECKER.correct.fn(*args)
        assert any(
            not np.allclose(a, b, rtol=1e-9, atol=1e-9) for a, b in zip(m.fn(*args), right, strict=True)
        )


# ------------------------------------------------------------------ hints that name the bug
def _solution_cell(gid: str) -> str:
    nb = nbformat.read(_path("solutions", "06"), as_version=4)
    return next(c.source for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == gid)


def test_the_06_solution_with_the_sign_flipped_gets_a_hint_naming_the_sign():
    src = _solution_cell("ex06_rotate_pair")
    broken = src.replace("np.cos(angle), np.sin(angle)", "np.cos(-angle), np.sin(-angle)")
    assert broken != src
    ns = {"np": np}
    exec(broken, ns)  # noqa: S102 - our own notebook, edited
    verdict = verdict_of("ex06_rotate_pair", ns["rotate_pair"], seed=0)
    assert verdict.outcome is Outcome.WRONG_VALUE and "sign" in verdict.message()


def test_the_06_solution_with_positions_ignored_gets_a_hint_naming_the_positions():
    ns = {"np": np}
    exec(_solution_cell("ex06_pair_frequencies"), ns)  # noqa: S102
    src = _solution_cell("ex06_apply_rope")
    broken = src.replace("np.asarray(positions, dtype=float)", "np.arange(q.shape[-2], dtype=float)")
    assert broken != src
    exec(broken, ns)  # noqa: S102
    verdict = verdict_of("ex06_apply_rope", ns["apply_rope"], seed=0)
    assert verdict.outcome is Outcome.WRONG_VALUE and "positions" in verdict.hint


# --------------------------------------------------- one judge (the cases of the grader issue)
def _shipped_plain() -> dict:
    """_plain as the grader runs it in the student's kernel: from its source text alone."""
    ns: dict = {}
    exec(compile(inspect.getsource(_plain), "shipped", "exec"), ns)  # noqa: S102 - our own source
    return ns


def _grader_verdict(gid: str, ns: dict, seed: int = 0):
    """What the grader decides when it judges at the check cell: outputs computed in the
    kernel by the shipped code, judged in its own process by the same judge."""
    ex = get(gid)
    shipped = _shipped_plain()
    answer = ns.get(ex.name)
    if ex.kind == "value":
        return judge(ex, shipped["to_plain"](answer))
    if answer is None:
        return judge(ex, {"missing": True})
    cases = ex.draw_cases(np.random.default_rng(seed))
    return judge(ex, [shipped["run_case"](answer, c) for c in cases], cases)


def _both_verdicts(gid: str, ns: dict):
    learner = verdict_of(gid, ns.get(get(gid).name), seed=0)
    return learner, _grader_verdict(gid, ns)


def test_one_judge_helper_defined_later():
    """06: rotate_pair calling a helper that only a later cell defines fails at its check
    cell, for the learner and the grader alike."""
    ns = {"np": np}
    exec("def rotate_pair(pair, angle):\n    return helper(pair, angle)\n", ns)  # noqa: S102
    learner, grader = _both_verdicts("ex06_rotate_pair", ns)
    assert learner == grader and learner.outcome is Outcome.ERROR and learner.points == 0
    assert "NameError" in learner.message()


def test_one_judge_complex_answer():
    """A complex answer is refused by both, with the reason, never silently made real."""
    ns = {"rotated_d4": np.conj(np.exp(2j)) * np.exp(3j) * np.ones(4)}
    learner, grader = _both_verdicts("ex06_rotated_d4", ns)
    assert learner == grader and learner.outcome is Outcome.NOT_REAL
    assert "complex" in learner.message()
    ns = {"rotated_d4": np.array([1.0, 0.0, 1.0, 0.0]) - 0.64j}
    assert _grader_verdict("ex06_rotated_d4", ns).outcome is Outcome.NOT_REAL


def test_one_judge_ragged_list():
    ns = {"rotated_d4": [[1.0, 2.0], [3.0]]}
    learner, grader = _both_verdicts("ex06_rotated_d4", ns)
    assert learner == grader and learner.outcome is Outcome.RAGGED
    ns = {"rotate_pair": lambda pair, angle: [[1.0], [2.0, 3.0]]}
    learner, grader = _both_verdicts("ex06_rotate_pair", ns)
    assert learner == grader and learner.outcome is Outcome.RAGGED


def test_one_judge_rebinding_after_the_check_cell():
    """09: a helper `omega(d, base)` used by exercise 1 passes at its check cell; a later cell
    rebinds `omega` to an array. Judged at the check cell (as the learner's check and the
    grader do), the answer is right; judged after the notebook, it would fail."""
    ns = {"np": np, "math": __import__("math")}
    exec(  # noqa: S102
        "def omega(d, base):\n    return base ** (-np.arange(0, d, 2) / d)\n"
        + _solution_09_yarn().replace("inv = base ** (-np.arange(0, d, 2) / d)", "inv = omega(d, base)"),
        ns,
    )
    learner, grader = _both_verdicts("ex09_yarn_inv_freq", ns)
    assert learner == grader and learner.outcome is Outcome.RIGHT
    exec("omega = 10000.0 ** (-np.arange(0, 128, 2) / 128)", ns)  # noqa: S102 - exercise 2's cell
    late = _grader_verdict("ex09_yarn_inv_freq", ns)
    assert late.outcome is Outcome.ERROR  # why the grader must judge at the check cell


def test_one_judge_helper_redefined_by_a_later_course_cell():
    """08: the learner's helper `rotate(x1, x2, angle)` passes at the check cell; the course's
    locked cell below defines its own `rotate(x, positions)`."""
    ns = {"np": np}
    exec(  # noqa: S102
        "def rotate(x1, x2, angle):\n"
        "    return x1 * np.cos(angle) - x2 * np.sin(angle), x1 * np.sin(angle) + x2 * np.cos(angle)\n"
        "def rotate_split_half(x, position):\n"
        "    half = len(x) // 2\n"
        "    angle = position * 10000.0 ** (-np.arange(0, len(x), 2) / len(x))\n"
        "    a, b = rotate(x[:half], x[half:], angle)\n"
        "    return np.concatenate([a, b])\n",
        ns,
    )
    learner, grader = _both_verdicts("ex08_rotate_split_half", ns)
    assert learner == grader and learner.outcome is Outcome.RIGHT


def _solution_09_yarn() -> str:
    nb = nbformat.read(_path("solutions", "09"), as_version=4)
    src = next(
        c.source for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "ex09_yarn_inv_freq"
    )
    return "\n".join(line for line in src.splitlines() if "### " not in line) + "\n"


@pytest.mark.parametrize(
    "gid", ["ex06_score", "ex06_apply_rope", "ex07_gap_scores", "ex08_split_half_rows", "ex09_unseen_pairs"]
)
def test_one_judge_on_every_mutant(gid):
    """A property over wrong answers: for each known wrong answer the learner's check and the
    grader's path give equal verdicts (outcome, points, failing case, hint)."""
    for mutant in get(gid).mutants:
        learner, grader = _both_verdicts(gid, {get(gid).name: mutant.fn})
        assert learner == grader, (gid, mutant.name)
        assert learner.points == 0


def test_plain_data_round_trips_through_json():
    """What the kernel sends back is JSON text: the verdict from the decoded outputs is the same."""
    import json

    ex = get("ex06_apply_rope")
    cases = ex.draw_cases(np.random.default_rng(0))
    outputs = [
        to_plain(ex.reference(**{k: np.asarray(v) if isinstance(v, list) else v for k, v in c.items()}))
        for c in cases
    ]
    outputs[1] = {"error": "TypeError: boom"}
    assert judge(ex, json.loads(json.dumps(outputs)), cases) == judge(ex, outputs, cases)


def test_the_grading_guide_lists_every_exercise():
    text = (ROOT / "docs" / "grading.md").read_text(encoding="utf-8")
    section = text[text.index("## 7. The exercises"):]
    for ex in all_exercises():
        row = f"| {ex.notebook} | {ex.title} |"
        assert row in section, row
        line = next(line for line in section.splitlines() if line.startswith(row))
        assert f"| {ex.points:g} |" in line


@pytest.mark.parametrize("nb", NOTEBOOKS)
def test_exercise_text_has_no_control_characters(nb):
    """A lost backslash in a formula (\\v, \\b, \\f) turns into a control character."""
    for where in ("solutions", "notebooks"):
        for cell in nbformat.read(_path(where, nb), as_version=4).cells:
            bad = [ch for ch in cell.source if ord(ch) < 32 and ch not in "\n\t"]
            assert not bad, (where, nb, cell.source[:80])
