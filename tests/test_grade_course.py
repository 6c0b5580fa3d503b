"""What the graded kernel may import, what a submission may weigh, and what a folder must hold.

* A right answer built on the course's own helpers gets its points (the kernel imports the
  course); a function the exercise asks the learner to write is hidden, and calling it says
  so in the feedback.
* A solved notebook with large stored outputs is graded (outputs are dropped before running).
* An empty folder, or one without notebooks, exits non-zero saying what it found.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat import v4

from lessons.exercises import all_exercises
from lessons.grade.hiding import HIDDEN_ERROR, build_course_copy, hidden_for
from lessons.grade.sandbox import bwrap_path, bwrap_works

ROOT = Path(__file__).resolve().parent.parent
_BWRAP = bwrap_path()
UNSANDBOXED = [] if (_BWRAP and bwrap_works(_BWRAP)[0]) else ["--allow-unsandboxed"]
SOLUTION_09 = ROOT / "solutions" / "09_longer_contexts.ipynb"
SOLUTION_06 = ROOT / "solutions" / "06_exercises.ipynb"


def grade(*args, timeout=900) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "lessons.grade", *map(str, args), *UNSANDBOXED]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def _replace(nb, marker: str, old: str, new: str):
    cell = next(c for c in nb.cells if c.cell_type == "code" and marker in c.source)
    assert old in cell.source, (old, cell.source)
    cell.source = cell.source.replace(old, new)
    return nb


def _auto_max(notebook: str) -> float:
    return sum(e.points for e in all_exercises(notebook) if e.kind != "written")


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("course")
    subs = tmp / "subs"
    subs.mkdir()
    # 09's second exercise answered with the course's pair_frequencies (imported at the top).
    nb = _replace(nbformat.read(SOLUTION_09, as_version=4), "def unseen_pairs",
                  "omega = base ** (-np.arange(0, d, 2) / d)", "omega = pair_frequencies(d, base)")
    nbformat.write(nb, subs / "helper.ipynb")
    # 09's first exercise answered by calling the function it asks for: hidden while graded.
    nb = nbformat.read(SOLUTION_09, as_version=4)
    cell = next(c for c in nb.cells if c.cell_type == "code" and "def yarn_inv_freq" in c.source)
    cell.source = ("from lessons.scaling import yarn_frequencies\n\n"
                   "def yarn_inv_freq(d, factor, original_length):\n"
                   "    return yarn_frequencies(d, factor, original_length)[0]\n")
    nbformat.write(nb, subs / "shortcut.ipynb")
    out = tmp / "out"
    done = grade(subs, "--out", out, "--notebook", "09", "--seed", "5")
    assert done.returncode == 0, done.stderr
    records = {p.stem: json.loads(p.read_text()) for p in (out / "records").glob("*.json")}
    return {"out": out, "records": records}


def test_a_right_answer_built_on_the_course_helpers_gets_its_points(graded):
    rec = graded["records"]["helper"]
    assert rec["exercises"]["ex09_unseen_pairs"]["outcome"] == "RIGHT", rec["exercises"]["ex09_unseen_pairs"]
    assert rec["total"] == _auto_max("09") and rec["grading"] == "ok"
    assert "errors in cell" not in rec["result"]


def test_calling_the_function_an_exercise_asks_for_says_so(graded):
    rec = graded["records"]["shortcut"]
    ex = rec["exercises"]["ex09_yarn_inv_freq"]
    assert ex["points"] == 0 and ex["outcome"] == "ERROR"
    assert HIDDEN_ERROR in ex["message"] and "asks you to write" in ex["message"]
    feedback = (graded["out"] / "feedback" / "shortcut.md").read_text()
    assert "asks you to write yarn_frequencies yourself" in feedback.replace("\n", " ")


def test_the_course_copy_has_no_answer_keys_and_no_grader(tmp_path):
    copy = build_course_copy(tmp_path, hidden_for(all_exercises("06"))) / "lessons"
    assert not (copy / "grade").exists()
    assert sorted(p.name for p in (copy / "exercises").iterdir()) == ["__init__.py"]
    rope = (copy / "rope.py").read_text()
    assert HIDDEN_ERROR in rope and "def apply_rope" in rope
    source = (ROOT / "lessons" / "rope.py").read_text()
    body = source[source.index("def apply_rope"):].split("\ndef ", 1)[0]
    assert body.strip().splitlines()[-1].strip() not in rope  # the hidden body is not in the copy
    assert (copy / "scaling.py").read_text().count(HIDDEN_ERROR) == 0  # not hidden while grading 06


def test_a_notebook_with_large_outputs_is_graded(tmp_path):
    nb = nbformat.read(SOLUTION_06, as_version=4)
    blob = "x" * (1 << 20)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = [v4.new_output("stream", name="stdout", text=blob)]
    subs = tmp_path / "subs"
    subs.mkdir()
    nbformat.write(nb, subs / "big.ipynb")
    assert (subs / "big.ipynb").stat().st_size > 20 << 20  # over the old 20 MB limit
    done = grade(subs, "--out", tmp_path / "out", "--notebook", "06", "--seed", "1")
    assert done.returncode == 0, done.stderr
    rec = json.loads((tmp_path / "out" / "records" / "big.json").read_text())
    assert rec["total"] == _auto_max("06") and rec["grading"] == "ok"


def test_an_empty_folder_exits_non_zero_saying_what_it_found(tmp_path):
    (tmp_path / "subs").mkdir()
    done = grade(tmp_path / "subs", "--out", tmp_path / "out")
    assert done.returncode != 0
    assert "no notebook to grade" in done.stderr and "it is empty" in done.stderr
    assert "expected notebooks (*.ipynb)" in done.stderr
    (tmp_path / "subs" / "alice.pdf").write_bytes(b"%PDF")
    done = grade(tmp_path / "subs", "--out", tmp_path / "out")
    assert done.returncode != 0 and "1 file (1 .pdf" in done.stderr
    assert not (tmp_path / "out" / "gradebook.csv").exists()


def test_notebooks_that_match_no_course_notebook_exit_non_zero(tmp_path):
    (tmp_path / "subs").mkdir()
    (tmp_path / "subs" / "homework.ipynb").write_text(nbformat.writes(v4.new_notebook()))
    done = grade(tmp_path / "subs", "--out", tmp_path / "out")
    assert done.returncode == 1
    assert "could be matched to a course notebook" in done.stderr and "--notebook NN" in done.stderr
    with open(tmp_path / "out" / "gradebook.csv", newline="") as fh:
        row = next(csv.DictReader(fh))
    assert row["grading"].startswith("not graded: cannot tell which notebook")


def test_shipped_course_cells_match_the_notebooks():
    done = subprocess.run([sys.executable, "-m", "lessons.grade.course", "--check"], cwd=ROOT,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr



def test_every_answerable_exercise_names_the_course_functions_it_hides_and_they_exist():
    from lessons.grade.hiding import check_hides

    exercises = all_exercises()
    check_hides(exercises)  # raises, naming the exercise, for a name not in the course
    named = {ex.grade_id: ex.hides for ex in exercises}
    assert "lessons.rope.apply_rope" in named["ex06_apply_rope"]
    assert "lessons.frequencies.pair_frequencies" in named["ex06_pair_frequencies"]
    assert "lessons.scaling.yarn_frequencies" in named["ex09_yarn_inv_freq"]
    # 09's second exercise hides nothing a learner may build on: pair_frequencies stays usable
    assert "lessons.frequencies.pair_frequencies" not in hidden_for(all_exercises("09"))


def test_a_hidden_name_that_is_not_in_the_course_is_refused_with_the_exercise_named():
    from dataclasses import replace

    from lessons.exercises import get
    from lessons.grade.hiding import HidesError, check_hides

    wrong = replace(get("ex06_apply_rope"), hides=("lessons.rope.no_such_function",))
    with pytest.raises(HidesError, match="ex06_apply_rope"):
        check_hides([wrong])
