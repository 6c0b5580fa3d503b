"""The grader, end to end: hostile submissions graded in ONE run, each row asserted.

``python -m lessons.grade`` runs as a subprocess, exactly as an instructor runs it. With
bubblewrap available (CI installs it) the kernels are sandboxed and the sandbox is tested;
without it the functional tests run with ``--allow-unsandboxed`` and the sandbox tests skip.
"""

from __future__ import annotations

import csv
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("hostile_build", ROOT / "tests" / "hostile" / "build.py")
hostile_build = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(hostile_build)

from lessons.grade.sandbox import bwrap_path, bwrap_works  # noqa: E402

_BWRAP = bwrap_path()
SANDBOXED = bool(_BWRAP) and bwrap_works(_BWRAP)[0]
UNSANDBOXED = [] if SANDBOXED else ["--allow-unsandboxed"]
needs_sandbox = pytest.mark.skipif(not SANDBOXED, reason="bubblewrap is not available here")


def grade(*args, timeout=600) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "lessons.grade", *map(str, args), *UNSANDBOXED]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def rows(out: Path) -> dict[str, dict]:
    """Gradebook rows by student; each also keyed by grade_id (the columns are titles) and
    with "status": what the result and grading columns say."""
    columns = json.loads((out / "results.json").read_text())["columns"]
    with open(out / "gradebook.csv", newline="", encoding="utf-8") as fh:
        table = {r["student"]: r for r in csv.DictReader(fh)}
    for r in table.values():
        r.update({gid: r[label] for label, gid in columns.items()})
        r["status"] = f"{r['result']} | {r['grading']}"
    return table


class Listener:
    """A TCP server on 127.0.0.1 that records whoever connects (the sandbox must prevent it)."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(5)
        self.sock.settimeout(0.5)
        self.port = self.sock.getsockname()[1]
        self.connections = []
        self._stop = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self._stop:
            try:
                conn, addr = self.sock.accept()
            except OSError:
                continue
            self.connections.append(addr)
            conn.close()

    def close(self):
        self._stop = True
        self.thread.join(5)
        self.sock.close()


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("grade")
    subs, out = tmp / "submissions", tmp / "out"
    outside = tmp / "instructor" / "escaped.txt"
    outside.parent.mkdir()
    listener = Listener()
    escape = None
    if SANDBOXED:
        escape = {"REPO": str(ROOT), "OTHER": str(subs / "solution.ipynb"),
                  "REAL_HOME": os.path.expanduser("~"), "OUTSIDE": str(outside), "PORT": listener.port}
    expect = hostile_build.build(subs, escape)
    try:
        done = grade(subs, "--out", out, "--notebook", "06", "--cell-timeout", "3", "--timeout", "60",
                     "--seed", "20261130")
    finally:
        listener.close()
    assert done.returncode == 0, done.stderr
    return {"expect": expect, "out": out, "rows": rows(out), "stderr": done.stderr,
            "results": json.loads((out / "results.json").read_text()), "outside": outside,
            "connections": listener.connections}


def test_every_submission_gets_one_row(hostile):
    assert sorted(hostile["rows"]) == sorted(hostile["expect"])
    assert len(hostile["results"]["submissions"]) == len(hostile["expect"])


@pytest.mark.parametrize("kind", hostile_build.KINDS)
def test_each_hostile_kind_gets_its_honest_points(hostile, kind):
    if kind not in hostile["expect"]:
        pytest.skip("built only with the sandbox")
    total, points, words = hostile["expect"][kind]
    row = hostile["rows"][kind]
    if total is not None:
        assert float(row["total"]) == total, (kind, row)
    auto = sum(float(row[gid]) for gid in hostile_build.POINTS if row.get(gid, "") != "")
    assert auto == float(row["total"]) or total is None, (kind, row)
    for gid, p in points.items():
        assert float(row[gid]) == p, (kind, gid, row)
    for word in words:
        assert word in row["status"], (kind, word, row["status"])


def test_solution_full_marks_and_untouched_zero(hostile):
    solution, untouched = hostile["rows"]["solution"], hostile["rows"]["untouched"]
    assert solution["total"] == str(hostile_build.FULL)
    assert solution["result"].startswith("full marks") and solution["grading"] == "ok"
    assert untouched["total"] == "0" and untouched["result"] == "nothing answered"
    assert untouched["grading"] == "ok"  # grading worked; the student answered nothing
    feedback = (hostile["out"] / "feedback" / "untouched.md").read_text()
    assert "not answered" in feedback
    assert "course" not in feedback  # the course's own cells are not the student's business


def test_feedback_shows_a_counterexample(hostile):
    text = (hostile["out"] / "feedback" / "wrong_shape.md").read_text()
    assert "tried:    pair_frequencies(d=" in text
    assert "shape (" in text
    text = (hostile["out"] / "feedback" / "duplicated.md").read_text()
    assert "tried:    rotate_pair(pair=[" in text  # the definition the check cell saw was graded


def test_results_record_the_seed_and_the_limits(hostile):
    results = hostile["results"]
    assert results["seed"] == 20261130
    assert results["settings"]["cell_timeout_s"] == 3
    assert results["settings"]["sandbox"] == ("bubblewrap" if SANDBOXED else "none")
    solution = next(s for s in results["submissions"] if s["student"] == "solution")
    apply_rope = solution["exercises"]["ex06_apply_rope"]
    assert apply_rope["passed"] == apply_rope["cases"] >= 3
    assert apply_rope["outcome"] == "RIGHT" and apply_rope["judged_after_cell"] is not None


def test_progress_lines_when_not_a_terminal(hostile):
    lines = [ln for ln in hostile["stderr"].splitlines() if ln.startswith("[")]
    assert len(lines) == len(hostile["expect"])
    assert any(ln.startswith("[") and f"] solution: {hostile_build.FULL}/" in ln for ln in lines)


@needs_sandbox
def test_sandbox_blocks_reads_writes_and_network(hostile):
    # The escape submission keeps rotated_d4 right only if every escape attempt failed, and
    # rotate_pair right only if its own scratch folder was writable.
    row = hostile["rows"]["escape"]
    assert float(row["ex06_rotated_d4"]) == hostile_build.POINTS["ex06_rotated_d4"], row
    assert float(row["ex06_rotate_pair"]) == hostile_build.POINTS["ex06_rotate_pair"], row
    assert float(row["total"]) == hostile_build.FULL
    assert not hostile["outside"].exists()
    assert hostile["connections"] == []


def test_refuses_to_grade_without_bubblewrap(monkeypatch, capsys, tmp_path):
    import lessons.grade.sandbox as sandbox
    from lessons.grade.cli import main

    monkeypatch.setattr(sandbox, "bwrap_path", lambda: None)
    assert main([str(tmp_path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "bubblewrap (bwrap) is not installed" in err and "--allow-unsandboxed" in err
    assert not (tmp_path / "out").exists()


# ------------------------------------------------------------------ reruns, seeds, recovery
@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """Three submissions: right, one wrong function, untouched."""
    tmp = tmp_path_factory.mktemp("small")
    subs = tmp / "subs"
    expect = hostile_build.build(tmp / "all")
    subs.mkdir()
    for name in ("solution", "wrong_shape", "untouched"):
        (tmp / "all" / f"{name}.ipynb").rename(subs / f"{name}.ipynb")
    assert set(expect) >= {"solution", "wrong_shape", "untouched"}
    return subs


def _records(out: Path) -> dict[str, dict]:
    return {p.stem: json.loads(p.read_text()) for p in (out / "records").glob("*.json")}


def test_rerun_skips_graded_and_regrade_reproduces_with_the_seed(small, tmp_path):
    out = tmp_path / "out"
    first = grade(small, "--out", out, "--notebook", "06", "--seed", "7")
    assert first.returncode == 0, first.stderr
    before = _records(out)
    totals = {s: r["total"] for s, r in before.items()}
    assert totals["solution"] == hostile_build.FULL and totals["untouched"] == 0
    assert 0 < totals["wrong_shape"] < hostile_build.FULL

    again = grade(small, "--out", out, "--notebook", "06")
    assert again.returncode == 0
    assert again.stderr.count("already graded") == 3
    assert _records(out) == before  # untouched records: nothing was regraded

    regrade = grade(small, "--out", out, "--notebook", "06", "--regrade", "--seed", "7")
    assert "already graded" not in regrade.stderr
    after = _records(out)
    for student, rec in after.items():  # the same seed draws the same inputs: identical results
        assert rec["exercises"] == before[student]["exercises"], student
        assert rec["seed"] == 7

    other = grade(small, "--out", tmp_path / "other", "--notebook", "06", "--seed", "8")
    assert other.returncode == 0
    wrong_other = _records(tmp_path / "other")["wrong_shape"]["exercises"]["ex06_pair_frequencies"]
    wrong_before = before["wrong_shape"]["exercises"]["ex06_pair_frequencies"]
    assert wrong_other["points"] == wrong_before["points"] == 0
    assert wrong_other["message"] != wrong_before["message"]  # other inputs


def test_a_changed_file_is_regraded(small, tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    for p in small.glob("*.ipynb"):
        (subs / p.name).write_bytes(p.read_bytes())
    out = tmp_path / "out"
    assert grade(subs, "--out", out, "--notebook", "06").returncode == 0
    (subs / "untouched.ipynb").write_bytes((small / "solution.ipynb").read_bytes())
    again = grade(subs, "--out", out, "--notebook", "06")
    assert again.stderr.count("already graded") == 2
    assert rows(out)["untouched"]["total"] == str(hostile_build.FULL)


def test_a_run_killed_half_way_loses_nothing(small, tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    for i in range(6):
        (subs / f"s{i}.ipynb").write_bytes((small / "solution.ipynb").read_bytes())
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "lessons.grade", str(subs), "--out", str(out), "--notebook", "06",
           "--jobs", "1", *UNSANDBOXED]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(list((out / "records").glob("*.json"))) < 2:
        time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(10)
    done_before = _records(out)
    assert 2 <= len(done_before) < 6
    # A record cut short (as by a crash mid-write without atomic writes) is graded again.
    victim = sorted(done_before)[0]
    (out / "records" / f"{victim}.json").write_text('{"version": 2, "stud')
    rerun = grade(subs, "--out", out, "--notebook", "06", "--jobs", "2")
    assert rerun.returncode == 0, rerun.stderr
    assert rerun.stderr.count("already graded") == len(done_before) - 1
    final = rows(out)
    assert sorted(final) == [f"s{i}" for i in range(6)]
    assert all(r["total"] == str(hostile_build.FULL) for r in final.values())
    after = _records(out)
    for student, rec in done_before.items():
        if student != victim:
            assert after[student] == rec  # graded once, kept


@needs_sandbox
def test_course_cells_run_and_never_blame_the_student(tmp_path):
    """The graded kernel imports the course (minus what answers the exercises): a solved 07
    gets full marks with grading "ok" and no cell errors; in the untouched one the course's
    own cells that fail (they call the learner's stubs) are not listed as the student's."""
    subs = tmp_path / "subs"
    for who, folder in (("solved", "solutions"), ("untouched", "notebooks")):
        (subs / who).mkdir(parents=True)
        src = ROOT / folder / "07_added_vs_rotated.ipynb"
        (subs / who / src.name).write_bytes(src.read_bytes())
    out = tmp_path / "out"
    done = grade(subs, "--out", out, "--notebook", "07")
    assert done.returncode == 0, done.stderr
    table = rows(out)
    solved = json.loads((out / "records" / "solved.json").read_text())
    assert all(e["points"] in (e["max"], None) for e in solved["exercises"].values()), solved["exercises"]
    assert table["solved"]["grading"] == "ok" and solved["cell_errors"] == {}
    assert table["untouched"]["result"] == "nothing answered"
    assert "errors in cell" not in table["untouched"]["result"]
    feedback = (out / "feedback" / "untouched.md").read_text()
    assert "course" not in feedback and "errors in cell" not in feedback
