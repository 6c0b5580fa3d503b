"""``python -m lessons.i18n {update,status,build,check,compile}``: the translated edition.

    python -m lessons.i18n update          # merge the English notebooks into locale/zh_CN/notebooks/*.po
    python -m lessons.i18n status          # per catalog: translated / fuzzy / missing, parity problems
    python -m lessons.i18n build           # notebooks/zh/ and solutions/zh/, executed
    python -m lessons.i18n build --allow-untranslated --no-execute --out /tmp/zh
    python -m lessons.i18n compile         # lessons/locale/*/LC_MESSAGES/*.po -> .mo
    python -m lessons.i18n check           # exit 1 with a list if anything is out of step
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import build as _build
from .notebooks import ROOT, update_catalogs

LANGUAGE = "zh_CN"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m lessons.i18n",
                                     description="Catalogs and generated notebooks of a translated edition.")
    parser.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)
    sub = parser.add_subparsers(dest="command", required=True)
    for name, text in (("update", "merge the English markdown cells into the notebook catalogs"),
                       ("status", "per catalog: translated, fuzzy and missing cells; parity problems"),
                       ("build", "generate (and execute) the translated notebooks"),
                       ("check", "exit 1 if a catalog, a generated notebook or a .mo is out of step"),
                       ("compile", "compile the package's .po message catalogs to .mo")):
        command = sub.add_parser(name, help=text, description=text)
        if name != "compile":
            command.add_argument("--lang", default=LANGUAGE, choices=sorted(_build.FOLDERS),
                                 help=f"catalog language (default {LANGUAGE})")
        if name == "status":
            command.add_argument("-v", "--verbose", action="store_true", help="list each problem")
        if name == "build":
            command.add_argument("--allow-untranslated", action="store_true",
                                 help="keep the English text of an untranslated cell (with a warning)")
            command.add_argument("--no-execute", action="store_true", help="write the notebooks unexecuted")
            command.add_argument("--out", type=Path, default=None,
                                 help="write OUT/notebooks/zh and OUT/solutions/zh (default: the repo)")
            command.add_argument("--timeout", type=int, default=300, help="seconds per cell (default 300)")
            command.add_argument("--jobs", type=int, default=1,
                                 help="notebooks executed at the same time (default 1)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    root = args.root.resolve()
    if args.command == "update":
        for po in update_catalogs(args.lang, root):
            print(f"updated {po.relative_to(root).as_posix()}")
        return 0
    if args.command == "compile":
        written = _build.compile_catalogs(root)
        for mo in written:
            print(f"compiled {mo.relative_to(root).as_posix()}")
        if not written:
            print("no catalogs in lessons/locale/*/LC_MESSAGES/")
        return 0
    if args.command == "status":
        rows = _build.catalog_status(args.lang, root)
        print(f"{'catalog':40} {'translated':>10} {'fuzzy':>6} {'missing':>8} {'(unmerged)':>10} "
              f"{'parity':>7}")
        for row in rows:
            print(f"{row.catalog.name:40} {row.translated:10d} {row.fuzzy:6d} {row.missing:8d} "
                  f"{row.unmerged:10d} {len(row.problems):7d}")
            if args.verbose:
                for line in row.stale + row.problems:
                    print(f"    {line}")
        totals = [sum(getattr(r, k) for r in rows) for k in ("translated", "fuzzy", "missing", "unmerged")]
        print(f"{'total':40} {totals[0]:10d} {totals[1]:6d} {totals[2]:8d} {totals[3]:10d} "
              f"{sum(len(r.problems) for r in rows):7d}")
        if totals[3]:
            print("unmerged: the English cell is new or changed; "
                  "python -m lessons.i18n update marks a changed one fuzzy")
        return 0
    if args.command == "build":
        out = args.out.resolve() if args.out else root
        try:
            written = _build.build(args.lang, root, out, allow_untranslated=args.allow_untranslated,
                                   execute=not args.no_execute, timeout=args.timeout, jobs=args.jobs)
        except (_build.UntranslatedError, _build.ExecutionError, ValueError) as error:
            print(f"error: {error}", file=sys.stderr)
            return 1
        print(f"built {len(written)} notebooks under {out}")
        from ..grade import course

        if out == root and root == course.DATA.resolve().parents[2]:  # this checkout's own notebooks
            # The grader finds a written answer that lost its metadata by the question before it,
            # in either edition: its list of the course's cells follows the translated text too.
            return course.main(["--notebooks", str(root / "notebooks")])
        return 0
    if args.command == "check":
        found = _build.check(args.lang, root)
        for line in found:
            print(line)
        if found:
            print(f"{len(found)} problem(s)", file=sys.stderr)
            return 1
        print("all in step")
        return 0
    raise AssertionError(args.command)


if __name__ == "__main__":
    sys.exit(main())
