"""What a translation of a markdown cell must keep from its English source.

A translated cell says the same thing in another language, so everything that is not prose
must come through unchanged: every number (as written), every formula (``$...$``), every code
span, every link target, the nbgrader solution markers, and the heading structure. And the
glossary's Chinese term is used wherever the English cell uses the English term.
:func:`problems` lists what a translation breaks, as sentences a translator can act on.
"""

from __future__ import annotations

import csv
import re
from collections import Counter
from functools import cache
from pathlib import Path

from .notebooks import ROOT

_FENCE = re.compile(r"```.*?```", re.S)
_DISPLAY_MATH = re.compile(r"\$\$.+?\$\$", re.S)
_INLINE_MATH = re.compile(r"(?<![\\$])\$(?!\$)(.+?)(?<![\\$])\$")
_CODE = re.compile(r"`[^`\n]+`")
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_NUMBER = re.compile(r"(?<![A-Za-z0-9_.])[-−]?\d+(?:[.,]\d+)*")
_MARKER = re.compile(r"^### (BEGIN|END) SOLUTION\s*$", re.M)
_HEADING = re.compile(r"^(#{1,6}) ", re.M)


def _protected(text: str) -> tuple[str, dict[str, Counter]]:
    """Pull out the parts a translation must copy; return the rest (prose) and the parts."""
    parts: dict[str, Counter] = {}
    for name, pattern in (("code block", _FENCE), ("formula", _DISPLAY_MATH),
                          ("formula", _INLINE_MATH), ("code span", _CODE)):
        found = [m.group(0) for m in pattern.finditer(text)]
        parts.setdefault(name, Counter()).update(found)
        text = pattern.sub(" ", text)
    parts["link target"] = Counter(_LINK.findall(text))
    parts["solution marker"] = Counter(m.group(0).strip() for m in _MARKER.finditer(text))
    parts["heading level"] = Counter(_HEADING.findall(text))
    return text, parts


def numbers(text: str) -> Counter:
    """The numbers a cell's prose states (outside formulas and code), as written."""
    prose, _ = _protected(text)
    prose = _LINK.sub("]()", prose)
    return Counter(n.replace("−", "-") for n in _NUMBER.findall(prose))


@cache
def glossary(language: str = "zh_CN", root: Path = ROOT) -> tuple[dict[str, str], ...]:
    """The rows of ``locale/<language>/glossary.csv`` (none if the file is not there)."""
    path = root / "locale" / language / "glossary.csv"
    if not path.exists():
        return ()
    with path.open(encoding="utf-8", newline="") as handle:
        return tuple(csv.DictReader(handle))


def _term_pattern(term: str) -> re.Pattern:
    return re.compile(r"\b" + re.escape(term) + r"(s|es)?\b", re.I)


def _uses(text: str, term: str) -> bool:
    return _term_pattern(term).search(text) is not None


def terms_used(english: str, rows) -> list[dict[str, str]]:
    """The glossary rows whose English term the cell's prose uses.

    Only prose counts: a term inside a formula or a code span (``attention``, a function's
    name) is code, not a word to translate. A term inside a longer term of the glossary
    counts as the longer term only ("embedding" in "rotary position embedding", "frequency"
    in "high frequency"): the Chinese uses the longer term's word there.
    """
    prose, _ = _protected(english)
    taken: list[tuple[int, int]] = []
    used = []
    for row in sorted(rows, key=lambda r: -len(r["english"])):
        spans = [m.span() for m in _term_pattern(row["english"]).finditer(prose)]
        free = [s for s in spans if not any(a <= s[0] and s[1] <= b for a, b in taken)]
        taken.extend(spans)
        if free:
            used.append(row)
    return used


def problems(english: str, translated: str, language: str = "zh_CN", root: Path = ROOT) -> list[str]:
    """Why ``translated`` is not a faithful translation of ``english`` (empty list: none)."""
    if not translated.strip():
        return ["no translation"]
    out = []
    _, want = _protected(english)
    _, got = _protected(translated)
    for kind in want:
        missing = want[kind] - got[kind]
        extra = got[kind] - want[kind]
        if missing:
            out.append(f"{kind} missing or changed: {sorted(missing)}")
        if extra:
            out.append(f"{kind} not in the English: {sorted(extra)}")
    n_want, n_got = numbers(english), numbers(translated)
    if n_want != n_got:
        out.append(f"numbers differ: English states {sorted((n_want - n_got).elements())} "
                   f"that the translation lacks, the translation states "
                   f"{sorted((n_got - n_want).elements())} that the English lacks")
    for row in terms_used(english, glossary(language, root)):
        if row["checked"] == "yes" and row["chinese"] not in translated:
            out.append(f"glossary: the English says {row['english']!r}; use {row['chinese']!r}")
    return out


def message_problems(message, language: str = "zh_CN", root: Path = ROOT) -> list[str]:
    """The problems of one catalog message (a babel ``Message``), prefixed with its cell id."""
    out = []
    if message.fuzzy:
        out.append(f"{message.context}: fuzzy (the English changed; check and clear the flag)")
    for problem in problems(message.id, message.string or "", language, root):
        out.append(f"{message.context}: {problem}")
    return out


def catalog_problems(po: Path, language: str = "zh_CN", root: Path = ROOT) -> list[str]:
    """Every problem of every message of one catalog, prefixed with the cell id."""
    from .notebooks import read_catalog

    catalog = read_catalog(Path(po), language)
    out = []
    for message in catalog:
        if message.id:
            out.extend(message_problems(message, language, root))
    return out


if __name__ == "__main__":
    import sys

    bad = 0
    for arg in sys.argv[1:]:
        found = catalog_problems(Path(arg))
        bad += len(found)
        print(f"{arg}: {len(found)} problem(s)")
        for line in found:
            print("   ", line)
    sys.exit(1 if bad else 0)
