"""Benchmark ``python -m lessons.grade``: grade N generated submissions, print submissions per minute.

    python benchmarks/bench_grade.py            # 100 submissions, one kernel per core
    python benchmarks/bench_grade.py -n 20 --jobs 2
    python benchmarks/bench_grade.py -n 20 --nbgrader   # also nbgrader's autograde, same files

The submissions are copies of the solution notebook of 06 with a mix of answers: every
third one has a wrong rotate_pair (the sign of the angle flipped), every fifth one is the
untouched student notebook. The time is the whole command (start-up included), as an
instructor waits for it. Where the time per submission goes is read from the records
(``timings``: kernel start, the probe's set-up, the student's cells, the probes).

With ``--nbgrader`` (needs the optional extra: ``pip install -e ".[nbgrader]"``) the same
submissions are graded by ``nbgrader autograde`` in a throw-away course folder (the solution
as nbgrader's source, ``L13_CHECK_RAISES=1`` so a failing check earns nothing), and the two
throughputs and totals are printed side by side. Needs bubblewrap (or --allow-unsandboxed).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = "06_exercises.ipynb"


def make_submissions(folder: Path, n: int) -> list[str]:
    import nbformat

    solution = nbformat.read(ROOT / "solutions" / NOTEBOOK, as_version=4)
    student = nbformat.read(ROOT / "notebooks" / NOTEBOOK, as_version=4)
    names = []
    for i in range(n):
        if i % 5 == 4:
            nb = student
        else:
            nb = nbformat.from_dict(solution)
            if i % 3 == 2:
                for cell in nb.cells:
                    if "def rotate_pair" in cell.source:
                        cell.source = cell.source.replace("c, s = np.cos(angle), np.sin(angle)",
                                                          "c, s = np.cos(angle), -np.sin(angle)")
        name = f"student{i:03d}"
        (folder / name).mkdir()
        nbformat.write(nb, folder / name / NOTEBOOK)
        names.append(name)
    return names


def run_ours(subs: Path, out: Path, jobs: int, unsandboxed: bool) -> tuple[float, dict[str, float], dict]:
    cmd = [sys.executable, "-m", "lessons.grade", str(subs), "--out", str(out), "--notebook", "06",
           "--jobs", str(jobs)] + (["--allow-unsandboxed"] if unsandboxed else [])
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    with open(out / "gradebook.csv", newline="") as fh:
        totals = {r["student"]: float(r["total"]) for r in csv.DictReader(fh)}
    records = [json.loads(p.read_text()) for p in (out / "records").glob("*.json")]
    return seconds, totals, {"records": records}


def run_nbgrader(subs: Path, names: list[str], work: Path) -> tuple[float, dict[str, float]]:
    """nbgrader 0.9's autograde of the same submissions (one course, one assignment)."""
    course = work / "course"
    (course / "source" / "ps1").mkdir(parents=True)
    shutil.copy(ROOT / "solutions" / NOTEBOOK, course / "source" / "ps1" / NOTEBOOK)
    (course / "nbgrader_config.py").write_text(
        f"c = get_config()\nc.CourseDirectory.root = {str(course)!r}\nc.CourseDirectory.course_id = 'l13'\n"
        "c.ExecutePreprocessor.timeout = 120\n")
    # nbgrader runs its helpers (alembic) from PATH: the environment's own bin first
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    env = dict(os.environ, L13_CHECK_RAISES="1", PATH=path)
    nbgrader = [sys.executable, "-m", "nbgrader"]
    subprocess.run([*nbgrader, "generate_assignment", "ps1", "--force"], cwd=course, env=env, check=True,
                   capture_output=True)
    for name in names:
        (course / "submitted" / name / "ps1").mkdir(parents=True)
        shutil.copy(subs / name / NOTEBOOK, course / "submitted" / name / "ps1" / NOTEBOOK)
    start = time.perf_counter()
    subprocess.run([*nbgrader, "autograde", "ps1", "--create"], cwd=course, env=env, check=True,
                   capture_output=True)
    seconds = time.perf_counter() - start
    from nbgrader.api import Gradebook

    totals = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        for name in names:
            totals[name] = float(gb.find_submission("ps1", name).score)
    return seconds, totals


def _mean(records: list[dict], key: str) -> float:
    values = [r.get("timings", {}).get(key) for r in records if r.get("timings")]
    values = [v for v in values if v is not None]
    return statistics.mean(values) if values else float("nan")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-n", type=int, default=100, help="number of submissions (default 100)")
    p.add_argument("--jobs", type=int, default=0, help="kernels at once (default: cores)")
    p.add_argument("--nbgrader", action="store_true", help="also time nbgrader autograde (if installed)")
    p.add_argument("--allow-unsandboxed", action="store_true")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        subs, out = Path(tmp) / "subs", Path(tmp) / "out"
        subs.mkdir()
        names = make_submissions(subs, args.n)
        seconds, totals, info = run_ours(subs, out, args.jobs, args.allow_unsandboxed)
        records = info["records"]
        print(f"lessons.grade: {len(totals)} submissions in {seconds:.1f} s (the whole command, start-up "
              f"included): {len(totals) / seconds * 60:.0f} per minute on {os.cpu_count()} cores")
        parts = ("kernel_start", "prelude", "cells", "probes")
        print("time per submission, mean over the records (s): "
              + ", ".join(f"{k} {_mean(records, k):.3f}" for k in parts))
        session = statistics.mean(r["seconds"] for r in records)
        print(f"  whole kernel session per submission: {session:.3f} s after start-up (cells + probes)")
        if args.nbgrader:
            try:
                import nbgrader  # noqa: F401
            except ImportError:
                print("nbgrader is not installed (pip install -e \".[nbgrader]\"): no comparison")
                return 0
            nb_seconds, nb_totals = run_nbgrader(subs, names, Path(tmp))
            same = sum(abs(nb_totals[s] - totals[s]) < 1e-9 for s in names)
            print(f"nbgrader autograde: {len(nb_totals)} submissions in {nb_seconds:.1f} s: "
                  f"{len(nb_totals) / nb_seconds * 60:.0f} per minute")
            print(f"ratio: lessons.grade is {nb_seconds / seconds:.2f}x nbgrader's throughput; "
                  f"same total for {same} of {len(names)} (written answers count 0 in both until graded)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
