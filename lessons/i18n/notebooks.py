"""Translation catalogs of the notebooks: one gettext ``.po`` file per notebook and language.

The English notebooks are the source. Every markdown cell of ``notebooks/NN_*.ipynb`` and
``solutions/NN_*.ipynb`` is one message: its context (``msgctxt``) is the cell's id, its
``msgid`` the cell's English text. A student notebook and its solution share one catalog
(they share cell ids; a cell whose text differs is two messages with the same context).

When an English cell changes, its ``msgid`` no longer matches: :func:`update_catalogs`
merges the new template into the catalog the way ``msgmerge`` does (Babel's
``Catalog.update``, then the old entry of the same cell id as the guess): the old
translation is kept as a *fuzzy* guess with the previous English text beside it (``#| msgid``),
never used silently; a removed cell's entry stays as obsolete (``#~``).

    python -m lessons.i18n update    # then: status, build, check (see lessons/i18n/__main__.py)
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent.parent
SOURCE_FOLDERS = ("notebooks", "solutions")
LANGUAGES = ("zh_CN",)
PROJECT = "rope-lesson13"
# nbgrader's placeholder of a written answer: the grader and nbgrader look for it verbatim.
UNTRANSLATED = frozenset({"YOUR ANSWER HERE"})


def catalog_dir(language: str, root: Path = ROOT) -> Path:
    return root / "locale" / language / "notebooks"


def english_notebooks(root: Path = ROOT) -> dict[str, list[Path]]:
    """{notebook stem: [its English files]}: notebooks/ first, then solutions/."""
    out: dict[str, list[Path]] = {}
    for folder in SOURCE_FOLDERS:
        for path in sorted((root / folder).glob("[0-9][0-9]_*.ipynb")):
            out.setdefault(path.stem, []).append(path)
    return dict(sorted(out.items()))


def translatable_cells(nb) -> Iterable:
    for cell in nb.cells:
        if cell.cell_type == "markdown" and cell.source.strip() and cell.source.strip() not in UNTRANSLATED:
            yield cell


def template(paths: list[Path], root: Path = ROOT):
    """The catalog template (no translations) of one notebook's English files."""
    from babel.messages.catalog import Catalog

    catalog = Catalog(project=PROJECT, fuzzy=False)
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        translatable = {id(cell) for cell in translatable_cells(nb)}
        for index, cell in enumerate(nb.cells):
            if id(cell) in translatable:
                catalog.add(cell.source, context=cell.id,
                            locations=[(path.relative_to(root).as_posix(), index)])
    return catalog


def _previous_ids(message) -> None:
    """Babel reads a ``#| msgid`` (the previous English of a fuzzy entry) as a user comment;
    turn those comment lines back into ``message.previous_id``."""
    from babel.messages.pofile import unescape

    previous = [c[1:].strip() for c in message.user_comments if c.startswith("|")]
    if not previous:
        return
    message.user_comments = [c for c in message.user_comments if not c.startswith("|")]
    parts: dict[str, list[str]] = {}
    keyword = None
    for line in previous:
        if line.startswith('"'):
            if keyword is not None:
                parts[keyword].append(unescape(line))
            continue
        keyword, _, rest = line.partition(" ")
        parts[keyword] = [unescape(rest.strip())] if rest.strip() else []
    if "msgid" in parts:
        message.previous_id = ["".join(parts["msgid"])]


def read_catalog(path: Path, language: str):
    from babel.messages.pofile import read_po

    with path.open("rb") as handle:
        catalog = read_po(handle, locale=language)
    for message in catalog:
        _previous_ids(message)
    return catalog


def write_catalog(catalog, path: Path) -> None:
    """Write a catalog as Babel does, except the previous English of a fuzzy entry: Babel wraps
    a multi-line ``#| msgid`` into one comment (unreadable, and lossy); here it is written the
    way GNU gettext writes it, one ``#| "..."`` line per line of the text."""
    import io

    from babel.messages.pofile import normalize, write_po

    for message in catalog:  # prose, not a format string: "90% of" is no placeholder
        message.flags -= {"python-format", "python-brace-format"}
    previous = {}
    for index, message in enumerate(catalog):
        if message.id and message.previous_id:
            flag = f"previous-msgid-{index}"
            previous[flag] = message.previous_id[0]
            message.flags.add(flag)
    buffer = io.BytesIO()
    try:
        write_po(buffer, catalog, width=0, omit_header=False, sort_output=False,
                 include_previous=False, ignore_obsolete=False)
    finally:
        for message in catalog:
            message.flags -= set(previous)
    lines = []
    for line in buffer.getvalue().decode(catalog.charset or "utf-8").splitlines(keepends=True):
        if line.startswith("#,") and "previous-msgid-" in line:
            flags = [f.strip() for f in line[2:].split(",")]
            ours = [f for f in flags if f in previous]
            kept = [f for f in flags if f not in previous]
            if kept:
                lines.append("#, " + ", ".join(kept) + "\n")
            for flag in ours:
                text = normalize(previous[flag], width=0).splitlines()
                lines.append(f"#| msgid {text[0]}\n")
                lines.extend(f"#| {t}\n" for t in text[1:])
            continue
        lines.append(line)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes("".join(lines).encode(catalog.charset or "utf-8"))


def _project_version() -> str:
    from importlib import metadata

    try:
        return metadata.version(PROJECT)
    except metadata.PackageNotFoundError:
        return "0"


def _tidy_header(catalog, stem: str) -> None:
    """Project, version and language filled in; Babel's placeholders (FULL NAME, EMAIL@ADDRESS,
    YEAR-MO-DA, LL@li.org) removed; a translator's own Last-Translator is kept."""
    catalog.project = PROJECT
    catalog.version = _project_version()
    catalog.fuzzy = False
    catalog.copyright_holder = PROJECT
    catalog.msgid_bugs_address = ""
    if "EMAIL@ADDRESS" in (catalog.last_translator or ""):
        catalog.last_translator = ""
    if "LL@li.org" in (catalog.language_team or "") or "LANGUAGE" in (catalog.language_team or ""):
        catalog.language_team = str(catalog.locale_identifier or "")
    if not hasattr(catalog.revision_date, "strftime"):
        catalog.revision_date = catalog.creation_date
    name = catalog.locale.english_name if catalog.locale else catalog.locale_identifier
    catalog.header_comment = (
        f"# {name} translation of the notebook {stem} of {PROJECT}.\n"
        "# The English notebooks are the source; `python -m lessons.i18n update` merges them in\n"
        "# (msgctxt: the cell id; msgid: the English cell). Translate msgstr; clear 'fuzzy' once checked.")


def _match_changed_cells(catalog) -> None:
    """A changed English cell keeps its old translation as a *fuzzy* guess with the previous
    English text (``#| msgid``), matched by cell id (its msgctxt) only: Babel's own fuzzy
    matching ignores the context and may pick another cell's translation."""
    from difflib import SequenceMatcher

    by_context: dict[str, list] = {}
    for key, old in catalog.obsolete.items():
        if old.string and old.context is not None:
            by_context.setdefault(old.context, []).append((key, old))
    for message in catalog:
        if not message.id or message.string or message.context not in by_context:
            continue
        candidates = by_context[message.context]
        if not candidates:
            continue
        key, old = max(candidates, key=lambda kv: SequenceMatcher(None, kv[1].id, message.id).ratio())
        candidates.remove((key, old))
        del catalog.obsolete[key]
        message.string = old.string
        message.previous_id = [old.id]
        message.user_comments = [c for c in old.user_comments if not c.startswith("|")]
        message.flags |= {"fuzzy"}


def update_catalogs(language: str = "zh_CN", root: Path = ROOT) -> list[Path]:
    """Merge each notebook's current English text into its catalog (new cells untranslated,
    changed cells fuzzy with their previous English text, removed cells obsolete ``#~``).
    Returns the catalogs written."""
    from babel.messages.catalog import Catalog

    written = []
    for stem, paths in english_notebooks(root).items():
        po = catalog_dir(language, root) / f"{stem}.po"
        if po.exists():
            catalog = read_catalog(po, language)
        else:
            catalog = Catalog(locale=language, project=PROJECT, fuzzy=False)
        before = {(m.context, m.id) for m in catalog if m.id}
        previous = {(m.context, m.id): m.previous_id for m in catalog if m.id and m.previous_id}
        new = template(paths, root)
        after = {(m.context, m.id) for m in new if m.id}
        catalog.update(new, no_fuzzy_matching=True, update_header_comment=False,
                       update_creation_date=before != after)
        for message in catalog:  # Babel's update keeps a fuzzy flag but drops its previous msgid
            if message.id and message.fuzzy and (message.context, message.id) in previous:
                message.previous_id = previous[(message.context, message.id)]
        _match_changed_cells(catalog)
        _tidy_header(catalog, stem)
        write_catalog(catalog, po)
        written.append(po)
    return written
