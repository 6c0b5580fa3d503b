"""Finding the submissions: files and folders, student ids, which notebook, shards."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from ..exercises import all_exercises

SCAN_BYTES = 20 * 1024 * 1024  # how much of a file is searched for nbgrader ids
_NB_NAME = re.compile(r"^(\d\d)_")


class NothingToGrade(Exception):
    """No notebook was found where submissions were expected (the message says what was found)."""


@dataclass
class Submission:
    path: Path
    student: str
    notebook: str | None  # "06", or None when it cannot be told


def _clean_id(text: str) -> str:
    """A name safe as a file name: letters and digits of any script (a Chinese class's folders
    are named 张三, 李四: they stay apart), ``.``, ``@``, ``-``; anything else becomes ``_``."""
    text = re.sub(r"[^\w.@-]+", "_", unicodedata.normalize("NFC", text)).strip("._") or "student"
    return text[:80]


def student_id(path: Path, root: Path | None = None) -> str:
    """``alice.ipynb`` -> ``alice``. A file named like a course notebook (``NN_*.ipynb``) takes
    the first folder below the folder given on the command line (``root``), else its own
    folder: ``subs/bob/06_exercises.ipynb`` -> ``bob``, and nbgrader's
    ``submitted/carol/ps1/06_exercises.ipynb`` (``root`` = ``submitted``) -> ``carol``."""
    if _NB_NAME.match(path.name):
        if root is not None:
            parts = path.relative_to(root).parts
            if len(parts) > 1:
                return _clean_id(parts[0])
        if path.parent.name:
            return _clean_id(path.parent.name)
    return _clean_id(path.stem if path.suffix == ".ipynb" else path.name)


def known_notebooks() -> list[str]:
    return sorted({e.notebook for e in all_exercises()})


def notebook_of(path: Path, forced: str | None, known: list[str]) -> str | None:
    if forced:
        return forced
    for part in (path.name, path.parent.name):
        m = _NB_NAME.match(part)
        if m and m.group(1) in known:
            return m.group(1)
    return known[0] if len(known) == 1 else None


def notebook_from_ids(data: bytes) -> str | None:
    """The notebook whose exercise ids (``exNN_*`` in nbgrader metadata) the file mentions most."""
    known = set(known_notebooks())
    found = re.findall(rb'"grade_id"\s*:\s*"ex(\d\d)_', data[:SCAN_BYTES])
    counts = Counter(f.decode() for f in found if f.decode() in known)
    return max(counts, key=counts.get) if counts else None


def _what_is_there(folder: Path) -> str:
    files = [p for p in folder.rglob("*") if p.is_file()]
    if not files:
        return "it is empty"
    kinds = Counter(p.suffix or "(no extension)" for p in files)
    listed = ", ".join(f"{n} {ext}" for ext, n in kinds.most_common(5))
    examples = ", ".join(str(p.relative_to(folder)) for p in sorted(files)[:3])
    return f"it holds {len(files)} file{'s' if len(files) != 1 else ''} ({listed}; e.g. {examples})"


EXPECTED_LAYOUT = ("expected notebooks (*.ipynb) such as SUBS/alice.ipynb, SUBS/bob/06_exercises.ipynb "
                   "or nbgrader's SUBS/carol/ps1/06_exercises.ipynb")


def discover(inputs: list[Path], forced_notebook: str | None = None) -> list[Submission]:
    """Files as given (whatever their name); folders searched for ``*.ipynb``.

    Raises :class:`NothingToGrade` when a folder holds no notebook at all, saying what it
    holds and what was expected; FileNotFoundError for a path that does not exist.
    """
    known = known_notebooks()
    files: list[tuple[Path, Path | None]] = []
    for item in inputs:
        if item.is_dir():
            found = [(p, item) for p in sorted(item.rglob("*.ipynb"))
                     if p.is_file() and ".ipynb_checkpoints" not in p.parts]
            if not found:
                raise NothingToGrade(f"no notebook to grade in {item}: {_what_is_there(item)}; "
                                     + EXPECTED_LAYOUT.replace("SUBS", str(item)))
            files += found
        elif item.exists():
            files.append((item, None))
        else:
            raise FileNotFoundError(f"no such file or folder: {item}")
    seen: dict[str, int] = {}
    subs = []
    for f, root in files:
        sid = student_id(f, root)
        seen[sid] = seen.get(sid, 0) + 1
        if seen[sid] > 1:
            sid = f"{sid}-{seen[sid]}"
        subs.append(Submission(f, sid, notebook_of(f, forced_notebook, known)))
    return subs


def parse_shard(text: str) -> tuple[int, int]:
    """``"K/N"`` -> (K, N) with 0 <= K < N (Slurm's and Kubernetes' indices start at 0)."""
    m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text or "")
    if not m:
        raise ValueError(f"--shard must be K/N (e.g. 0/4: the first of four shards); got {text!r}")
    k, n = int(m.group(1)), int(m.group(2))
    if n < 1 or not 0 <= k < n:
        raise ValueError(f"--shard K/N needs N >= 1 and 0 <= K < N; got {text!r}")
    return k, n


def shard_of(student: str, n: int) -> int:
    """The shard (0..n-1) of a student: from a hash of the id alone, so it does not change
    when other files are added."""
    return int.from_bytes(hashlib.sha256(student.encode("utf-8")).digest()[:8], "big") % n
