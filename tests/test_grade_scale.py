"""Grading at scale: shards on a batch system, collected, equal one plain run; processes bounded."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat import v4

from lessons.exercises import all_exercises
from lessons.grade.sandbox import PidsCgroup, bwrap_path, bwrap_works

ROOT = Path(__file__).resolve().parent.parent
_BWRAP = bwrap_path()
SANDBOXED = bool(_BWRAP) and bwrap_works(_BWRAP)[0]
UNSANDBOXED = [] if SANDBOXED else ["--allow-unsandboxed"]
SOLUTION = ROOT / "solutions" / "06_exercises.ipynb"
STUDENT = ROOT / "notebooks" / "06_exercises.ipynb"
AUTO = sum(e.points for e in all_exercises("06") if e.kind != "written")


def command(*args) -> list[str]:
    return [sys.executable, "-m", "lessons.grade", *map(str, args), *UNSANDBOXED]


def grade(*args, timeout=900) -> subprocess.CompletedProcess:
    return subprocess.run(command(*args), cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def _submissions(folder: Path) -> None:
    folder.mkdir()
    solution = nbformat.read(SOLUTION, as_version=4)
    wrong = nbformat.read(SOLUTION, as_version=4)
    cell = next(c for c in wrong.cells if "def rotate_pair" in c.source)
    cell.source = cell.source.replace("np.sin(angle)", "-np.sin(angle)")
    for i in range(7):
        nb = (solution, wrong, nbformat.read(STUDENT, as_version=4))[i % 3]
        nbformat.write(nb, folder / f"student{i}.ipynb")


def test_three_shards_in_parallel_then_collect_equal_one_run(tmp_path):
    subs = tmp_path / "subs"
    _submissions(subs)
    plain = grade(subs, "--out", tmp_path / "plain", "--notebook", "06", "--seed", "42")
    assert plain.returncode == 0, plain.stderr
    shared = tmp_path / "shared"
    procs = [subprocess.Popen(command(subs, "--out", shared, "--notebook", "06", "--seed", "42",
                                      "--shard", f"{k}/3", "--jobs", "1"),
                              cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for k in range(3)]
    for p in procs:
        _, err = p.communicate(timeout=900)
        assert p.returncode == 0, err
    assert not (shared / "gradebook.csv").exists()  # a shard writes only its records
    assert len(list((shared / "records").glob("*.json"))) == 7  # every student in exactly one shard
    done = grade(subs, "--out", shared, "--collect")
    assert done.returncode == 0, done.stderr
    assert (shared / "gradebook.csv").read_text() == (tmp_path / "plain" / "gradebook.csv").read_text()
    for p in (tmp_path / "plain" / "records").glob("*.json"):
        a, b = json.loads(p.read_text()), json.loads((shared / "records" / p.name).read_text())
        assert a["exercises"] == b["exercises"] and a["total"] == b["total"], p.name


def test_collect_names_the_submissions_without_a_record(tmp_path):
    subs = tmp_path / "subs"
    _submissions(subs)
    out = tmp_path / "out"
    first = grade(subs, "--out", out, "--notebook", "06", "--seed", "1", "--shard", "0/3")
    assert first.returncode == 0, first.stderr
    graded = {p.stem for p in (out / "records").glob("*.json")}
    assert 0 < len(graded) < 7
    done = grade(subs, "--out", out, "--collect")
    assert done.returncode == 1
    missing = sorted({f"student{i}" for i in range(7)} - graded)
    assert f"{len(missing)} submission(s) have no record yet: {', '.join(missing)}" in done.stderr
    assert (out / "gradebook.csv").read_text().count("\n") == len(graded) + 1  # what is there is written
    assert grade(subs, "--out", out, "--notebook", "06", "--shard", "1/3").returncode == 2  # no --seed


@pytest.mark.skipif(not SANDBOXED or (os.geteuid() == 0 and PidsCgroup.base() is None),
                    reason="no process limit applies here (no sandbox, or root without a pids cgroup)")
def test_a_process_spawner_is_stopped_at_the_limit_and_keeps_its_points(tmp_path):
    nb = nbformat.read(SOLUTION, as_version=4)
    first = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code")
    nb.cells.insert(first + 1, v4.new_code_cell(
        "import subprocess\n"
        "procs = [subprocess.Popen(['sleep', '5']) for _ in range(3000)]\n"))
    subs = tmp_path / "subs"
    subs.mkdir()
    nbformat.write(nb, subs / "spawner.ipynb")
    done = grade(subs, "--out", tmp_path / "out", "--notebook", "06", "--seed", "3", "--max-processes", "64")
    assert done.returncode == 0, done.stderr
    rec = json.loads((tmp_path / "out" / "records" / "spawner.json").read_text())
    assert rec["total"] == AUTO, rec["result"]
    assert rec["cell_errors"] == {str(first + 2): "BlockingIOError"}, rec["cell_errors"]
    assert rec["grading"] == "ok"
