"""``python -m lessons.l13``: re-run the lesson's experiments and check every claim.

Prints one row per claim: the claim in words, the value the lesson states, the value
computed now, and whether they agree within tolerance. Exits 0 when every claim holds,
1 when any does not (2 for a usage error).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import textwrap
import time


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m lessons.l13",
        description="Re-run lesson 13's experiments (RoPE) and check that every claim in "
        "the notebooks holds. Exit status 0 when all hold, 1 otherwise.",
    )
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument(
        "--notebook",
        metavar="NN",
        help="check only the claims of one notebook (01 .. 09)",
    )
    p.add_argument("--failed", action="store_true", help="list only the claims that fail")
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    start = time.perf_counter()
    from .claims import all_claims, evaluate

    claims = all_claims(args.notebook)
    if args.notebook is not None and not claims:
        print(
            f"python -m lessons.l13: no claims for notebook {args.notebook!r}; "
            "use a two-digit number such as 01",
            file=sys.stderr,
        )
        return 2
    results = [evaluate(c) for c in claims]
    elapsed = time.perf_counter() - start
    failed = [r for r in results if not r.ok]
    if args.json:
        payload = {
            "passed": len(results) - len(failed),
            "failed": len(failed),
            "seconds": round(elapsed, 4),
            "claims": [
                {
                    "id": r.claim.id,
                    "notebook": r.claim.notebook,
                    "claim": r.claim.text,
                    "stated": r.claim.stated_text(),
                    "computed": r.computed_text(),
                    "tolerance": max(r.claim.tolerances()),
                    "ok": r.ok,
                    **({"error": r.error} if r.error else {}),
                }
                for r in results
            ],
        }
        json.dump(payload, sys.stdout, indent=2)
        print()
    else:
        _print_table(failed if args.failed else results)
        print(
            f"\n{len(results) - len(failed)} of {len(results)} claims hold"
            + (f"; {len(failed)} FAIL" if failed else "")
            + f" (checked in {elapsed:.2f} s)"
        )
    return 1 if failed else 0


def _print_table(results) -> None:
    width = min(shutil.get_terminal_size((120, 20)).columns, 160)
    text_width = max(30, width - 4 - 2 * 30 - 3)
    header = f"{'':4}{'claim':<{text_width}} {'stated':<30}{'computed':<30}"
    notebook = None
    for r in results:
        if r.claim.notebook != notebook:
            notebook = r.claim.notebook
            print(f"\nnotebook {notebook}")
            print(header)
        mark = " ok " if r.ok else "FAIL"
        lines = textwrap.wrap(r.claim.text, text_width) or [""]
        stated, computed = r.claim.stated_text(), r.computed_text()
        if len(stated) < 30 and len(computed) < 30:
            print(f"{mark}{lines[0]:<{text_width}} {stated:<30}{computed}")
        else:
            print(f"{mark}{lines[0]}")
            lines.append(f"stated {stated}  computed {computed}")
        for line in lines[1:]:
            print(f"{'':4}{line}")


if __name__ == "__main__":
    sys.exit(main())
