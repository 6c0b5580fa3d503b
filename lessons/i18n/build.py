"""The translated notebooks, made from the English ones and the catalogs; and the checks that
keep them in step.

``notebooks/NN_x.ipynb`` -> ``notebooks/zh/NN_x.ipynb`` (and ``solutions/`` likewise): every
markdown cell is replaced by its catalog translation (exact cell id and English text, not
fuzzy), every code cell is the English one (same id, source and metadata, nbgrader's
included), the notebook's metadata says its language and its source, and the outputs are
made by executing the notebook top to bottom with :mod:`lessons.run_notebooks`.
"""

from __future__ import annotations

import contextlib
import copy
import fcntl
import io
import os
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from . import MARKER
from .notebooks import (
    ROOT,
    catalog_dir,
    english_notebooks,
    read_catalog,
    translatable_cells,
)

# The folder of a language's generated notebooks, under notebooks/ and solutions/.
FOLDERS = {"zh_CN": "zh"}
LOCK_NAME = "l13-notebooks.lock"


class UntranslatedError(RuntimeError):
    """A notebook has markdown cells with no (non-fuzzy) translation in its catalog."""


@dataclass
class Built:
    """One generated notebook before it is written: where it goes and what it misses."""

    source: Path  # the English notebook
    target: Path
    notebook: object
    untranslated: list[str] = field(default_factory=list)  # cell ids kept in English


def language_folder(language: str) -> str:
    if language not in FOLDERS:
        raise ValueError(f"language must be one of {', '.join(FOLDERS)}; got {language!r}")
    return FOLDERS[language]


def target_of(english: Path, language: str, root: Path = ROOT, out: Path | None = None) -> Path:
    """``<root>/notebooks/NN_x.ipynb`` -> ``<out>/notebooks/zh/NN_x.ipynb``."""
    relative = english.relative_to(root)
    return (out or root) / relative.parent / language_folder(language) / relative.name


def translation(catalog, cell) -> str | None:
    """The catalog's translation of one English markdown cell, or None (missing or fuzzy)."""
    if catalog is None:
        return None
    message = catalog.get(cell.source, context=cell.id)
    if message is None or message.fuzzy or not message.string:
        return None
    return message.string


def load_catalog(stem: str, language: str, root: Path = ROOT):
    po = catalog_dir(language, root) / f"{stem}.po"
    return read_catalog(po, language) if po.exists() else None


def translated_notebook(english: Path, catalog, language: str, root: Path = ROOT,
                        out: Path | None = None) -> Built:
    """The translated notebook of one English file (outputs cleared, not executed)."""
    nb = nbformat.read(english, as_version=4)
    translated = copy.deepcopy(nb)
    untranslated = []
    translatable = {id(cell) for cell in translatable_cells(nb)}
    for cell, new in zip(nb.cells, translated.cells, strict=True):
        if cell.cell_type == "code":
            new.outputs = []
            new.execution_count = None
            new.metadata.pop("execution", None)
        elif id(cell) in translatable:
            text = translation(catalog, cell)
            if text is None:
                untranslated.append(cell.id)
            else:
                new.source = text
    translated.metadata["lessons"] = {"language": language,
                                      "source": english.relative_to(root).as_posix()}
    return Built(english, target_of(english, language, root, out), translated, untranslated)


def expected_notebooks(language: str = "zh_CN", root: Path = ROOT, out: Path | None = None) -> list[Built]:
    """Every translated notebook the build would write now (English kept where untranslated)."""
    built = []
    for stem, paths in english_notebooks(root).items():
        catalog = load_catalog(stem, language, root)
        built.extend(translated_notebook(path, catalog, language, root, out) for path in paths)
    return built


def _inherited_fd(lock: Path) -> int | None:
    """The fd of ``lock`` inherited from ``flock FILE command``, if any: it already holds the
    lock (a second open of the file would wait for it forever)."""
    fd_dir = Path("/proc/self/fd")
    if fd_dir.is_dir():
        for entry in fd_dir.iterdir():
            with contextlib.suppress(OSError):
                if Path(os.readlink(entry)) == lock.resolve():
                    return int(entry.name)
    return None


@contextlib.contextmanager
def notebook_lock(out: Path, root: Path = ROOT):
    """Hold the repo's notebook lock (``flock .git/l13-notebooks.lock``) while writing into the
    repo; writing elsewhere (``--out /tmp/x``) needs no lock."""
    git = root / ".git"
    inside = out.resolve() == root.resolve() or root.resolve() in out.resolve().parents
    if not inside or not git.is_dir():
        yield
        return
    lock = git / LOCK_NAME
    inherited = _inherited_fd(lock)
    if inherited is not None:
        fcntl.flock(inherited, fcntl.LOCK_EX)  # already ours: returns at once; released by its owner
        yield
        return
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def build(language: str = "zh_CN", root: Path = ROOT, out: Path | None = None, *,
          allow_untranslated: bool = False, execute: bool = True, timeout: int = 300, jobs: int = 1,
          log=print) -> list[Path]:
    """Write (and execute, ``jobs`` notebooks at a time) every translated notebook; return their paths.

    Refuses (:class:`UntranslatedError`, nothing written) when a markdown cell has no
    translation, unless ``allow_untranslated`` (then the cell stays English and a warning
    names it)."""
    if not isinstance(jobs, int) or isinstance(jobs, bool) or jobs < 1:
        raise ValueError(f"jobs must be a whole number of at least 1; got {jobs!r}")
    out = Path(out) if out is not None else root
    built = expected_notebooks(language, root, out)
    gaps = [b for b in built if b.untranslated]
    if gaps and not allow_untranslated:
        lines = [f"  {b.source.relative_to(root).as_posix()}: {len(b.untranslated)} cell(s) without a "
                 f"translation: {', '.join(b.untranslated)}" for b in gaps]
        raise UntranslatedError(
            f"{sum(len(b.untranslated) for b in gaps)} markdown cell(s) have no {language} translation "
            "(missing or fuzzy) in locale/" + language + "/notebooks/*.po:\n" + "\n".join(lines)
            + "\n(translate them, or pass --allow-untranslated to keep the English)")
    for b in gaps:
        print(f"warning: {b.target.relative_to(out).as_posix()}: {len(b.untranslated)} cell(s) kept in "
              f"English: {', '.join(b.untranslated)}", file=sys.stderr)
    from ..run_notebooks import stored

    written, previous, before = [], {}, {}
    with notebook_lock(out, root):
        for b in built:
            b.target.parent.mkdir(parents=True, exist_ok=True)
            (b.target.parent / MARKER).write_text(language + "\n", encoding="utf-8")
            previous[b.target] = stored(b.target)  # kept if a run changes only its ids
            before[b.target] = b.target.read_bytes() if b.target.exists() else None
            nbformat.validate(b.notebook)
            nbformat.write(b.notebook, b.target)
            written.append(b.target)
        if execute:
            total = time.perf_counter()
            for path, seconds in _execute(written, timeout, jobs, previous):
                log(f"{seconds:6.1f} s  {path.relative_to(out).as_posix()}")
            log(f"{time.perf_counter() - total:6.1f} s  all {len(written)} notebooks")
        changed = [path for path in written if path.read_bytes() != before[path]]
        log(f"{len(changed)} of {len(written)} notebooks changed: "
            + (", ".join(path.relative_to(out).as_posix() for path in changed) or "none"))
    return written


class ExecutionError(RuntimeError):
    """A generated notebook failed to run top to bottom."""


def _run_one(path: Path, timeout: int, previous=None) -> tuple[Path, float]:
    # run_notebooks.execute_notebook only: its main() would refresh lessons/grade/course_cells.json
    # from the English notebooks/, which the translated notebooks must never touch.
    from ..run_notebooks import execute_notebook

    try:
        return path, execute_notebook(path, timeout, previous=previous)
    except Exception as error:  # nbclient's CellExecutionError, a timeout, a dead kernel
        text = re.sub(r"\x1b\[[0-9;]*m", "", str(error))  # the traceback's terminal colours
        raise ExecutionError(f"{path}: {type(error).__name__}: {text[-2000:]}") from None


def _execute(paths: list[Path], timeout: int, jobs: int, previous: dict | None = None):
    previous = previous or {}
    if jobs == 1:
        for path in paths:
            yield _run_one(path, timeout, previous.get(path))
        return
    from concurrent.futures import ProcessPoolExecutor, as_completed

    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(_run_one, path, timeout, previous.get(path)) for path in paths]
        for future in as_completed(futures):
            yield future.result()


def _cell_view(cell) -> tuple:
    """What a generated cell must match (its outputs are the execution's, not compared)."""
    metadata = {k: v for k, v in cell.metadata.items() if k != "execution"}
    return cell.cell_type, cell.get("id"), cell.source, metadata


def notebook_differences(built: Built, root: Path = ROOT) -> list[str]:
    """How the notebook on disk differs from what the build would write (empty: none)."""
    where = built.target.relative_to(root).as_posix() if root in built.target.parents else str(built.target)
    if not built.target.exists():
        return [f"{where}: missing (run python -m lessons.i18n build)"]
    on_disk = nbformat.read(built.target, as_version=4)
    out = []
    if on_disk.metadata.get("lessons") != built.notebook.metadata["lessons"]:
        out.append(f"{where}: metadata 'lessons' is {on_disk.metadata.get('lessons')!r}, "
                   f"expected {built.notebook.metadata['lessons']!r}")
    want = [_cell_view(c) for c in built.notebook.cells]
    got = [_cell_view(c) for c in on_disk.cells]
    if len(want) != len(got):
        out.append(f"{where}: {len(got)} cells, the build makes {len(want)}")
    for index, (w, g) in enumerate(zip(want, got, strict=False)):
        if w != g:
            parts = zip(("type", "id", "source", "metadata"), w, g, strict=True)
            what = [name for name, a, b in parts if a != b]
            out.append(f"{where}: cell {index} ({w[1]}): {', '.join(what)} differ from the build")
    return out


def stray_notebooks(language: str = "zh_CN", root: Path = ROOT) -> list[Path]:
    """Generated notebooks whose English source is gone."""
    expected = {b.target for b in expected_notebooks(language, root)}
    folder = language_folder(language)
    found = [p for base in ("notebooks", "solutions") for p in (root / base / folder).glob("*.ipynb")]
    return sorted(p for p in found if p not in expected)


# --- package message catalogs (.po -> .mo) ------------------------------------------------------

def package_catalogs(root: Path = ROOT) -> list[Path]:
    return sorted((root / "lessons" / "locale").glob("*/LC_MESSAGES/*.po"))


def compiled(po: Path) -> bytes:
    """The .mo bytes of one .po (fuzzy entries left out): the same bytes every time."""
    from babel.messages.mofile import write_mo

    language = po.parent.parent.name
    catalog = read_catalog(po, language)
    buffer = io.BytesIO()
    write_mo(buffer, catalog, use_fuzzy=False)
    return buffer.getvalue()


def compile_catalogs(root: Path = ROOT) -> list[Path]:
    written = []
    for po in package_catalogs(root):
        mo = po.with_suffix(".mo")
        data = compiled(po)
        if not mo.exists() or mo.read_bytes() != data:
            mo.write_bytes(data)
        written.append(mo)
    return written


def stale_mo(root: Path = ROOT) -> list[str]:
    out = []
    for po in package_catalogs(root):
        mo = po.with_suffix(".mo")
        rel = mo.relative_to(root).as_posix()
        if not mo.exists():
            out.append(f"{rel}: missing (run python -m lessons.i18n compile)")
        elif mo.read_bytes() != compiled(po):
            out.append(f"{rel}: stale, differs from its .po (run python -m lessons.i18n compile)")
    return out


# --- catalogs: complete, current, faithful ------------------------------------------------------

@dataclass
class CatalogStatus:
    catalog: Path
    translated: int = 0
    fuzzy: int = 0
    missing: int = 0  # no translation: an empty msgstr, or no entry at all
    unmerged: int = 0  # of those, no entry: the English is new or changed (run update)
    problems: list[str] = field(default_factory=list)  # parity of the translated messages
    stale: list[str] = field(default_factory=list)  # current English cells with no usable translation


def catalog_status(language: str = "zh_CN", root: Path = ROOT) -> list[CatalogStatus]:
    """Per notebook catalog: its counts of the current English cells, what is stale, and the
    parity problems of its translations."""
    from .parity import problems

    out = []
    for stem, paths in english_notebooks(root).items():
        po = catalog_dir(language, root) / f"{stem}.po"
        status = CatalogStatus(po)
        catalog = read_catalog(po, language) if po.exists() else None
        if catalog is None:
            status.stale.append(f"{po.relative_to(root).as_posix()}: no catalog "
                                "(run python -m lessons.i18n update)")
        seen = set()
        for path in paths:
            nb = nbformat.read(path, as_version=4)
            for cell in translatable_cells(nb):
                key = (cell.id, cell.source)
                if key in seen:
                    continue
                seen.add(key)
                message = catalog.get(cell.source, context=cell.id) if catalog is not None else None
                where = f"{path.relative_to(root).as_posix()} cell {cell.id}"
                if message is None:
                    status.missing += 1
                    status.unmerged += 1
                    if catalog is not None:
                        status.stale.append(f"{where}: not in the catalog "
                                            "(run python -m lessons.i18n update)")
                elif message.fuzzy:
                    status.fuzzy += 1
                    status.stale.append(f"{where}: fuzzy (the English changed; review the translation "
                                        "and clear the flag)")
                elif not message.string:
                    status.missing += 1
                    status.stale.append(f"{where}: no translation")
                else:
                    status.translated += 1
                    status.problems.extend(f"{where}: {p}"
                                           for p in problems(message.id, message.string, language, root))
        out.append(status)
    return out


def check(language: str = "zh_CN", root: Path = ROOT) -> list[str]:
    """Everything that is out of step (empty: all in step): catalogs, generated notebooks, .mo."""
    out = []
    for status in catalog_status(language, root):
        out.extend(f"stale: {line}" for line in status.stale)
        out.extend(f"parity: {line}" for line in status.problems)
    stems = set(english_notebooks(root))
    for po in sorted(catalog_dir(language, root).glob("*.po")):
        if po.stem not in stems:
            out.append(f"stale: {po.relative_to(root).as_posix()}: no English notebook {po.stem}.ipynb")
    for built in expected_notebooks(language, root):
        out.extend(f"notebook: {line}" for line in notebook_differences(built, root))
    for path in stray_notebooks(language, root):
        out.append(f"notebook: {path.relative_to(root).as_posix()}: no English source")
    folder = language_folder(language)
    for base in ("notebooks", "solutions"):
        marker = root / base / folder / MARKER
        if (root / base / folder).is_dir() and (
                not marker.exists() or marker.read_text(encoding="utf-8").strip() != language):
            out.append(f"notebook: {marker.relative_to(root).as_posix()}: missing or not {language!r}")
    out.extend(f"mo: {line}" for line in stale_mo(root))
    return out
