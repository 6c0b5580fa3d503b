"""The command line of ``python -m lessons.grade`` (the guide is docs/grading.md)."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from .runner import Limits


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m lessons.grade",
        description="Grade submitted exercise notebooks, each in its own sandboxed kernel. Writes "
        "OUT/gradebook.csv, OUT/results.json and OUT/feedback/<student>.md. A student is named "
        "after the file (alice.ipynb -> alice) or, for a course notebook name such as "
        "06_exercises.ipynb, after its folder (alice/06_exercises.ipynb -> alice).",
    )
    p.add_argument("submissions", nargs="+", type=Path,
                   help="notebook files or folders (searched for *.ipynb)")
    p.add_argument("--out", type=Path, required=True, help="folder for the gradebook, results and feedback")
    p.add_argument("--notebook", metavar="NN", help="grade every submission as notebook NN (e.g. 06); "
                   "default: from the NN_ prefix of the file or folder name")
    p.add_argument("--jobs", type=int, default=0,
                   help="kernels running student code at once (default: the number of cores)")
    p.add_argument("--seed", type=int,
                   help="seed of the inputs drawn (reproduce a grading from results.json)")
    p.add_argument("--regrade", action="store_true", help="grade again the submissions already graded")
    p.add_argument("--cell-timeout", type=int, default=10, help="seconds per cell (default 10)")
    p.add_argument("--timeout", type=int, default=120, help="seconds per submission in all (default 120)")
    p.add_argument("--memory", type=int, default=1024, help="memory limit of a kernel in MB (default 1024)")
    p.add_argument("--max-output", type=int, default=20_000, help="characters of output kept per cell")
    p.add_argument("--allow-unsandboxed", action="store_true",
                   help="grade without bubblewrap (student code then runs with your permissions)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    from ..exercises import all_exercises
    from .sandbox import Sandbox, bwrap_path, bwrap_works, write_stub

    known = sorted({e.notebook for e in all_exercises()})
    if args.notebook is not None and args.notebook not in known:
        print(f"python -m lessons.grade: no exercises for notebook {args.notebook!r}; "
              f"notebooks with exercises: {', '.join(known)}", file=sys.stderr)
        return 2
    if args.jobs < 0:
        print(f"python -m lessons.grade: --jobs must be 0 (one per core) or more; got {args.jobs}",
              file=sys.stderr)
        return 2
    for name, value in (("--cell-timeout", args.cell_timeout), ("--timeout", args.timeout),
                        ("--memory", args.memory), ("--max-output", args.max_output)):
        if value <= 0:
            print(f"python -m lessons.grade: {name} must be a positive number; got {value}", file=sys.stderr)
            return 2
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
            print(f"python -m lessons.grade: {problem}, so student code cannot be sandboxed.\n"
                  "Install it (Debian/Ubuntu: apt-get install bubblewrap), or pass --allow-unsandboxed "
                  "to grade anyway with student code running under your own account.", file=sys.stderr)
            return 2
        print(f"warning: {problem}; grading UNSANDBOXED (--allow-unsandboxed)", file=sys.stderr)
    missing = [p for p in args.submissions if not p.exists()]
    if missing:
        print(f"python -m lessons.grade: no such file or folder: {', '.join(map(str, missing))}",
              file=sys.stderr)
        return 2
    from .core import Options, grade

    limits = Limits(cell_timeout=args.cell_timeout, probe_timeout=args.cell_timeout,
                    total_timeout=args.timeout, memory_bytes=args.memory << 20, max_output=args.max_output)
    with tempfile.TemporaryDirectory(prefix="l13stub-") as stub:
        sandbox = Sandbox(bwrap, limits.memory_bytes, write_stub(Path(stub)))
        opts = Options(out=args.out, notebook=args.notebook, jobs=args.jobs, seed=args.seed,
                       regrade=args.regrade, limits=limits, sandbox=sandbox)
        records = grade(args.submissions, opts)
    total = len(records)
    print(f"{total} submission{'s' if total != 1 else ''} in {args.out / 'gradebook.csv'}", file=sys.stderr)
    return 0
