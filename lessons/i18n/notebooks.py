"""Translation catalogs of the notebooks: one gettext ``.po`` file per notebook and language.

The English notebooks are the source. Every markdown cell of ``notebooks/NN_*.ipynb`` and
``solutions/NN_*.ipynb`` is one message: its context (``msgctxt``) is the cell's id, its
``msgid`` the cell's English text. A student notebook and its solution share one catalog
(they share cell ids; a cell whose text differs is two messages with the same context).

When an English cell changes, its ``msgid`` no longer matches: :func:`update_catalogs`
merges the new template into the catalog the way ``msgmerge`` does (Babel's
``Catalog.update``): the old translation is kept as a *fuzzy* guess with the previous
English text beside it, never used silently.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent.parent
SOURCE_FOLDERS = ("notebooks", "solutions")
LANGUAGES = ("zh_CN",)
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

    catalog = Catalog(project="rope-lesson13", fuzzy=False)
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        for index, cell in enumerate(nb.cells):
            if cell in list(translatable_cells(nb)):
                catalog.add(cell.source, context=cell.id,
                            locations=[(path.relative_to(root).as_posix(), index)])
    return catalog


def read_catalog(path: Path, language: str):
    from babel.messages.pofile import read_po

    with path.open("rb") as handle:
        return read_po(handle, locale=language)


def write_catalog(catalog, path: Path) -> None:
    from babel.messages.pofile import write_po

    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as handle:
        write_po(handle, catalog, width=0, omit_header=False, sort_output=False,
                 include_previous=True, ignore_obsolete=False)


def update_catalogs(language: str = "zh_CN", root: Path = ROOT) -> list[Path]:
    """Merge each notebook's current English text into its catalog (new cells untranslated,
    changed cells fuzzy). Returns the catalogs written."""
    from babel.messages.catalog import Catalog

    written = []
    for stem, paths in english_notebooks(root).items():
        po = catalog_dir(language, root) / f"{stem}.po"
        if po.exists():
            catalog = read_catalog(po, language)
        else:
            catalog = Catalog(locale=language, project="rope-lesson13", fuzzy=False)
        catalog.update(template(paths, root), update_header_comment=False)
        write_catalog(catalog, po)
        written.append(po)
    return written
