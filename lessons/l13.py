"""``python -m lessons.l13``: re-run the lesson's experiments and check every claim.

Prints one row per claim: the claim in words, the value the lesson states, the value
computed now, and whether they agree within tolerance. Exits 0 when every claim holds,
1 when any does not (2 for a usage error).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time


def _notebook(value: str) -> str:
    from .claims import notebook_number

    try:
        return notebook_number(value)
    except ValueError:
        message = f"expected a notebook number such as 3 or 03; got {value!r}"
        raise argparse.ArgumentTypeError(message) from None


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
        type=_notebook,
        help="check only the claims of one notebook (3 or 03)",
    )
    p.add_argument("--failed", action="store_true", help="list only the claims that fail (table or JSON)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    start = time.perf_counter()
    from .claims import all_claims, evaluate

    claims = all_claims(args.notebook)
    if args.notebook is not None and not claims:
        known = ", ".join(sorted({c.notebook for c in all_claims()}))
        print(
            f"python -m lessons.l13: no claims for notebook {args.notebook!r}; "
            f"notebooks with claims: {known}",
            file=sys.stderr,
        )
        return 2
    results = [evaluate(c) for c in claims]
    elapsed = time.perf_counter() - start
    failed = [r for r in results if not r.ok]
    status = 1 if failed else 0
    try:
        if args.json:
            _print_json(failed if args.failed else results, len(results) - len(failed), len(failed), elapsed)
        else:
            _print_table(failed if args.failed else results)
            print(
                f"\n{len(results) - len(failed)} of {len(results)} claims hold"
                + (f"; {len(failed)} FAIL" if failed else "")
                + f" (checked in {elapsed:.2f} s)"
            )
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader stopped reading (``| head``): not an error. Python would report the
        # pipe again when it flushes stdout at exit, so point stdout at /dev/null first.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    return status


def _print_json(results, passed: int, failed: int, elapsed: float) -> None:
    payload = {
        "passed": passed,
        "failed": failed,
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


def _print_table(results) -> None:
    from .claims import text_table

    width = min(shutil.get_terminal_size((100, 20)).columns, 200)
    notebooks = sorted({r.claim.notebook for r in results})
    for notebook in notebooks:
        print(f"\nnotebook {notebook}")
        for line in text_table([r for r in results if r.claim.notebook == notebook], width):
            print(line)


if __name__ == "__main__":
    sys.exit(main())
