"""Every claim the lesson makes, in one registry (see :mod:`lessons.claims._registry`).

Claims are grouped by notebook in modules ``nbNN``; importing this package registers all
of them. Use :func:`all_claims`, :func:`get` and :func:`check` from notebooks and tests.
"""

from __future__ import annotations

import html
import re
import unicodedata

from .._modules import import_all
from ._registry import _CLAIMS, Claim, ClaimResult, _, claim, evaluate, format_like

# One module per notebook, listed here: a module named here that cannot be imported is an error.
MODULES = ("nb01", "nb02", "nb03", "nb04", "nb05", "nb06", "nb07", "nb08", "nb09", "nb10")


def _load(notebook: str | None = None) -> None:
    """Import the claim modules: all of them, or only ``nbNN`` for notebook ``"NN"`` (each
    module registers the claims of its own notebook and no other; a test holds them to it)."""
    module = f"nb{notebook}"
    import_all(__name__, (module,) if module in MODULES else MODULES)


def all_claims(notebook: str | None = None) -> list[Claim]:
    """All registered claims in notebook order, or those of one notebook ("01" .. "10")."""
    _load(notebook)
    claims = sorted(_CLAIMS.values(), key=lambda c: c.notebook)
    return [c for c in claims if notebook is None or c.notebook == notebook]


def get(claim_id: str) -> Claim:
    """The claim with this id; KeyError names the known ids of its notebook if absent."""
    _load(str(claim_id).split(".", 1)[0])
    try:
        return _CLAIMS[claim_id]
    except KeyError:
        nb = claim_id.split(".", 1)[0]
        known = ", ".join(c.id for c in all_claims(nb)) or "none"
        raise KeyError(f"no claim {claim_id!r}; claims of notebook {nb}: {known}") from None


def stated(claim_id: str) -> str:
    """The value as the lesson states it, as text (for a notebook to quote)."""
    return get(claim_id).stated_text()


def check(notebook: str | None = None) -> list[ClaimResult]:
    """Evaluate the claims (of one notebook, or all)."""
    return [evaluate(c) for c in all_claims(notebook)]


def notebook_number(notebook) -> str:
    """A notebook's two-digit number from ``3``, ``"3"`` or ``"03"`` (ValueError otherwise)."""
    text = str(notebook).strip()
    if isinstance(notebook, bool) or not text.isdigit() or not 1 <= int(text) <= 99:
        raise ValueError(f"notebook must be a notebook number such as 3 or '03'; got {notebook!r}")
    return f"{int(text):02d}"


# ----------------------------------------------------------------------------- the table
#
# The table speaks the current language (lessons.i18n.language()): the claims, the column
# heads and the summary come from the "claims" catalog; the marks, the values and the ids do
# not change (a script can grep "FAIL" in any language). Widths are display columns: a Chinese
# character takes two, and a Chinese claim may wrap between any two characters (never inside
# a number or an English word). For English text every width equals len(), so the English
# table is the same, byte for byte, as before translations existed.

MARKS = {True: "ok", False: "FAIL"}
TEXT_WIDTH = 100  # width of the plain-text table that ends a notebook (fixed: outputs stay the same)
_CLAIM_MIN = 24  # the claim column is never narrower than this (unless the line is)
_GAP = "  "


_WIDE = ("W", "F")
# Chinese punctuation that must not start a line, or end one (it sticks to its neighbour).
_NO_LINE_START = set("，。、；：！？）》」』】”’%…·")
_NO_LINE_END = set("（《「『【“‘")


def display_width(text: str) -> int:
    """Terminal columns ``text`` takes: 2 for a wide (CJK) character, 0 for a combining mark, else 1."""
    if text.isascii():
        return len(text)
    return sum(0 if unicodedata.combining(ch) else 2 if _is_wide(ch) else 1 for ch in text)


def _is_wide(ch: str) -> bool:
    return unicodedata.east_asian_width(ch) in _WIDE


def _pad(text: str, width: int) -> str:
    """``text`` padded with spaces to ``width`` display columns (like ``f"{text:<{width}}"``)."""
    return text + " " * max(width - display_width(text), 0)


def _chunks(text: str) -> list[str]:
    """``text`` cut after each space (and around each Chinese character): a number is never cut."""
    if text.isascii():
        return re.findall(r"\S+\s*", text) or [""]
    # A wide (CJK) character is a chunk of its own; a run of anything else up to a space or a
    # wide character is one chunk (a number, an English word, "[1,0]"), with the spaces after it.
    pieces: list[str] = []
    for ch in text.lstrip():
        last = pieces[-1][-1] if pieces else ""
        if last and (ch.isspace() or not (_is_wide(ch) or _is_wide(last) or last.isspace())):
            pieces[-1] += ch
        else:
            pieces.append(ch)
    chunks: list[str] = []
    for chunk in pieces:
        if chunks and (chunk[0] in _NO_LINE_START or chunks[-1].rstrip()[-1:] in _NO_LINE_END):
            chunks[-1] += chunk
        else:
            chunks.append(chunk)
    return chunks or [""]


def wrap_cell(text: str, width: int) -> list[str]:
    """Lines of at most ``width`` display columns, broken only at spaces or next to a Chinese
    character (so never inside a number).

    A word longer than ``width`` gets a line of its own and is not cut.
    """
    lines, line = [], ""
    for chunk in _chunks(text):
        if line and display_width((line + chunk).rstrip()) > width:
            lines.append(line.rstrip())
            line = chunk
        else:
            line += chunk
    lines.append(line.rstrip())
    return lines


def _value_widths(stated: list[str], computed: list[str], budget: int) -> tuple[int, int]:
    def natural(texts, head):
        return max([display_width(head), *map(display_width, texts)])

    def smallest(texts, head):
        return max([display_width(head), *(display_width(c.rstrip()) for t in texts for c in _chunks(t))])

    stated_head, computed_head = _("stated"), _("computed")
    s_nat, c_nat = natural(stated, stated_head), natural(computed, computed_head)
    s_min, c_min = smallest(stated, stated_head), smallest(computed, computed_head)
    if s_nat + c_nat <= budget:
        return s_nat, c_nat
    s = max(s_min, min(s_nat, budget // 2))
    c = max(c_min, min(c_nat, budget - s))
    s = max(s_min, min(s_nat, budget - c))
    return s, c


def text_table(results: list[ClaimResult], width: int = TEXT_WIDTH) -> list[str]:
    """The claims as plain-text rows (a header first) that fit in ``width`` columns.

    Columns: ``ok``/``FAIL``, the claim, the stated value, the computed value. Each cell
    wraps inside its own column at spaces only, so a number is never broken and every row
    starts its columns at the same place. A column is only wider than ``width`` allows when
    a single number is longer than the room left for it.
    """
    mark_w = max(len(m) for m in MARKS.values())
    texts = [r.claim.translated_text() for r in results]
    stated = [r.claim.stated_text() for r in results]
    computed = [r.computed_text() for r in results]
    claim_head, stated_head, computed_head = _("claim"), _("stated"), _("computed")
    room = width - mark_w - 1 - 2 * len(_GAP)
    # The claim column keeps at least 45% of the room; the value columns share the rest.
    s_w, c_w = _value_widths(stated, computed, max(room - max(_CLAIM_MIN, int(0.45 * room)), 0))
    longest = max([display_width(claim_head), *map(display_width, texts)])
    claim_w = max(min(longest, room - s_w - c_w), min(longest, _CLAIM_MIN))
    lines = [f"{'':<{mark_w}} {_pad(claim_head, claim_w)}{_GAP}{_pad(stated_head, s_w)}{_GAP}{computed_head}"]
    for r, text, s, c in zip(results, texts, stated, computed, strict=True):
        cells = [wrap_cell(text, claim_w), wrap_cell(s, s_w), wrap_cell(c, c_w)]
        for i in range(max(map(len, cells))):
            claim_part, s_part, c_part = (cell[i] if i < len(cell) else "" for cell in cells)
            mark = MARKS[r.ok] if i == 0 else ""
            line = f"{mark:<{mark_w}} {_pad(claim_part, claim_w)}{_GAP}{_pad(s_part, s_w)}{_GAP}{c_part}"
            lines.append(line.rstrip())
    return lines


def summary(results: list[ClaimResult], notebook: str | None = None) -> str:
    """One sentence: how many of the claims hold."""
    failed = sum(not r.ok for r in results)
    held, total = len(results) - failed, len(results)
    if notebook:
        text = _("{held} of {total} claims of notebook {notebook} hold").format(
            held=held, total=total, notebook=notebook
        )
    else:
        text = _("{held} of {total} claims hold").format(held=held, total=total)
    return text + (_("; {failed} FAIL").format(failed=failed) if failed else "")


def _html_value(text: str) -> str:
    # Each piece (a number with its comma) is kept on one line; the line may break between them.
    return " ".join(
        f'<span style="white-space: nowrap">{html.escape(chunk.rstrip())}</span>' for chunk in _chunks(text)
    )


class ClaimsTable:
    """A notebook's claims with what they state and what is computed now.

    Shown as an HTML table in JupyterLab (``_repr_html_``) and as the plain-text table of
    :func:`text_table` elsewhere (``repr``). Both are the same on every run.
    """

    def __init__(self, notebook: str, results: list[ClaimResult]):
        self.notebook = notebook
        self.results = list(results)

    def text(self, width: int = TEXT_WIDTH) -> str:
        return "\n".join([*text_table(self.results, width), summary(self.results, self.notebook)])

    def __repr__(self) -> str:
        return self.text()

    __str__ = __repr__

    def _repr_html_(self) -> str:
        left = "text-align: left; vertical-align: top"
        names = ("", _("claim"), _("stated"), _("computed"))
        head = "".join(f'<th style="{left}">{html.escape(name)}</th>' for name in names)
        rows = []
        for r in self.results:
            mark = MARKS[r.ok] if r.ok else f'<strong style="color: #b91c1c">{MARKS[r.ok]}</strong>'
            rows.append(
                f'<tr title="{html.escape(r.claim.id)}"><td style="{left}">{mark}</td>'
                f'<td style="{left}">{html.escape(r.claim.translated_text())}</td>'
                f'<td style="{left}">{_html_value(r.claim.stated_text())}</td>'
                f'<td style="{left}">{_html_value(r.computed_text())}</td></tr>'
            )
        return (
            f'<table class="lessons-claims" data-notebook="{html.escape(self.notebook)}"{_lang_attribute()}>'
            f'<caption style="caption-side: bottom; text-align: left">{summary(self.results, self.notebook)}'
            "</caption>"
            f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
        )


def _lang_attribute() -> str:
    """`` lang="zh-CN"`` on a translated table (the browser picks Chinese glyph forms); none in English."""
    from ..i18n import language

    current = language()
    return "" if current == "en" else f' lang="{current.replace("_", "-")}"'


def table(notebook) -> ClaimsTable:
    """The :class:`ClaimsTable` of one notebook (``3`` or ``"03"``), its claims checked now."""
    nb = notebook_number(notebook)
    return ClaimsTable(nb, check(nb))


def show(notebook) -> None:
    """Show a notebook's claims table: HTML in JupyterLab, plain text in a terminal."""
    claims_table = table(notebook)
    try:
        from IPython import get_ipython
    except ImportError:
        get_ipython = None
    if get_ipython is not None and get_ipython() is not None:
        from IPython.display import display

        display(claims_table)
    else:
        print(claims_table.text())


__all__ = [
    "Claim",
    "ClaimResult",
    "ClaimsTable",
    "all_claims",
    "check",
    "claim",
    "display_width",
    "evaluate",
    "format_like",
    "get",
    "notebook_number",
    "show",
    "stated",
    "summary",
    "table",
    "text_table",
]
