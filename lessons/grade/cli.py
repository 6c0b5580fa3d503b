"""The command line of ``python -m lessons.grade`` (the guide is docs/grading.md)."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from .runner import Limits

PROG = "python -m lessons.grade"
MIN_MEMORY_MB = 768  # below this (RLIMIT_AS) no kernel starts: ipykernel, numpy and matplotlib


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG,
        description="Grade submitted exercise notebooks, each in its own sandboxed kernel. Writes "
        "OUT/gradebook.csv, OUT/results.json and OUT/feedback/<student>.md. A student is named "
        "after the file (alice.ipynb -> alice) or, for a course notebook name such as "
        "06_exercises.ipynb, after its folder (alice/06_exercises.ipynb -> alice).",
    )
    p.add_argument("submissions", nargs="*", type=Path,
                   help="notebook files or folders (searched for *.ipynb)")
    p.add_argument("--out", type=Path, required=True, help="folder for the gradebook, results and feedback")
    p.add_argument("--notebook", metavar="NN", help="grade every submission as notebook NN (e.g. 06); "
                   "default: from the NN_ prefix of the file or folder name")
    p.add_argument("--jobs", type=int, default=0,
                   help="kernels running student code at once (default: the number of cores)")
    p.add_argument("--seed", type=int,
                   help="seed of the inputs drawn (reproduce a grading from results.json)")
    p.add_argument("--regrade", action="store_true", help="grade again the submissions already graded")
    p.add_argument("--shard", metavar="K/N",
                   help="grade only shard K of N (0 <= K < N, by a hash of the student id) and write only "
                   "their records into --out (needs --seed); then --collect")
    p.add_argument("--collect", action="store_true",
                   help="grade nothing: write the gradebook, results and feedback from the records in --out "
                   "and name the submissions given that have no record yet (exit 1 then)")
    p.add_argument("--reveal", action="store_true",
                   help="the feedback states the expected values of value exercises (after the deadline)")
    p.add_argument("--manual", type=Path, metavar="FILE",
                   help="merge a filled manual-grading sheet (OUT/manual.csv: points and comments of "
                   "written answers) into the totals and the feedback")
    p.add_argument("--cell-timeout", type=int, default=10, help="seconds per cell (default 10)")
    p.add_argument("--timeout", type=int, default=120, help="seconds per submission in all (default 120)")
    p.add_argument("--memory", type=int, default=1024, help="memory limit of a kernel in MB (default 1024)")
    p.add_argument("--max-processes", type=int, default=64,
                   help="processes and threads a sandboxed kernel may run (default 64)")
    p.add_argument("--max-output", type=int, default=20_000, help="characters of output kept per cell")
    p.add_argument("--allow-unsandboxed", action="store_true",
                   help="grade without bubblewrap (student code then runs with your permissions)")
    return p


def _fail(text: str, code: int = 2) -> int:
    print(f"{PROG}: {text}", file=sys.stderr)
    return code


def _manual(args) -> tuple[dict | None, int]:
    """The merged manual grades: a new sheet (validated), else the one merged before."""
    from .records import SheetError, atomic_write, load_records, read_sheet

    saved = args.out / "manual.json"
    if args.manual is None:
        try:
            return json.loads(saved.read_text(encoding="utf-8")), 0
        except (OSError, ValueError):
            return None, 0
    records = load_records(args.out)
    if not records:
        return None, _fail(f"--manual: no graded submissions in {args.out} yet; "
                           "grade first, then merge the sheet")
    try:
        grades = read_sheet(args.manual, records)
    except SheetError as exc:
        return None, _fail(f"--manual refused: {exc}")
    atomic_write(saved, json.dumps(grades, indent=1) + "\n")
    return grades, 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    from ..exercises import all_exercises
    from .discovery import NothingToGrade, parse_shard
    from .hiding import HidesError, check_hides
    from .sandbox import Sandbox, bwrap_path, bwrap_works

    known = sorted({e.notebook for e in all_exercises()})
    if args.notebook is not None and args.notebook not in known:
        return _fail(f"no exercises for notebook {args.notebook!r}; "
                     f"notebooks with exercises: {', '.join(known)}")
    if args.jobs < 0:
        return _fail(f"--jobs must be 0 (one per core) or more; got {args.jobs}")
    for name, value in (("--cell-timeout", args.cell_timeout), ("--timeout", args.timeout),
                        ("--memory", args.memory), ("--max-output", args.max_output),
                        ("--max-processes", args.max_processes)):
        if value <= 0:
            return _fail(f"{name} must be a positive number; got {value}")
    if args.memory < MIN_MEMORY_MB:
        return _fail(f"--memory must be at least {MIN_MEMORY_MB} MB: a kernel that imports numpy and "
                     f"matplotlib needs about that much address space to start; got {args.memory}")
    shard = None
    if args.shard is not None:
        try:
            shard = parse_shard(args.shard)
        except ValueError as exc:
            return _fail(str(exc))
        if args.seed is None:
            return _fail("--shard needs --seed (every shard must draw the same inputs)")
        if args.collect:
            return _fail("--shard and --collect do not go together: collect once, after the shards")
    if not args.submissions and not args.collect:
        return _fail("give the submissions (notebook files or folders) to grade")
    missing = [p for p in args.submissions if not p.exists()]
    if missing:
        return _fail(f"no such file or folder: {', '.join(map(str, missing))}")
    manual, code = _manual(args)
    if code:
        return code
    from .core import Options, collect, grade

    limits = Limits(cell_timeout=args.cell_timeout, probe_timeout=args.cell_timeout,
                    total_timeout=args.timeout, memory_bytes=args.memory << 20, max_output=args.max_output,
                    max_processes=args.max_processes)
    if args.collect:
        from .records import load_records

        if not args.submissions and not load_records(args.out):
            return _fail(f"no records in {args.out / 'records'} to collect: "
                         "grade (or run the shards) first", 1)
        opts = Options(out=args.out, notebook=args.notebook, limits=limits, reveal=args.reveal, manual=manual)
        try:
            records, missing_records = collect(args.submissions, opts)
        except NothingToGrade as exc:
            return _fail(str(exc))
        print(f"{len(records)} record{'s' if len(records) != 1 else ''} in {args.out / 'gradebook.csv'}",
              file=sys.stderr)
        if missing_records:
            shown = ", ".join(missing_records[:20]) + (" ..." if len(missing_records) > 20 else "")
            return _fail(f"{len(missing_records)} submission(s) have no record yet: {shown}", 1)
        return 0
    bwrap = bwrap_path()
    problem = None
    if bwrap is None:
        problem = "bubblewrap (bwrap) is not installed" + ("" if sys.platform.startswith("linux")
                                                           else " (it needs Linux)")
    else:
        ok, why = bwrap_works(bwrap)
        if not ok:
            problem = f"bubblewrap is installed but refused to start a sandbox: {why or 'no reason given'}"
            bwrap = None
    if problem:
        if not args.allow_unsandboxed:
            print(f"{PROG}: {problem}, so student code cannot be sandboxed.\n"
                  "Install it (Debian/Ubuntu: apt-get install bubblewrap), or pass --allow-unsandboxed "
                  "to grade anyway with student code running under your own account.", file=sys.stderr)
            return 2
        print(f"warning: {problem}; grading UNSANDBOXED (--allow-unsandboxed)", file=sys.stderr)
    try:
        check_hides(all_exercises(args.notebook))
    except HidesError as exc:
        return _fail(f"the exercises name a hidden function that does not exist: {exc}")
    with tempfile.TemporaryDirectory(prefix="l13stub-") as stub:
        sandbox = Sandbox(bwrap, limits.memory_bytes, Path(stub), max_processes=limits.max_processes)
        opts = Options(out=args.out, notebook=args.notebook, jobs=args.jobs, seed=args.seed,
                       regrade=args.regrade, limits=limits, sandbox=sandbox, shard=shard,
                       reveal=args.reveal, manual=manual)
        try:
            records = grade(args.submissions, opts)
        except NothingToGrade as exc:
            return _fail(str(exc))
    total = len(records)
    where = args.out / ("records" if shard else "gradebook.csv")
    print(f"{total} submission{'s' if total != 1 else ''} in {where}", file=sys.stderr)
    unknown = [r["student"] for r in records.values() if r.get("notebook") is None]
    if records and len(unknown) == len(records):
        return _fail(f"none of the {total} notebooks could be matched to a course notebook "
                     f"({', '.join(known)}): name the files (or their folders) NN_*.ipynb as the course "
                     "does, or pass --notebook NN", 1)
    return 0
