"""How much of the test run do the notebooks cost, against the floor a notebook cannot beat?

    python benchmarks/bench_notebooks.py            # every notebook in notebooks/ and solutions/
    python benchmarks/bench_notebooks.py --repeat 3
    python benchmarks/bench_notebooks.py notebooks/0[1-5]*.ipynb   # some of them
    python benchmarks/bench_notebooks.py --suite     # the notebooks' share of the whole test suite

The floor is a notebook that only imports numpy, matplotlib and the course package: a
fresh kernel plus the imports every course notebook pays before its first line of teaching.
The script runs strict nbval (the README's pytest options) over all committed notebooks,
then over as many copies of the floor notebook, in the same way, and prints both wall
times and their ratio (the course's budget is 1.5x). The two runs take turns ``--repeat``
times and the best of each is kept, so a busy spell on the machine skews neither. It also
prints the CPU seconds of each run (pytest and its kernels, user + system): on a busy machine
wall time grows with the load, CPU time much less, so the CPU ratio is the steadier figure.

``--suite`` measures the notebooks where the budget counts them: inside one run of the
README's test command (``python -m pytest``, every test and every notebook, English and
Chinese), with as many floor notebooks added to that same run, one after each course
notebook. The share of each is the sum of its nbval items' times (setup, call and teardown)
from pytest's JUnit report. In that run the results cache (``lessons.results_cache``)
behaves as in any run: empty at the start, so notebook 10's training is paid once, by
whichever test or notebook needs it first.
"""

from __future__ import annotations

import argparse
import collections
import os
import resource
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
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


def suite_notebooks() -> list[Path]:
    """Every notebook the README's test command runs under nbval (testpaths, recursively)."""
    return sorted(p for folder in ("notebooks", "solutions") for p in (ROOT / folder).rglob("*.ipynb")
                  if ".ipynb_checkpoints" not in p.parts)


# pyproject's testpaths are tests, notebooks and solutions: the tests, then every notebook of
# suite_notebooks() (named one by one, to put a floor notebook after each).
SUITE_TESTS = ("tests",)


def suite_share(tmp_path: Path, tests: tuple[str, ...] = SUITE_TESTS,
                notebooks: list[Path] | None = None, keep_report: Path | None = None) -> int:
    """Run the whole suite once with the floor notebooks added; print both notebook shares and
    each course notebook's time (the JUnit report is copied to ``keep_report`` if given).

    pytest runs ``tests`` first, then each course notebook followed by a floor notebook: a slow
    spell of the machine lands on both kinds alike instead of on whichever ran then.
    """
    notebooks = suite_notebooks() if notebooks is None else notebooks
    floor_dir = tmp_path / "floor"
    floor_dir.mkdir()
    floors = [floor_dir / f"floor_{i:02d}.ipynb" for i in range(len(notebooks))]
    for path in floors:
        floor_notebook(path)
    report = tmp_path / "junit.xml"
    interleaved = [str(path) for pair in zip(notebooks, floors, strict=True) for path in pair]
    cmd = [sys.executable, "-m", "pytest", "-q", "-c", str(ROOT / "pyproject.toml"), "--rootdir", str(ROOT),
           f"--junitxml={report}", "-o", "junit_family=xunit1", *tests, *interleaved]
    start = time.perf_counter()
    run = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - start
    print(run.stdout.strip().splitlines()[-1] if run.stdout.strip() else "(no pytest output)")
    if run.returncode != 0 and not report.is_file():
        raise SystemExit(f"the suite failed (exit {run.returncode}):\n{run.stdout[-3000:]}")
    if run.returncode != 0:  # the shares are still measured; the run's failures come first
        print(f"the suite FAILED (exit {run.returncode}); the shares below are of that run:\n"
              f"{run.stdout[-3000:]}")
    seconds: dict[str, float] = collections.defaultdict(float)
    items: dict[str, int] = collections.Counter()
    per_notebook: dict[str, float] = collections.defaultdict(float)
    for case in ET.parse(report).getroot().iter("testcase"):
        path = case.get("file") or ""
        if not path.endswith(".ipynb"):
            kind = "other tests"
        elif Path(path).name.startswith("floor_") and "floor" in Path(path).parts[-2:-1]:
            kind = "floor"
        else:
            kind = "course"
            per_notebook[path] += float(case.get("time") or 0.0)
        seconds[kind] += float(case.get("time") or 0.0)
        items[kind] += 1
    if keep_report is not None:
        keep_report.write_bytes(report.read_bytes())
    ratio = seconds["course"] / seconds["floor"]
    print(f"the whole suite, one run: {wall:.0f} s wall, {os.cpu_count()} CPU(s), "
          f"load average {os.getloadavg()[0]:.1f} at the end")
    print(f"  course notebooks ({len(notebooks)}, {items['course']} nbval items): {seconds['course']:7.1f} s")
    print(f"  floor x {len(floors)} ({items['floor']} nbval items):        {seconds['floor']:7.1f} s")
    print(f"  other tests ({items['other tests']}):                  {seconds['other tests']:7.1f} s")
    print(f"  ratio: {ratio:.2f}x  (budget {BUDGET}x: {'within' if ratio <= BUDGET else 'OVER'})")
    floor = seconds["floor"] / len(floors)
    print(f"  each course notebook, against one floor notebook ({floor:.2f} s):")
    for path, spent in sorted(per_notebook.items(), key=lambda item: -item[1]):
        print(f"    {path:<52} {spent:5.2f} s  {spent / floor:4.2f}x")
    return 0 if run.returncode == 0 else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path, help="notebooks (default: all of the course's)")
    parser.add_argument("--repeat", type=int, default=2, help="runs of each (the best is kept)")
    parser.add_argument("--suite", action="store_true",
                        help="measure inside one run of the whole test suite (takes as long as the suite)")
    parser.add_argument("--junit", type=Path, metavar="PATH",
                        help="with --suite: keep the run's JUnit report (every item's time) at PATH")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error(f"--repeat must be at least 1; got {args.repeat}")
    if args.suite:
        if args.paths:
            parser.error("--suite measures every notebook of the suite; give no paths with it")
        with tempfile.TemporaryDirectory() as tmp:
            return suite_share(Path(tmp), keep_report=args.junit)
    if args.junit is not None:
        parser.error("--junit keeps the report of a --suite run; add --suite")
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
