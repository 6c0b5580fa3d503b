"""Grading from an installed wheel, with no source checkout in sight (slow: builds a venv).

The course is built into a wheel from a copy of its sources, installed (not editable) into a
fresh virtual environment with the packages grading needs, and ``python -m lessons.grade``
is run from an empty folder: the solutions of 06-09 get every automatically graded point,
the student notebooks none, and no status blames the student for the course's own cells.
"""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lessons.exercises import all_exercises
from lessons.grade.sandbox import bwrap_path, bwrap_works

ROOT = Path(__file__).resolve().parent.parent
_BWRAP = bwrap_path()
UNSANDBOXED = [] if (_BWRAP and bwrap_works(_BWRAP)[0]) else ["--allow-unsandboxed"]
RUNTIME = ["numpy>=1.24,<3", "matplotlib>=3.7,<4", "ipykernel>=6.25,<8", "nbformat>=5.9,<6",
           "nbclient>=0.10,<0.12"]


def _run(cmd, cwd, timeout=900):
    done = subprocess.run([str(c) for c in cmd], cwd=cwd, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{cmd}\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
    return done


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    src.mkdir()
    shutil.copytree(ROOT / "lessons", src / "lessons", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", tmp / "dist", src], tmp)
    wheel = next((tmp / "dist").glob("*.whl"))
    venv = tmp / "venv"
    _run([sys.executable, "-m", "venv", venv], tmp)
    python = venv / "bin" / "python"
    _run([python, "-m", "pip", "install", "-q", *RUNTIME], tmp, timeout=1800)
    _run([python, "-m", "pip", "install", "-q", "--no-deps", wheel], tmp)
    return tmp, python


def test_the_installed_course_grades_solutions_full_and_student_notebooks_zero(installed):
    tmp, python = installed
    where = _run([python, "-c", "import lessons.grade, pathlib; print(pathlib.Path(lessons.grade.__file__))"],
                 tmp).stdout.strip()
    assert str(tmp / "venv") in where and str(ROOT) not in where  # the wheel, not the checkout
    subs = tmp / "subs"
    notebooks = sorted({e.notebook for e in all_exercises()})
    for nb in notebooks:
        for who, folder in (("solved", "solutions"), ("student", "notebooks")):
            for path in (ROOT / folder).glob(f"{nb}_*.ipynb"):
                (subs / f"{who}{nb}").mkdir(parents=True, exist_ok=True)
                shutil.copy(path, subs / f"{who}{nb}" / path.name)
    work = tmp / "elsewhere"
    work.mkdir()
    _run([python, "-m", "lessons.grade", subs, "--out", tmp / "out", "--seed", "2", *UNSANDBOXED], work,
         timeout=1800)
    with open(tmp / "out" / "gradebook.csv", newline="") as fh:
        rows = {r["student"]: r for r in csv.DictReader(fh)}
    records = {p.stem: json.loads(p.read_text()) for p in (tmp / "out" / "records").glob("*.json")}
    assert sorted(rows) == sorted(f"{who}{nb}" for nb in notebooks for who in ("solved", "student"))
    for nb in notebooks:
        auto = sum(e.points for e in all_exercises(nb) if e.kind != "written")
        solved, student = records[f"solved{nb}"], records[f"student{nb}"]
        assert solved["total"] == auto, (nb, solved["result"], solved["exercises"])
        assert student["total"] == 0, (nb, student["result"])
        for rec in (solved, student):
            assert rec["grading"] == "ok", (nb, rec["grading"])
            assert "errors in cell" not in rec["result"], (nb, rec["result"])
