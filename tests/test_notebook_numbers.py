"""Numbers in a notebook's prose are computed, never typed.

Every number with three or more decimals in a markdown cell must be printed by one of that
notebook's code cells (in a committed output) or be a registered claim's stated value (or an
element of a stated tuple), which ``python -m lessons.l13`` checks. Numbers are compared as
written, digit for digit, ignoring the sign (prose may use a typographic minus); a number in
a link (a URL, an arXiv id) is not a claim and is skipped.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from lessons.claims import all_claims

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(
    p.relative_to(ROOT).as_posix() for d in ("notebooks", "solutions") for p in (ROOT / d).glob("*.ipynb")
)

PROSE_NUMBER = re.compile(r"(?<![\d.])\d+\.\d{3,}(?!\d)")  # three or more decimals
ANY_NUMBER = re.compile(r"(?<![\d.])\d+\.\d+(?!\d)")
NOT_A_CLAIM = re.compile(r"https?://\S+|arXiv[: ]*\d{4}\.\d{4,5}(v\d+)?|doi:\S+", re.IGNORECASE)
TEXT_MIME = ("text/plain", "text/markdown", "text/html", "text/latex")


def claim_numbers() -> set[str]:
    out: set[str] = set()
    for c in all_claims():
        if isinstance(c.stated, (bool, int)):
            continue
        for s in c.stated if isinstance(c.stated, tuple) else (c.stated,):
            out.add(s.lstrip("-+"))
    return out


def output_numbers(nb) -> set[str]:
    """Every number printed by the notebook's code cells (text outputs only)."""
    found: set[str] = set()
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for output in cell.get("outputs", []):
            texts = []
            if output.get("output_type") == "stream":
                texts.append(output.get("text", ""))
            elif output.get("output_type") in ("execute_result", "display_data"):
                data = output.get("data", {})
                texts.extend(data[m] for m in TEXT_MIME if m in data)
            elif output.get("output_type") == "error":
                texts.extend(output.get("traceback", []))
            for text in texts:
                text = "".join(text) if isinstance(text, list) else text
                found.update(ANY_NUMBER.findall(text))
    return found


def unbacked_numbers(nb, stated: set[str] | None = None) -> list[tuple[int, str]]:
    """(cell index, number) for every prose number neither printed nor a claim's stated value."""
    stated = claim_numbers() if stated is None else stated
    printed = output_numbers(nb)
    missing = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "markdown":
            continue
        prose = NOT_A_CLAIM.sub(" ", cell.source)
        for number in PROSE_NUMBER.findall(prose):
            if number not in printed and number not in stated:
                missing.append((index, number))
    return missing


@pytest.mark.parametrize("path", NOTEBOOKS)
def test_every_prose_number_is_printed_or_a_claim(path):
    nb = nbformat.read(ROOT / path, as_version=4)
    missing = unbacked_numbers(nb)
    assert missing == [], (
        f"{path}: markdown numbers neither printed by the notebook nor stated by a claim "
        f"(cell index, number): {missing}"
    )


# --------------------------------------------------------------------------- the checker itself


def small_notebook(markdown: list[str], printed: str = "", html: str = "", source_only: str = ""):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(m) for m in markdown]
    code = nbformat.v4.new_code_cell("print(x)", execution_count=1)
    if printed:
        code.outputs = [nbformat.v4.new_output("stream", name="stdout", text=printed)]
    if html:
        code.outputs.append(
            nbformat.v4.new_output("display_data", data={"text/html": html, "text/plain": "<table>"})
        )
    nb.cells.append(code)
    if source_only:
        nb.cells.append(nbformat.v4.new_code_cell(source_only))  # a number in code, not printed
    nbformat.validate(nb)
    return nb


def test_checker_catches_an_unbacked_number():
    nb = small_notebook(["The dot product is 0.123456, and later 9.87654."], printed="dot = 0.123456\n")
    assert unbacked_numbers(nb) == [(0, "9.87654")]


def test_checker_accepts_printed_and_claimed_numbers():
    stated = claim_numbers()
    assert (
        "0.54030231" in stated and "0.4011" in stated
    )  # 02.position_1 and a tuple element of 01.puzzle.weights
    nb = small_notebook(
        [
            "Printed: 0.123456. Claimed: $\\cos 1 \\approx 0.54030231$, a weight 0.4011.",
            "Two decimals are not checked: 3.14. A typographic minus: \u22120.41614684.",
            "Sources are links, not claims: https://arxiv.org/abs/2104.09864 and arXiv:2309.00071.",
        ],
        printed="0.123456\n",
    )
    assert unbacked_numbers(nb) == []


def test_checker_reads_rich_outputs_but_not_code():
    nb = small_notebook(
        ["In the table: 2.71828. In the code: 1.61803."], html="<td>2.71828</td>", source_only="x = 1.61803"
    )
    assert unbacked_numbers(nb) == [(0, "1.61803")]


def test_checker_compares_digit_for_digit():
    # 0.5403 is printed only as 0.54030231: a rounded copy in prose must be printed itself
    nb = small_notebook(["About 0.5403 (rounded by hand)."], printed="0.54030231\n")
    assert unbacked_numbers(nb, stated=set()) == [(0, "0.5403")]
    nb = small_notebook(["Exactly 0.540."], printed="0.5403\n")
    assert unbacked_numbers(nb, stated=set()) == [(0, "0.540")]
