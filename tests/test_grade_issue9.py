"""The grader's side of the exercises that teach: write-the-tests graded by hidden mutants in
the sandbox, hints in the feedback, --reveal, and written answers graded from a sheet."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from lessons.exercises import all_exercises, get

ROOT = Path(__file__).resolve().parent.parent
SOLUTION = ROOT / "solutions" / "06_exercises.ipynb"
from lessons.grade.sandbox import bwrap_path, bwrap_works  # noqa: E402

_BWRAP = bwrap_path()
UNSANDBOXED = [] if (_BWRAP and bwrap_works(_BWRAP)[0]) else ["--allow-unsandboxed"]
CHECKER = get("ex06_check_rope")
AUTO = sum(e.points for e in all_exercises("06") if e.kind != "written")
WRITTEN = [e for e in all_exercises("06") if e.kind == "written"]


def grade(*args, timeout=900) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "lessons.grade", *map(str, args), *UNSANDBOXED]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def _cell(nb, marker: str):
    return next(c for c in nb.cells if c.cell_type == "code" and marker in c.source)


def _with(marker: str, old: str, new: str):
    nb = nbformat.read(SOLUTION, as_version=4)
    cell = _cell(nb, marker)
    assert old in cell.source, (old, cell.source)
    cell.source = cell.source.replace(old, new)
    return nb


def _checker(body: str):
    nb = nbformat.read(SOLUTION, as_version=4)
    cell = _cell(nb, f"def {CHECKER.name}(")
    cell.source = cell.source.replace(f"def {CHECKER.name}(", "def _real_check(") + "\n\n" + body
    return nb


HANG_ONCE = f'''
_hung = []


def {CHECKER.name}(rope):
    ok = _real_check(rope)
    if not ok and not _hung:  # hangs on the first bug it sees: loses that one
        _hung.append(1)
        while True:
            pass
    return ok
'''


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("issue9")
    subs = tmp / "subs"
    subs.mkdir()
    nbs = {
        "solution": nbformat.read(SOLUTION, as_version=4),
        "accept_all": _checker(f"def {CHECKER.name}(rope):\n    return True\n"),
        "reject_all": _checker(f"def {CHECKER.name}(rope):\n    return False\n"),
        "not_bool": _checker(f"def {CHECKER.name}(rope):\n    return 'yes'\n"),
        "hang_once": _checker(HANG_ONCE),
        "sign_flipped": _with("def rotate_pair", "c, s = np.cos(angle), np.sin(angle)",
                              "c, s = np.cos(-angle), np.sin(-angle)"),
        "positions_ignored": _with("def apply_rope", "np.asarray(positions, dtype=float)",
                                   "np.arange(q.shape[-2], dtype=float)"),
        "unrotated_value": _with("rotated_d4 =", "rotated_d4 = apply_rope(", "rotated_d4 = 0 * apply_rope("),
    }
    for name, nb in nbs.items():
        nbformat.write(nb, subs / f"{name}.ipynb")
    out = tmp / "out"
    done = grade(subs, "--out", out, "--notebook", "06", "--seed", "9", "--timeout", "300")
    assert done.returncode == 0, done.stderr
    records = {p.stem: json.loads(p.read_text()) for p in (out / "records").glob("*.json")}
    return {"subs": subs, "out": out, "records": records}


def _ex(graded, student, gid):
    return graded["records"][student]["exercises"][gid]


def test_write_the_tests_is_graded_by_the_hidden_mutants(graded):
    gid, n = CHECKER.grade_id, len(CHECKER.hidden_mutants)
    solution = _ex(graded, "solution", gid)
    assert solution["points"] == CHECKER.points and len(solution["caught"]) == n
    assert _ex(graded, "accept_all", gid)["points"] == 0
    assert _ex(graded, "reject_all", gid)["points"] == 0
    assert _ex(graded, "reject_all", gid)["outcome"] == "REJECTS_CORRECT"
    assert _ex(graded, "not_bool", gid)["points"] == 0
    hang = _ex(graded, "hang_once", gid)
    assert hang["points"] == pytest.approx(CHECKER.points * (n - 1) / n) and len(hang["missed"]) == 1


def test_hidden_mutants_are_never_named_to_the_student(graded):
    for student in ("solution", "accept_all", "hang_once"):
        text = (graded["out"] / "feedback" / f"{student}.md").read_text()
        for m in CHECKER.hidden_mutants:
            assert m.hint not in text


def test_the_feedback_names_the_bug(graded):
    assert "sign" in _ex(graded, "sign_flipped", "ex06_rotate_pair")["message"]
    text = (graded["out"] / "feedback" / "sign_flipped.md").read_text()
    section = text.split(f"## {get('ex06_rotate_pair').title}")[1].split("## ")[0]
    assert "sign" in section
    message = _ex(graded, "positions_ignored", "ex06_apply_rope")["message"]
    assert "position" in message.split("hint:")[1]


def test_a_value_exercise_never_reveals_its_expected_value_unless_asked(graded, tmp_path):
    expected = get("ex06_rotated_d4").expected_value()
    shown = f"{expected[0]:.8g}"
    text = (graded["out"] / "feedback" / "unrotated_value.md").read_text()
    assert _ex(graded, "unrotated_value", "ex06_rotated_d4")["points"] == 0
    assert shown not in text
    done = grade("--out", graded["out"], "--collect", "--reveal")
    assert done.returncode == 0, done.stderr
    assert shown in (graded["out"] / "feedback" / "unrotated_value.md").read_text()
    done = grade("--out", graded["out"], "--collect")  # back to the feedback for before the deadline
    assert shown not in (graded["out"] / "feedback" / "unrotated_value.md").read_text()


def _sheet(graded) -> list[dict]:
    with open(graded["out"] / "manual.csv", newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_written_answers_are_merged_from_the_sheet(graded, tmp_path):
    rows = _sheet(graded)
    assert {r["question"] for r in rows} == {e.grade_id for e in WRITTEN}
    assert all(r["points"] == "" for r in rows)
    before = graded["records"]["solution"]
    assert before["total"] == AUTO and "to grade by hand" in before["result"]
    filled = tmp_path / "filled.csv"
    with open(filled, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        for r in rows:
            if r["student"] == "solution":
                r["points"] = str(get(r["question"]).points)
                r["comment"] = f"well argued ({r['question']})"
            w.writerow(r)
    done = grade("--out", graded["out"], "--collect", "--manual", filled)
    assert done.returncode == 0, done.stderr
    with open(graded["out"] / "gradebook.csv", newline="") as fh:
        table = {r["student"]: r for r in csv.DictReader(fh)}
    full = AUTO + sum(e.points for e in WRITTEN)
    assert float(table["solution"]["total"]) == full and table["solution"]["result"] == "full marks"
    assert float(table["accept_all"]["total"]) == graded["records"]["accept_all"]["total"]
    feedback = (graded["out"] / "feedback" / "solution.md").read_text()
    for e in WRITTEN:
        assert f"Comment: well argued ({e.grade_id})" in feedback
    assert f"**{full:g} of {full:g} points.**" in feedback


@pytest.mark.parametrize("change, words", [
    (lambda r: r.update(points="7"), "points 7 outside 0.."),
    (lambda r: r.update(points="-1"), "points -1 outside 0.."),
    (lambda r: r.update(points="two"), "not a number"),
    (lambda r: r.update(student="mallory"), "no graded submission of a student 'mallory'"),
    (lambda r: r.update(question="ex06_nothing"), "has no written question 'ex06_nothing'"),
])
def test_a_wrong_sheet_is_refused_with_its_line(graded, tmp_path, change, words):
    rows = _sheet(graded)
    change(rows[2])
    bad = tmp_path / "bad.csv"
    with open(bad, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    before = (graded["out"] / "gradebook.csv").read_text()
    done = grade("--out", graded["out"], "--collect", "--manual", bad)
    assert done.returncode == 2
    assert "bad.csv row 4 " in done.stderr and words in done.stderr, done.stderr
    assert (graded["out"] / "gradebook.csv").read_text() == before
