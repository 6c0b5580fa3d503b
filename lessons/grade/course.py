"""The course's own code cells, as released: shipped with the package (package data).

The grader tells a student's cells from the course's own (a cell of the released student
notebook, unchanged) so that the course's cells that fail are an instructor's detail, never
blamed on the student. It needs no source checkout: ``course_cells.json`` (next to this
module) holds, per notebook, a hash of every code cell of ``notebooks/NN_*.ipynb`` that is
not an answer cell, and under ``NN/raises-exception`` the hashes of those tagged
``raises-exception`` (cells that show an error on purpose: their error is no failure).

A student may have downloaded an earlier version of a notebook: under ``NN/earlier`` (and
``NN/earlier/raises-exception``) it also holds the cells of every version of
``notebooks/NN_*.ipynb`` committed to the checkout's git history that the current one no longer
has, so a cell the course has since changed is still the course's. Regenerate it after
changing a notebook::

    python -m lessons.grade.course            # writes lessons/grade/course_cells.json
    python -m lessons.grade.course --check    # exit 1 if it is stale

Without git or with a shallow clone the earlier versions are not known: writing keeps the
shipped ``earlier`` entries as they are, and ``--check`` compares the current cells only.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

DATA = Path(__file__).with_name("course_cells.json")
RAISES = "/raises-exception"  # NN + RAISES: the course cells of NN that raise on purpose
QUESTION = "/question/"  # NN + QUESTION + grade id: the question cell before a written answer
EARLIER = "/earlier"  # NN + EARLIER (+ RAISES): cells of earlier committed versions only
NOTEBOOK_NAME = re.compile(r"[0-9][0-9]_[^/]*\.ipynb")


def cell_hash(source: str) -> str:
    return hashlib.sha256(source.strip().encode("utf-8", "surrogatepass")).hexdigest()[:20]


@cache
def _data() -> dict:
    try:
        return json.loads(DATA.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def course_cells(notebook: str | None) -> frozenset[str]:
    """Hashes of notebook NN's own code cells, in this version or an earlier one (empty for an
    unknown notebook)."""
    nb = notebook or ""
    return frozenset((*_data().get(nb, ()), *_data().get(nb + EARLIER, ())))


def course_cells_raising(notebook: str | None) -> frozenset[str]:
    """Hashes of notebook NN's own code cells that raise on purpose (tagged ``raises-exception``),
    in this version or an earlier one."""
    nb = notebook or ""
    return frozenset((*_data().get(nb + RAISES, ()), *_data().get(nb + EARLIER + RAISES, ())))


def is_course_cell(source: str, hashes: frozenset[str]) -> bool:
    return cell_hash(source) in hashes


def _own_cells(nb) -> tuple[set[str], set[str]]:
    """(hashes of the course's own code cells, those of them tagged raises-exception) of a notebook."""
    own = [c for c in nb.cells if c.cell_type == "code" and c.source.strip()
           and not (c.metadata.get("nbgrader") or {}).get("solution")]
    return ({cell_hash(c.source) for c in own},
            {cell_hash(c.source) for c in own if "raises-exception" in c.metadata.get("tags", ())})


def compute(notebooks: Path) -> dict[str, list[str]]:
    """{NN: sorted hashes, NN/raises-exception: sorted hashes, NN/question/<grade id>: [hash]}
    from the released student notebooks in ``notebooks``; the last holds the text cell right
    before each written answer (its question), by which an answer cell that lost its nbgrader
    metadata is still found."""
    import nbformat

    out: dict[str, list[str]] = {}
    for path in sorted(notebooks.glob("[0-9][0-9]_*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        own, raising = _own_cells(nb)
        out[path.name[:2]] = sorted(own)
        if raising:
            out[path.name[:2] + RAISES] = sorted(raising)
        translated = [nbformat.read(p, as_version=4) for p in sorted(notebooks.glob(f"*/{path.name}"))]
        for gid, hashes in _questions([nb, *translated]).items():
            out[f"{path.name[:2]}{QUESTION}{gid}"] = sorted(hashes)
    return out


def _questions(notebooks) -> dict[str, set[str]]:
    """{grade id of a written answer: hashes of the text cell right before it} over ``notebooks``
    (a notebook and its translations)."""
    found: dict[str, set[str]] = {}
    for nb in notebooks:
        for before, cell in zip(nb.cells[:-1], nb.cells[1:], strict=True):
            meta = cell.metadata.get("nbgrader") or {}
            if cell.cell_type == "markdown" and meta.get("solution") and meta.get("grade_id"):
                found.setdefault(meta["grade_id"], set()).add(cell_hash(before.source))
    return found


def question_cells(notebook: str | None) -> dict[str, frozenset[str]]:
    """{grade id of a written answer: hashes of the text cell right before it, in any edition
    and any committed version} for notebook NN."""
    out: dict[str, set[str]] = {}
    for where in (QUESTION, EARLIER + QUESTION):
        prefix = f"{notebook or ''}{where}"
        for key, hashes in _data().items():
            if key.startswith(prefix):
                out.setdefault(key[len(prefix):], set()).update(hashes)
    return {gid: frozenset(hashes) for gid, hashes in out.items()}


def _git(folder: Path, *args: str, text: bool = True, stdin=None):
    return subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=text,
                          input=stdin, check=True).stdout


def committed_versions(notebooks: Path) -> dict[str, list[bytes]] | None:
    """{NN: the bytes of every version of ``notebooks/NN_*.ipynb`` and of its translations
    (``notebooks/<lang>/NN_*.ipynb``: the same code cells, their own question cells) committed
    in the history of HEAD}, or None when that history is not all there (no git, not a
    checkout, a shallow clone)."""
    try:
        if _git(notebooks, "rev-parse", "--is-shallow-repository").strip() != "false":
            return None
        prefix = _git(notebooks, "rev-parse", "--show-prefix").strip()
        commits = _git(notebooks, "log", "--format=%H", "HEAD", "--", ".").split()
        wanted: dict[str, str] = {}  # blob id: NN (a version unchanged over many commits is read once)
        for commit in commits:
            for line in _git(notebooks, "ls-tree", "-r", "--full-name", commit, "--", ".").splitlines():
                info, _, name = line.partition("\t")
                parts = name.removeprefix(prefix).split("/")
                if len(parts) <= 2 and NOTEBOOK_NAME.fullmatch(parts[-1]) and info.split()[1:2] == ["blob"]:
                    wanted[info.split()[2]] = parts[-1][:2]
        blobs = _git(notebooks, "cat-file", "--batch", text=False,
                     stdin="".join(f"{blob}\n" for blob in wanted).encode())
    except (OSError, subprocess.CalledProcessError):
        return None
    versions: dict[str, list[bytes]] = {}
    at = 0
    for nb in wanted.values():  # each answer: "<sha> blob <size>\n<content>\n"
        header_end = blobs.index(b"\n", at)
        header = blobs[at:header_end].split()
        if len(header) != 3 or header[1] != b"blob":  # "<spec> missing": the history is not all here
            return None
        size = int(header[2])
        versions.setdefault(nb, []).append(blobs[header_end + 1:header_end + 1 + size])
        at = header_end + 1 + size + 1
    return versions


def compute_earlier(notebooks: Path, current: dict[str, list[str]]) -> dict[str, list[str]] | None:
    """{NN/earlier: hashes, NN/earlier/raises-exception: hashes}: the course cells of every
    committed version of each notebook that ``current`` does not hold; None without the history."""
    import nbformat

    versions = committed_versions(notebooks)
    if versions is None:
        return None
    out: dict[str, list[str]] = {}
    for nb, blobs in sorted(versions.items()):
        own: set[str] = set()
        raising: set[str] = set()
        questions: dict[str, set[str]] = {}
        for blob in blobs:
            version = nbformat.reads(blob.decode("utf-8"), as_version=4)
            cells, raises = _own_cells(version)
            own |= cells
            raising |= raises
            for gid, hashes in _questions([version]).items():
                questions.setdefault(gid, set()).update(hashes)
        for gid, hashes in sorted(questions.items()):
            old = hashes - set(current.get(f"{nb}{QUESTION}{gid}", ()))
            if old:
                out[f"{nb}{EARLIER}{QUESTION}{gid}"] = sorted(old)
        if own - set(current.get(nb, ())):
            out[nb + EARLIER] = sorted(own - set(current.get(nb, ())))
        if raising - set(current.get(nb + RAISES, ())):
            out[nb + EARLIER + RAISES] = sorted(raising - set(current.get(nb + RAISES, ())))
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
    earlier = compute_earlier(args.notebooks, fresh)
    shipped = _data()
    if earlier is None:  # no full history here: keep what was shipped, check only the current cells
        print("no full git history here: the cells of earlier versions are kept as shipped", file=sys.stderr)
        earlier = {key: hashes for key, hashes in shipped.items() if EARLIER in key}
    fresh.update(earlier)
    if args.check:
        stale = sorted(nb for nb in set(fresh) | set(shipped) if fresh.get(nb) != shipped.get(nb))
        if stale:
            print(f"{DATA.name} is stale for {', '.join(stale)}: "
                  "run python -m lessons.grade.course", file=sys.stderr)
            return 1
        return 0
    DATA.write_text(json.dumps(fresh, indent=0, sort_keys=True) + "\n", encoding="utf-8")
    _data.cache_clear()
    own = {nb: hashes for nb, hashes in fresh.items() if "/" not in nb}
    raising = sum(len(hashes) for nb, hashes in fresh.items() if nb.endswith(RAISES) and EARLIER not in nb)
    old = sum(len(hashes) for nb, hashes in fresh.items()
              if EARLIER in nb and not nb.endswith(RAISES) and QUESTION not in nb)
    print(f"wrote {DATA.name}: {sum(map(len, own.values()))} cells of {len(own)} notebooks "
          f"({raising} raise on purpose), and {old} cells of their earlier versions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
