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
MAX_ID_CHARS = 80
MAX_ID_BYTES = 120  # a record's file name is the id plus a suffix and a temporary prefix: under 255 bytes
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
    text = re.sub(r"[^\w.@-]+", "_", unicodedata.normalize("NFC", text))
    text = text.strip("._").lstrip("-@._") or "student"  # no leading - or @: a spreadsheet formula
    text = text[:MAX_ID_CHARS]
    while len(text.encode("utf-8")) > MAX_ID_BYTES:  # a file name holds 255 bytes; 80 CJK characters do not
        text = text[:-1]
    return text


def _name_of(path: Path, root: Path | None = None) -> str:
    """The name a student id is made from (see :func:`student_id`), before cleaning."""
    if _NB_NAME.match(path.name):
        if root is not None:
            parts = path.relative_to(root).parts
            if len(parts) > 1:
                return parts[0]
        if path.parent.name:
            return path.parent.name
    return path.stem if path.suffix == ".ipynb" else path.name


def student_id(path: Path, root: Path | None = None) -> str:
    """``alice.ipynb`` -> ``alice``. A file named like a course notebook (``NN_*.ipynb``) takes
    the first folder below the folder given on the command line (``root``), else its own
    folder: ``subs/bob/06_exercises.ipynb`` -> ``bob``, and nbgrader's
    ``submitted/carol/ps1/06_exercises.ipynb`` (``root`` = ``submitted``) -> ``carol``."""
    return _clean_id(_name_of(path, root))


def unique_ids(names: list[tuple[str, str]], from_folder: list[bool] | None = None) -> list[str]:
    """One id per file from its (cleaned id, name before cleaning), every id different.

    Who keeps an id that several files clean to: first a file whose id comes from a student's
    folder (``Zoe Smith/06_exercises.ipynb`` is ``Zoe_Smith`` even beside a planted
    ``aaron/Zoe_Smith.ipynb``), the one whose folder name is the id exactly before the others;
    then a file whose own name is its id exactly (``alice.ipynb`` stays ``alice`` next to
    ``_alice.ipynb``). Names are compared in Unicode's composed form (NFC), as ids are made.
    The others, in order, take the id or, when it is taken, ``id-2``, ``id-3``, ... skipping
    every id that a file has of its own (a file named ``bob-2.ipynb`` keeps ``bob-2``); a
    suffixed id is trimmed to the same length limits as any id."""
    own = {sid for sid, _ in names}
    from_folder = from_folder or [False] * len(names)
    out: list[str | None] = [None] * len(names)
    used: set[str] = set()
    for folder, exact in ((True, True), (True, False), (False, True)):
        for i, (sid, raw) in enumerate(names):
            same = unicodedata.normalize("NFC", raw) == sid
            if from_folder[i] is folder and same is exact and sid not in used and out[i] is None:
                out[i] = sid
                used.add(sid)
    for i, (sid, _) in enumerate(names):
        if out[i] is not None:
            continue
        candidate, n = sid, 1
        while candidate in used or (n > 1 and candidate in own):
            n += 1
            candidate = _fit(sid, f"-{n}")
        out[i] = candidate
        used.add(candidate)
    return out  # type: ignore[return-value]


def _fit(sid: str, suffix: str) -> str:
    """``sid + suffix`` within an id's limits (80 characters, MAX_ID_BYTES bytes), ``sid`` trimmed."""
    while sid and (len(sid) + len(suffix) > MAX_ID_CHARS
                   or len((sid + suffix).encode("utf-8")) > MAX_ID_BYTES):
        sid = sid[:-1]
    return sid + suffix


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
    ids = unique_ids([(student_id(f, root), _name_of(f, root)) for f, root in files],
                     [_NB_NAME.match(f.name) is not None for f, _ in files])
    return [Submission(f, sid, notebook_of(f, forced_notebook, known))
            for (f, _), sid in zip(files, ids, strict=True)]


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
