"""Loading a submitted file: its code cells (and written answers), whatever shape it is in.

Outputs are thrown away before anything else (they are never run, and a solved notebook
with big plots is still a notebook): what is limited is the size of the code and text the
student wrote, not the size of the file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

MAX_FILE_BYTES = 512 * 1024 * 1024  # read at all (a guard against a file that fills the memory)
MAX_SOURCE_CHARS = 2_000_000  # the code and markdown cells' text, all together
# "[" and "{" in the file, strings included (a bound on the arrays and objects json.loads builds):
# a notebook's images are base64 text without them; its code's brackets are a few per line.
MAX_CONTAINERS = 2_000_000


class NotANotebook(Exception):
    pass


@dataclass
class Loaded:
    """A submission as read: its code cells, written answers, notes and language."""

    code: list = field(default_factory=list)  # [(cell number, source)]
    markdown: list = field(default_factory=list)  # [(cell number, source, nbgrader grade_id or None)]
    notes: list = field(default_factory=list)
    language: str = "en"  # the notebook's metadata lessons.language ("en" or "zh_CN")


def language_of(raw: dict) -> tuple[str, str | None]:
    """The language of a notebook (its metadata ``lessons.language``, as the Chinese edition's
    generated notebooks carry it; else English) and a note when the value cannot be used."""
    from ..i18n import normalize

    meta = raw.get("metadata") if isinstance(raw, dict) else None
    lessons = meta.get("lessons") if isinstance(meta, dict) else None
    value = lessons.get("language") if isinstance(lessons, dict) else None
    if value is None:
        return "en", None
    try:
        return normalize(value), None
    except (TypeError, ValueError):
        return "en", f"notebook language {str(value)[:40]!r} is not one the course has; feedback in English"


def _drop_outputs(raw: dict) -> None:
    cells = raw.get("cells")
    if cells is None and isinstance(raw.get("worksheets"), list):
        cells = [c for w in raw["worksheets"] if isinstance(w, dict) for c in (w.get("cells") or [])]
    for c in cells if isinstance(cells, list) else []:
        if isinstance(c, dict):
            if "outputs" in c:
                c["outputs"] = []
            if "execution_count" in c:
                c["execution_count"] = None
            c.pop("attachments", None)


def load_notebook(data: bytes):
    """The notebook as nbformat v4 (outputs dropped) or a loose reading, and notes.

    Returns (code cells as [(cell number, source)], markdown cells as [(number, source,
    nbgrader grade_id or None)], notes). Cell metadata is ignored for code (students can
    delete, duplicate, reorder or retag cells). Raises :class:`NotANotebook` with a reason
    an instructor can read.
    """
    loaded = read_submission(data)
    return loaded.code, loaded.markdown, loaded.notes


def read_submission(data: bytes) -> Loaded:
    """:func:`load_notebook` and the notebook's language (:func:`language_of`)."""
    import nbformat

    notes = []
    if len(data) > MAX_FILE_BYTES:
        raise NotANotebook(f"not graded: the file is {len(data) >> 20} MB (limit {MAX_FILE_BYTES >> 20} MB)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise NotANotebook("not a notebook: the file is not UTF-8 text") from None
    containers = data.count(b"[") + data.count(b"{")
    if containers > MAX_CONTAINERS:  # parsing them all could take gigabytes (56 bytes per empty list)
        raise NotANotebook(f"not graded: the file holds {containers:,} JSON arrays or objects "
                           f"(limit {MAX_CONTAINERS:,}); a notebook, even with its outputs, holds far fewer")
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise NotANotebook(f"not a notebook: invalid JSON at line {exc.lineno}") from None
    if not isinstance(raw, dict) or not ("cells" in raw or "worksheets" in raw):
        raise NotANotebook("not a notebook: JSON without notebook cells")
    _drop_outputs(raw)
    language, note = language_of(raw)
    if note:
        notes.append(note)
    version = raw.get("nbformat")
    try:
        nb = nbformat.reads(json.dumps(raw), as_version=4)
        code = [(i, c.source) for i, c in enumerate(nb.cells, start=1) if c.cell_type == "code"]
        markdown = [(i, c.source, (c.metadata.get("nbgrader") or {}).get("grade_id"))
                    for i, c in enumerate(nb.cells, start=1) if c.cell_type == "markdown"]
        if isinstance(version, int) and version < 4:
            notes.append(f"old notebook format (v{version}), converted")
    except Exception:
        code = _loose_cells(raw)
        if code is None:
            raise NotANotebook("not a notebook: its structure is not nbformat's") from None
        markdown = []
        notes.append("the notebook does not validate; its code cells were read as they are")
    code = [(n, s) for n, s in code if isinstance(s, str) and s.strip()]
    if any(_has_surrogates(s) for _, s in code) or any(_has_surrogates(s) for _, s, _ in markdown):
        # JSON's \udcff escapes give lone surrogates: not text a kernel, a CSV or a hash takes.
        code = [(n, valid_text(s)) for n, s in code]
        markdown = [(n, valid_text(s), gid) for n, s, gid in markdown]
        notes.append("characters that are not valid Unicode (lone surrogates) were kept as \\uXXXX escapes")
    size = sum(len(s) for _, s in code) + sum(len(s) for _, s, _ in markdown if isinstance(s, str))
    if size > MAX_SOURCE_CHARS:
        raise NotANotebook(f"not graded: its cells hold {size:,} characters of code and text "
                           f"(limit {MAX_SOURCE_CHARS:,}; outputs do not count)")
    return Loaded(code, markdown, notes, language)


def _has_surrogates(text) -> bool:
    return isinstance(text, str) and any("\ud800" <= c <= "\udfff" for c in text)


def valid_text(text):
    """``text`` with every lone surrogate written as a ``\\uXXXX`` escape (valid UTF-8 then);
    anything else unchanged. In a Python string literal the escape means the same character."""
    if not isinstance(text, str):
        return text
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def load_cells(data: bytes) -> tuple[list[tuple[int, str]], list[str]]:
    """The code cells (cell number, source) and notes (see :func:`load_notebook`)."""
    code, _, notes = load_notebook(data)
    return code, notes


def _loose_cells(raw: dict):
    cells = raw.get("cells")
    if cells is None and isinstance(raw.get("worksheets"), list) and raw["worksheets"]:
        cells = raw["worksheets"][0].get("cells") if isinstance(raw["worksheets"][0], dict) else None
    if not isinstance(cells, list):
        return None
    out = []
    for i, c in enumerate(cells, start=1):
        if not isinstance(c, dict) or c.get("cell_type") != "code":
            continue
        src = c.get("source", c.get("input", ""))
        if isinstance(src, list) and all(isinstance(s, str) for s in src):
            src = "".join(src)
        if isinstance(src, str):
            out.append((i, src))
    return out
