"""Benchmark ``python -m lessons.grade``: grade N generated submissions, print submissions per minute.

    python benchmarks/bench_grade.py            # 100 submissions, one kernel per core
    python benchmarks/bench_grade.py -n 20 --jobs 2

The submissions are copies of the solution notebook of 06 with a mix of answers: every
third one has a wrong rotate_pair (the sign of the angle flipped), every fifth one is the
untouched student notebook. Needs bubblewrap (or pass --allow-unsandboxed).
"""

from __future__ import annotations

import argparse
import csv
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def make_submissions(folder: Path, n: int) -> None:
    import nbformat

    solution = nbformat.read(ROOT / "solutions" / "06_exercises.ipynb", as_version=4)
    student = nbformat.read(ROOT / "notebooks" / "06_exercises.ipynb", as_version=4)
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
        nbformat.write(nb, folder / f"student{i:03d}.ipynb")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-n", type=int, default=100, help="number of submissions (default 100)")
    p.add_argument("--jobs", type=int, default=0, help="kernels at once (default: cores)")
    p.add_argument("--allow-unsandboxed", action="store_true")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        subs, out = Path(tmp) / "subs", Path(tmp) / "out"
        subs.mkdir()
        make_submissions(subs, args.n)
        cmd = [sys.executable, "-m", "lessons.grade", str(subs), "--out", str(out), "--notebook", "06",
               "--jobs", str(args.jobs)] + (["--allow-unsandboxed"] if args.allow_unsandboxed else [])
        start = time.perf_counter()
        done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        seconds = time.perf_counter() - start
        if done.returncode != 0:
            print(done.stderr, file=sys.stderr)
            return 1
        with open(out / "gradebook.csv", newline="") as fh:
            rows = list(csv.DictReader(fh))
    full = sum(r["total"] == r["max"] for r in rows)
    print(f"graded {len(rows)} submissions in {seconds:.1f} s (the whole command, start-up included)")
    print(f"{len(rows) / seconds * 60:.0f} submissions per minute; {full} with full marks")
    return 0


if __name__ == "__main__":
    sys.exit(main())
