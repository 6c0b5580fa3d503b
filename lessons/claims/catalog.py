"""The translation catalog of the claims: ``lessons/locale/<lang>/LC_MESSAGES/claims.po`` (and ``.mo``).

One message per claim, its context (``msgctxt``) the claim's id and its ``msgid`` the claim's
English text, plus every message of the claims table and of ``python -m lessons.l13`` (the
``_("...")`` calls in ``lessons/l13.py`` and ``lessons/claims/{__init__,_registry}.py``).

    python -m lessons.claims.catalog update   # merge the current English in, then compile the .mo
    python -m lessons.claims.catalog check    # exit 1 and say why, if any translation is missing,
                                              # stale, drops a number, or the .mo is out of date
    python -m lessons.claims.catalog compile  # only rewrite the .mo from the .po

When a claim's English text changes, ``update`` keeps the old translation as a *fuzzy*
guess with the previous English beside it (``#| msgid``), the way ``msgmerge`` does (Babel's
``Catalog.update``): a fuzzy message is left out of the ``.mo``, so the claim is shown in
English, never with a translation of an older text, until a translator checks it and removes
the flag. A claim that is gone moves to the obsolete entries (``#~``) at the end.
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

from ..i18n import LOCALE_DIR
from ._registry import DOMAIN

LANGUAGES = ("zh_CN",)
PACKAGE = Path(__file__).resolve().parent.parent
# The files whose ``_("...")`` messages belong to this catalog.
SOURCES = ("l13.py", "claims/__init__.py", "claims/_registry.py")
PROJECT = "rope-lesson13"
HEADER = """\
# The lesson's claims and the messages of `python -m lessons.l13`, in {language}.
# msgctxt of a claim = its id in lessons/claims/nbNN.py; msgid = its English text (the source).
# Refresh with `python -m lessons.claims.catalog update`; test with `... check`."""


def po_path(language: str = "zh_CN") -> Path:
    return LOCALE_DIR / language / "LC_MESSAGES" / f"{DOMAIN}.po"


def mo_path(language: str = "zh_CN") -> Path:
    return po_path(language).with_suffix(".mo")


def interface_messages() -> list[tuple[str, str]]:
    """(message, source file) of every ``_("...")`` in :data:`SOURCES`, in the order they appear."""
    from babel.messages.extract import extract_from_file

    out, seen = [], set()
    for name in SOURCES:
        for _lineno, message, _comments, _context in extract_from_file(
            "python", str(PACKAGE / name), keywords={"_": None}
        ):
            if message not in seen:
                seen.add(message)
                out.append((message, f"lessons/{name}"))
    return out


def template():
    """The catalog with no translations: the interface messages, then one message per claim."""
    from babel.messages.catalog import Catalog

    from . import all_claims

    catalog = Catalog(project=PROJECT, fuzzy=False, header_comment=HEADER)
    for message, source in interface_messages():
        flags = ("python-brace-format",) if "{" in message else ()
        catalog.add(message, locations=[(source, None)], flags=flags)
    for c in all_claims():
        catalog.add(
            c.text,
            context=c.id,
            locations=[(f"lessons/claims/nb{c.notebook}.py", None)],
            auto_comments=[f"stated: {c.stated_text()}"],
        )
    return catalog


def read(language: str = "zh_CN"):
    from babel.messages.pofile import read_po

    with po_path(language).open("rb") as handle:
        return read_po(handle, locale=language, domain=DOMAIN)


def write(catalog, language: str = "zh_CN") -> None:
    from babel.messages.pofile import write_po

    path = po_path(language)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as handle:
        write_po(handle, catalog, width=0, sort_output=False, include_previous=True, ignore_obsolete=False)


def merge(catalog, new_template) -> None:
    """Merge ``new_template`` into ``catalog`` in place (Babel's ``Catalog.update``).

    A claim whose English text changed is matched by its id (the context), not by a similar
    text of another claim: its old translation becomes a fuzzy guess with the old English as
    ``previous_id``. New messages are untranslated; messages no longer used become obsolete.
    """
    old_by_context = {m.context: m for m in catalog if m.id and m.context and m.string}
    old_keys = {(m.id, m.context) for m in catalog if m.id}
    catalog.update(new_template, no_fuzzy_matching=True, update_header_comment=False,
                   update_creation_date=False)
    for message in catalog:
        old = old_by_context.get(message.context) if message.context else None
        if old is None or (message.id, message.context) in old_keys or message.string:
            continue
        message.string = old.string
        message.previous_id = [old.id]
        message.flags.add("fuzzy")
        for key, obsolete in list(catalog.obsolete.items()):
            if obsolete.context == message.context:
                del catalog.obsolete[key]


def update(language: str = "zh_CN") -> Path:
    """Merge the current English into the catalog (creating it if need be) and compile it."""
    from babel.messages.catalog import Catalog

    if po_path(language).exists():
        catalog = read(language)
    else:
        catalog = Catalog(locale=language, domain=DOMAIN, project=PROJECT, fuzzy=False,
                          header_comment=HEADER.format(language=language))
    merge(catalog, template())
    write(catalog, language)
    compile_mo(language)
    return po_path(language)


def mo_bytes(language: str = "zh_CN") -> bytes:
    """The ``.mo`` the ``.po`` compiles to now (fuzzy messages left out)."""
    from babel.messages.mofile import write_mo

    buffer = io.BytesIO()
    write_mo(buffer, read(language), use_fuzzy=False)
    return buffer.getvalue()


def compile_mo(language: str = "zh_CN") -> Path:
    mo_path(language).write_bytes(mo_bytes(language))
    return mo_path(language)


def problems(language: str = "zh_CN") -> list[str]:
    """Every reason the catalog is not a complete, current, faithful translation (empty: none).

    Each message of the template must be in the catalog (same context, same English),
    translated and not fuzzy; a claim's translation states the same numbers as its English
    and uses the glossary's terms (:func:`lessons.i18n.parity.problems`); the ``.mo`` is the
    compiled ``.po``.
    """
    from ..i18n.parity import problems as cell_problems

    if not po_path(language).exists():
        return [f"{po_path(language).name}: no catalog for {language!r}; run "
                "`python -m lessons.claims.catalog update` and translate it"]
    catalog = read(language)
    out = []
    for wanted in template():
        if not wanted.id:
            continue
        where = wanted.context or repr(wanted.id)
        message = catalog.get(wanted.id, context=wanted.context)
        if message is None:
            out.append(f"{where}: not in the catalog (new or changed English; run update)")
        elif message.fuzzy:
            out.append(f"{where}: fuzzy (the English changed; check the translation and clear the flag)")
        elif not message.string:
            out.append(f"{where}: not translated")
        else:
            out.extend(f"{where}: {p}" for p in _message_problems(wanted, message.string, cell_problems))
    if not mo_path(language).exists() or mo_path(language).read_bytes() != mo_bytes(language):
        out.append(f"{mo_path(language).name}: out of date with {po_path(language).name}; run "
                   "`python -m lessons.claims.catalog compile`")
    return out


def _message_problems(wanted, translated: str, cell_problems) -> list[str]:
    if wanted.context:  # a claim: its numbers and terms
        return cell_problems(wanted.id, translated)
    import string

    fields = {name for _, name, _, _ in string.Formatter().parse(wanted.id) if name is not None}
    got = {name for _, name, _, _ in string.Formatter().parse(translated) if name is not None}
    if fields == got:
        return []
    return [f"placeholders differ: English {sorted(fields)}, translation {sorted(got)}"]


def _shown(path: Path) -> str:
    """``path`` relative to the repository when it is inside it."""
    try:
        return path.relative_to(PACKAGE.parent).as_posix()
    except ValueError:
        return str(path)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m lessons.claims.catalog", description=__doc__.split("\n\n")[0])
    p.add_argument("action", choices=("update", "check", "compile"))
    p.add_argument("--language", default="zh_CN", choices=LANGUAGES)
    args = p.parse_args(argv)
    if args.action == "update":
        print(f"updated {_shown(update(args.language))}")
        return 0
    if args.action == "compile":
        print(f"wrote {_shown(compile_mo(args.language))}")
        return 0
    found = problems(args.language)
    for line in found:
        print(line)
    print(f"{_shown(po_path(args.language))}: {len(found)} problem(s)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
