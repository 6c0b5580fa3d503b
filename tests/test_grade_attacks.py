"""Attacks from an outside review of the grader, each graded in ONE run and asserted.

* a kernel that plants symlinks where the grader writes (its run folder) and a startup file
  in its home, then dies: the restarted kernel gets fresh folders, the grader follows no link;
* lone surrogates (valid JSON, not valid text) in a code cell and a written answer: every row
  is written, the attacker's and the classmates';
* a checker that walks up to the probe's frame to run every candidate and vote: it sees one
  candidate at a time and gains nothing;
* right answers that used to get 0: a renamed function passed to ``check``, written answers
  whose cells lost their nbgrader metadata, an answered cell followed by an empty copy.
"""

from __future__ import annotations

import copy
import csv
import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat import v4

from lessons.exercises import all_exercises
from lessons.grade.sandbox import bwrap_path, bwrap_works

ROOT = Path(__file__).resolve().parent.parent
SOLUTION = ROOT / "solutions" / "06_exercises.ipynb"
BLANK = ROOT / "notebooks" / "06_exercises.ipynb"
_BWRAP = bwrap_path()
SANDBOXED = bool(_BWRAP) and bwrap_works(_BWRAP)[0]
UNSANDBOXED = [] if SANDBOXED else ["--allow-unsandboxed"]


def _read(path: Path):
    return nbformat.read(path, as_version=4)


def _index(nb, text: str) -> int:
    return next(i for i, c in enumerate(nb.cells) if text in c.source)


def _escape(target: Path):
    """The solution, plus a cell that plants links to ``target`` and a startup file, then dies;
    a later cell spoils rotated_d4 if the startup file ran in the restarted kernel."""
    nb = _read(SOLUTION)
    plant = f'''
import os
from ipykernel.connect import get_connection_file
run = os.path.dirname(get_connection_file())
for name in ("kernel.log", "kernel.json"):
    path = os.path.join(run, name)
    if os.path.lexists(path):
        os.remove(path)
    os.symlink({str(target)!r}, path)
startup = os.path.expanduser("~/.ipython/profile_default/startup")
os.makedirs(startup, exist_ok=True)
with open(os.path.join(startup, "00-l13.py"), "w") as fh:
    fh.write("open(__import__('os').path.expanduser('~/startup_ran'), 'w').close()\\n")
os._exit(0)
'''
    at = _index(nb, 'check("ex06_rotated_d4"')
    nb.cells.insert(at, v4.new_code_cell(plant))
    nb.cells.insert(at + 1, v4.new_code_cell(
        "import os\nif os.path.exists(os.path.expanduser('~/startup_ran')):\n    rotated_d4 = 0.0\n"))
    return nb


STEAL = r'''
import sys, numpy as _np
def check_rope(rope):
    f = sys._getframe(1)
    while f is not None and not ("candidates" in f.f_locals and "key" in f.f_locals):
        f = f.f_back
    if f is None:
        return True
    rng = _np.random.default_rng(0)
    q, k, v = rng.normal(size=(1, 2, 5, 8)), rng.normal(size=(1, 2, 7, 8)), rng.normal(size=(1, 2, 7, 8))
    qp, kp = _np.array([13., 20, 31, 40, 57]), _np.arange(7.) * 9 + 3
    outs = {}
    for key, src in f.f_locals["candidates"]:
        ns = {"np": _np, "numpy": _np}
        exec(src, ns)
        outs[key] = [_np.asarray(o) for o in ns["candidate"](q, k, v, qp, kp)]
    votes = {a: sum(_np.allclose(outs[a][j], outs[b][j]) for b in outs if b != a for j in range(3))
             for a in outs}
    return f.f_locals["key"] == max(votes, key=votes.get)
'''


FILL = r'''
import os
written = 0
try:
    for n in range(16):  # up to 2 GB in files of 128 MB (one file may hold 256 MB): the home's size stops it
        with open(os.path.expanduser(f"~/fill{n}.bin"), "wb") as fh:
            for _ in range(4):
                fh.write(b"\0" * (32 << 20))
                fh.flush()
                written += 32 << 20
except OSError:
    pass
if written > (512 << 20):
    rotated_d4 = 0.0
'''


FILL_RUN = r'''
import os, time
from ipykernel.connect import get_connection_file
run = os.path.dirname(get_connection_file())
for n in range(40):  # 32 MB every 50 ms, 1.25 GB in 2 s unless stopped
    with open(os.path.join(run, f"fill{n}.bin"), "wb") as fh:
        fh.write(b"\0" * (32 << 20))
    time.sleep(0.05)
rotated_d4 = 0.0  # only reached when the kernel was not stopped
'''

DEEP = r'''
import os
from ipykernel.connect import get_connection_file
fd = os.open(os.path.dirname(get_connection_file()), os.O_RDONLY)
for name, levels in (("d", 3000), ("x" * 250, 20)):  # past the recursion limit, past PATH_MAX
    top = os.dup(fd)
    for _ in range(levels):
        os.mkdir(name, dir_fd=top)
        inner = os.open(name, os.O_RDONLY, dir_fd=top)
        os.close(top)
        top = inner
    if name != "d":
        os.fchdir(top)
        for k in range(6):  # 600 MB where a walk by path cannot see them
            with open(f"f{k}", "wb") as fh:
                fh.write(b"\0" * (100 << 20))
    os.close(top)
'''

HOG = r'''
import subprocess, sys
hogs = [subprocess.Popen([sys.executable, "-c", "x = b'1' * (700 << 20); import time; time.sleep(3)"])
        for _ in range(3)]
if all(h.wait() == 0 for h in hogs):  # 2.1 GB at once under a limit of 1 GB per process
    rotated_d4 = 0.0
'''


def _submissions(folder: Path, target: Path) -> None:
    folder.mkdir()
    nbformat.write(_read(SOLUTION), folder / "good.ipynb")
    if SANDBOXED:
        nbformat.write(_escape(target), folder / "escape.ipynb")
        nb = _read(SOLUTION)  # writes into its home until it is full
        nb.cells.insert(_index(nb, 'check("ex06_rotated_d4"'), v4.new_code_cell(FILL))
        nbformat.write(nb, folder / "fill.ipynb")
        nb = _read(SOLUTION)  # writes into its run folder (on the grader's disk) until stopped
        nb.cells.insert(_index(nb, 'check("ex06_rotated_d4"'), v4.new_code_cell(FILL_RUN))
        nbformat.write(nb, folder / "fill_run.ipynb")
        nb = _read(SOLUTION)  # a tree 3000 levels deep and 600 MB past PATH_MAX in the run folder
        nb.cells.insert(_index(nb, 'check("ex06_rotated_d4"'), v4.new_code_cell(DEEP))
        nbformat.write(nb, folder / "deep.ipynb")
        nb = _read(SOLUTION)  # three processes of 700 MB each
        nb.cells.insert(_index(nb, 'check("ex06_rotated_d4"'), v4.new_code_cell(HOG))
        nbformat.write(nb, folder / "hog.ipynb")
    # Lone surrogates: written with json (ensure_ascii) as any tool may write "\udcff".
    nb = _read(BLANK)
    nb.cells.append(v4.new_code_cell("1 / 0  # \udcff"))
    answer = next(c for c in nb.cells
                  if (c.metadata.get("nbgrader") or {}).get("grade_id") == "ex06_gap_question")
    answer.source = "the same distance \ud800"
    (folder / "surrogate.ipynb").write_text(json.dumps(nb, ensure_ascii=True), encoding="ascii")
    # The frame-walking checker.
    nb = _read(BLANK)
    nb.cells[_index(nb, "def check_rope")] = v4.new_code_cell(STEAL)
    nbformat.write(nb, folder / "thief.ipynb")
    # A renamed function passed to check.
    nb = _read(SOLUTION)
    i = _index(nb, "def rotate_pair(")
    nb.cells[i].source = nb.cells[i].source.replace("def rotate_pair(", "def turn_pair(")
    j = _index(nb, 'check("ex06_rotate_pair"')
    nb.cells[j].source = 'check("ex06_rotate_pair", turn_pair)'
    nbformat.write(nb, folder / "renamed.ipynb")
    # Every cell's nbgrader metadata dropped.
    nb = _read(SOLUTION)
    for cell in nb.cells:
        cell.metadata.pop("nbgrader", None)
    nbformat.write(nb, folder / "nometa.ipynb")
    # The first written answer's cell duplicated, the empty copy after the answered one.
    nb = _read(SOLUTION)
    i = next(i for i, c in enumerate(nb.cells)
             if (c.metadata.get("nbgrader") or {}).get("grade_id") == "ex06_gap_question")
    stub = copy.deepcopy(nb.cells[i])
    stub.source, stub.id = "YOUR ANSWER HERE", "stub-copy"
    nb.cells.insert(i + 1, stub)
    nbformat.write(nb, folder / "duplicated.ipynb")


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("attacks")
    target = tmp / "escaped.txt"
    _submissions(tmp / "subs", target)
    out = tmp / "out"
    cmd = [sys.executable, "-m", "lessons.grade", str(tmp / "subs"), "--out", str(out), "--notebook", "06",
           "--seed", "3", "--jobs", "2", *UNSANDBOXED]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=900)
    records = {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in (out / "records").glob("*.json")}
    with open(out / "gradebook.csv", newline="", encoding="utf-8") as fh:
        table = {r["student"]: r for r in csv.DictReader(fh)}
    return {"done": done, "records": records, "table": table, "target": target, "out": out}


def _points(record, gid):
    return record["exercises"][gid]["points"]


def _full(gid):
    return next(e.points for e in all_exercises("06") if e.grade_id == gid)


@pytest.mark.skipif(not SANDBOXED, reason="bubblewrap is not available here")
def test_a_dying_kernel_cannot_plant_links_or_startup_files_for_the_next(graded):
    rec = graded["records"]["escape"]
    assert not graded["target"].exists() and not graded["target"].is_symlink()
    assert _points(rec, "ex06_rotated_d4") == _full("ex06_rotated_d4"), rec["exercises"]["ex06_rotated_d4"]
    assert rec["total"] == graded["records"]["good"]["total"] > 0


def test_lone_surrogates_lose_no_row(graded):
    done = graded["done"]
    assert done.returncode == 0, done.stderr[-2000:]
    expected = {"good", "surrogate", "thief", "renamed", "nometa", "duplicated"}
    expected |= {"escape", "fill", "fill_run", "deep", "hog"} if SANDBOXED else set()
    assert set(graded["table"]) == set(graded["records"]) == expected
    rec = graded["records"]["surrogate"]
    assert "ZeroDivisionError" in rec["result"] and "\\udcff" not in rec["result"]
    assert "lone surrogates" in json.dumps(rec)
    manual = (graded["out"] / "manual.csv").read_text(encoding="utf-8")
    assert "the same distance \\ud800" in manual


def test_a_checker_that_reads_the_probes_frame_gains_nothing(graded):
    rec = graded["records"]["thief"]
    assert _points(rec, "ex06_check_rope") == 0, rec["exercises"]["ex06_check_rope"]
    good = graded["records"]["good"]
    assert _points(good, "ex06_check_rope") == _full("ex06_check_rope")


def test_right_answers_in_unusual_shapes_get_their_points(graded):
    good = graded["records"]["good"]
    for who in ("renamed", "nometa", "duplicated"):
        rec = graded["records"][who]
        assert rec["total"] == good["total"], (who, rec["result"])
        written = {gid: e["outcome"] for gid, e in rec["exercises"].items() if gid.endswith("_question")}
        assert set(written.values()) == {"MANUAL"}, (who, written)


@pytest.mark.skipif(not SANDBOXED, reason="bubblewrap is not available here")
def test_a_kernel_fills_only_its_own_home(graded):
    """Writing until the disk is full stops at the home's size (a tmpfs of HOME_BYTES, where
    bubblewrap can size one), not at the machine's disk: the answers are still graded."""
    from lessons.grade.sandbox import sized_tmpfs

    if not sized_tmpfs(_BWRAP):
        pytest.skip("this bubblewrap cannot size a tmpfs (before 0.8)")
    rec = graded["records"]["fill"]
    assert _points(rec, "ex06_rotated_d4") == _full("ex06_rotated_d4"), rec["exercises"]["ex06_rotated_d4"]
    assert rec["total"] == graded["records"]["good"]["total"]


@pytest.mark.skipif(not SANDBOXED, reason="bubblewrap is not available here")
def test_the_memory_limit_holds_for_all_the_kernels_processes_together(graded):
    """Three fresh Pythons of 700 MB each, under --memory 1024 (a limit per process): the
    kernel's memory cgroup, where the machine lets the grader make one, stops them together."""
    from lessons.grade.sandbox import MemoryCgroup

    if MemoryCgroup.base() is None:
        pytest.skip("no memory cgroup can be made here (cgroup v1 memory or v2 memory.max)")
    rec = graded["records"]["hog"]
    assert _points(rec, "ex06_rotated_d4") == _full("ex06_rotated_d4"), rec["exercises"]["ex06_rotated_d4"]


@pytest.mark.skipif(not SANDBOXED, reason="bubblewrap is not available here")
def test_a_kernel_that_fills_its_run_folder_is_stopped(graded):
    """The run folder lies on the grader's disk (its sockets must): a kernel that keeps writing
    there past 64 MB is stopped within a poll, its cell skipped, the other answers graded."""
    for who in ("fill_run", "deep"):  # deep: a tree no walk by path or by recursion can read
        rec = graded["records"][who]
        assert "run folder" in json.dumps(rec), (who, rec["result"])
        assert rec["total"] == graded["records"]["good"]["total"], (who, rec["result"])
