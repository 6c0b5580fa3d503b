"""The course's own code cells, as released: shipped with the package (package data).

The grader tells a student's cells from the course's own (a cell of the released student
notebook, unchanged) so that the course's cells that fail are an instructor's detail, never
blamed on the student. It needs no source checkout: ``course_cells.json`` (next to this
module) holds, per notebook, a hash of every code cell of ``notebooks/NN_*.ipynb`` that is
not an answer cell, and under ``NN/raises-exception`` the hashes of those tagged
``raises-exception`` (cells that show an error on purpose: their error is no failure).
Regenerate it after changing a notebook::

    python -m lessons.grade.course            # writes lessons/grade/course_cells.json
    python -m lessons.grade.course --check    # exit 1 if it is stale
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from functools import cache
from pathlib import Path

DATA = Path(__file__).with_name("course_cells.json")
RAISES = "/raises-exception"  # NN + RAISES: the course cells of NN that raise on purpose


def cell_hash(source: str) -> str:
    return hashlib.sha256(source.strip().encode("utf-8")).hexdigest()[:20]


@cache
def _data() -> dict:
    try:
        return json.loads(DATA.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def course_cells(notebook: str | None) -> frozenset[str]:
    """Hashes of notebook NN's own code cells (empty for an unknown notebook)."""
    return frozenset(_data().get(notebook or "", ()))


def course_cells_raising(notebook: str | None) -> frozenset[str]:
    """Hashes of notebook NN's own code cells that raise on purpose (tagged ``raises-exception``)."""
    return frozenset(_data().get(f"{notebook or ''}{RAISES}", ()))


def is_course_cell(source: str, hashes: frozenset[str]) -> bool:
    return cell_hash(source) in hashes


def compute(notebooks: Path) -> dict[str, list[str]]:
    """{NN: sorted hashes, NN/raises-exception: sorted hashes} from the released student
    notebooks in ``notebooks``."""
    import nbformat

    out: dict[str, list[str]] = {}
    for path in sorted(notebooks.glob("[0-9][0-9]_*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        own = [c for c in nb.cells if c.cell_type == "code" and c.source.strip()
               and not (c.metadata.get("nbgrader") or {}).get("solution")]
        out[path.name[:2]] = sorted({cell_hash(c.source) for c in own})
        raising = sorted({cell_hash(c.source) for c in own
                          if "raises-exception" in c.metadata.get("tags", ())})
        if raising:
            out[path.name[:2] + RAISES] = raising
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m lessons.grade.course", description=__doc__.splitlines()[0])
    p.add_argument("--notebooks", type=Path, default=Path("notebooks"), help="the released notebooks")
    p.add_argument("--check", action="store_true", help="exit 1 if the shipped data is stale")
    args = p.parse_args(argv)
    if not args.notebooks.is_dir():
        print(f"no folder {args.notebooks} (run from the course's checkout)", file=sys.stderr)
        return 2
    fresh = compute(args.notebooks)
    if args.check:
        stale = sorted(nb for nb in set(fresh) | set(_data()) if fresh.get(nb) != _data().get(nb))
        if stale:
            print(f"{DATA.name} is stale for notebook(s) {', '.join(stale)}: "
                  "run python -m lessons.grade.course", file=sys.stderr)
            return 1
        return 0
    DATA.write_text(json.dumps(fresh, indent=0, sort_keys=True) + "\n", encoding="utf-8")
    own = {nb: hashes for nb, hashes in fresh.items() if not nb.endswith(RAISES)}
    raising = sum(len(hashes) for nb, hashes in fresh.items() if nb.endswith(RAISES))
    print(f"wrote {DATA.name}: {sum(map(len, own.values()))} cells of {len(own)} notebooks "
          f"({raising} raise on purpose)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
