"""How much of the test run do the notebooks cost, against the floor a notebook cannot beat?

    python benchmarks/bench_notebooks.py            # every notebook in notebooks/ and solutions/
    python benchmarks/bench_notebooks.py --repeat 3
    python benchmarks/bench_notebooks.py notebooks/0[1-5]*.ipynb   # some of them

The floor is a notebook that only imports numpy, matplotlib and the course package: a
fresh kernel plus the imports every course notebook pays before its first line of teaching.
The script runs strict nbval (the README's pytest options) over all committed notebooks,
then over as many copies of the floor notebook, in the same way, and prints both wall
times and their ratio (the course's budget is 1.5x). The two runs take turns ``--repeat``
times and the best of each is kept, so a busy spell on the machine skews neither. It also
prints the CPU seconds of each run (pytest and its kernels, user + system): on a busy machine
wall time grows with the load, CPU time much less, so the CPU ratio is the steadier figure.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
BUDGET = 1.5
FLOOR_SOURCE = "import numpy as np\nimport matplotlib.pyplot as plt\nimport lessons\nprint('ready')"


def course_notebooks() -> list[Path]:
    return sorted(p for folder in ("notebooks", "solutions") for p in (ROOT / folder).glob("*.ipynb"))


def floor_notebook(path: Path) -> None:
    """Write the floor notebook, executed (its one output stored, as nbval expects)."""
    cell = nbformat.v4.new_code_cell(FLOOR_SOURCE, id="floor")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="ready\n")]
    cell.execution_count = 1
    nb = nbformat.v4.new_notebook(cells=[cell])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)


def nbval_seconds(paths: list[Path], cwd: Path) -> tuple[float, float]:
    """(wall, CPU) seconds of one strict nbval run over ``paths``; raise if it fails.

    CPU is user + system time of pytest and every kernel it started (all are waited for, so
    they count in this process's children)."""
    cmd = [
        sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval",
        "--nbval-sanitize-with", str(ROOT / "tests" / "nbval_sanitize.cfg"),
        "-o", "addopts=", "--rootdir", str(cwd), *map(str, paths),
    ]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    run = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if run.returncode != 0:
        raise SystemExit(f"nbval failed ({' '.join(cmd[3:6])} ...):\n{run.stdout[-2000:]}")
    return seconds, cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path, help="notebooks (default: all of the course's)")
    parser.add_argument("--repeat", type=int, default=2, help="runs of each (the best is kept)")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error(f"--repeat must be at least 1; got {args.repeat}")
    missing = [str(p) for p in args.paths if not p.is_file()]
    if missing:
        parser.error(f"no such notebook: {', '.join(missing)}")

    notebooks = [p.resolve() for p in args.paths] or course_notebooks()
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        floors = []
        for i in range(len(notebooks)):
            floors.append(tmp_path / f"floor_{i:02d}.ipynb")
            floor_notebook(floors[-1])
        course, floor = [], []
        for _ in range(args.repeat):
            course.append(nbval_seconds(notebooks, ROOT))
            floor.append(nbval_seconds(floors, tmp_path))
    (best_course, course_cpu), (best_floor, floor_cpu) = min(course), min(floor)
    ratio = best_course / best_floor
    print(f"{len(notebooks)} notebooks under strict nbval, best of {args.repeat}, {os.cpu_count()} CPU(s)")
    print(f"  course notebooks: {best_course:6.1f} s")
    print(f"  floor x {len(notebooks):<6}  {best_floor:6.1f} s  (a notebook that only imports numpy, "
          "matplotlib and lessons)")
    print(f"  ratio:            {ratio:6.2f}x  (budget {BUDGET}x: {'within' if ratio <= BUDGET else 'OVER'})")
    print(f"  CPU seconds:      {course_cpu:6.1f} s against {floor_cpu:.1f} s, {course_cpu / floor_cpu:.2f}x "
          f"(load average {os.getloadavg()[0]:.1f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
