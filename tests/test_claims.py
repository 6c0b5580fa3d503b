"""The claim registry: every claim holds, every number of the curriculum is a claim, and the
comparison rule itself works (checked on temporary Claim objects, never registered)."""

from __future__ import annotations

import math
import os
import re
from pathlib import Path

import numpy as np
import pytest

from lessons.claims import Claim, all_claims, evaluate, format_like, get, stated
from lessons.claims._registry import claim

ROOT = Path(__file__).resolve().parents[1]
# The content spec lives next to the repository while the course is written (../shared);
# LESSON_CURRICULUM points elsewhere. Without it the curriculum tests are skipped.
_CANDIDATES = [Path(p) for p in [os.environ.get("LESSON_CURRICULUM", "")] if p] + [
    ROOT / "docs" / "CURRICULUM.md",
    ROOT.parent / "shared" / "CURRICULUM.md",
]
CURRICULUM = next((p for p in _CANDIDATES if p.is_file()), _CANDIDATES[-1])
ALL = all_claims()

# A number with at least two decimals standing on its own: not glued to a name, so the
# arguments inside a formula such as "2 cos0.01 - 4 sin0.01" (whose value is stated next
# to it) are not counted separately.
NUMBER = re.compile(r"(?<![\w.])-?\d+\.\d{2,}(?!\d)")


SECOND_EDITION = "## Second edition"


def curriculum_sections() -> dict[str, str]:
    """The first edition's per-notebook sections ("### NN — title"), by notebook number."""
    text = CURRICULUM.read_text(encoding="utf-8").split(SECOND_EDITION, 1)[0]
    parts = re.split(r"^### (\d\d) ", text, flags=re.M)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts), 2)}


def second_edition_bullets() -> list[tuple[str | None, str]]:
    """The second edition's bullets as (notebook or None, text). A bullet's bold title names its
    notebook in parentheses ("**Padding positions (08).**"); the whole-head bullets name none."""
    if not CURRICULUM.exists():
        return []
    text = CURRICULUM.read_text(encoding="utf-8")
    if SECOND_EDITION not in text:
        return []
    body = text.split(SECOND_EDITION, 1)[1]
    bullets = re.split(r"^- ", body, flags=re.M)[1:]
    out = []
    for bullet in bullets:
        title = re.match(r"\*\*(.*?)\*\*", bullet)
        marker = re.search(r"\((\d\d)\)", title.group(1)) if title else None
        out.append((marker.group(1) if marker else None, bullet))
    return out


def stated_numbers(notebook: str) -> set[str]:
    out = set()
    for c in all_claims(notebook):
        if isinstance(c.stated, (bool, int)):
            continue
        out.update(c.stated if isinstance(c.stated, tuple) else (c.stated,))
    return out


def curriculum_numbers() -> list[tuple[str, str]]:
    if not CURRICULUM.exists():
        return []
    return sorted({(nb, n) for nb, body in curriculum_sections().items() for n in NUMBER.findall(body)})


# --------------------------------------------------------------------------- every claim holds


def test_the_registry_is_not_empty_and_ids_are_unique():
    assert len(ALL) >= 60
    assert len({c.id for c in ALL}) == len(ALL)
    assert {c.notebook for c in ALL} >= {"01", "02", "03", "04", "05", "06"}


@pytest.mark.parametrize("c", ALL, ids=[c.id for c in ALL])
def test_claim_holds(c):
    result = evaluate(c)
    assert result.error is None, result.error
    assert result.ok, f"{c.id}: stated {c.stated_text()}, computed {result.computed_text()}"
    assert c.id.startswith(c.notebook + ".")
    assert c.text.strip()


def test_get_and_stated():
    c = get("02.position_1")
    assert c.notebook == "02"
    assert stated("02.position_1") == "[0.54030231, 0.84147098]"
    with pytest.raises(KeyError, match=r"no claim '02\.nope'; claims of notebook 02: 02\."):
        get("02.nope")


# --------------------------------------------------------------------------- the curriculum


@pytest.mark.skipif(not CURRICULUM.exists(), reason="the shared curriculum is not next to this checkout")
def test_curriculum_is_parsed():
    sections = curriculum_sections()
    assert sorted(sections) == [f"{i:02d}" for i in range(1, 10)]
    found = curriculum_numbers()
    assert ("01", "0.4011") in found and ("02", "-0.41614684") in found
    assert {nb for nb, _ in found} == {f"{i:02d}" for i in range(1, 10) if i != 7}


@pytest.mark.parametrize(("notebook", "number"), curriculum_numbers(), ids=lambda v: str(v))
def test_curriculum_number_is_a_stated_claim_of_its_notebook(notebook, number):
    assert number in stated_numbers(notebook), (
        f"CURRICULUM.md section {notebook} states {number}, but no claim of notebook "
        f"{notebook} states it (lessons/claims/nb{notebook}.py)"
    )


def second_edition_numbers() -> list[tuple[str | None, str]]:
    return sorted({(nb, n) for nb, body in second_edition_bullets() for n in NUMBER.findall(body)},
                  key=lambda t: (t[0] or "", t[1]))


def test_second_edition_is_parsed():
    if not CURRICULUM.exists():
        pytest.skip("the shared curriculum is not next to this checkout")
    found = second_edition_numbers()
    assert ("08", "0.84147098") in found and (None, "57.3819") in found


@pytest.mark.parametrize(("notebook", "number"), second_edition_numbers(), ids=lambda v: str(v))
def test_second_edition_number_is_a_stated_claim(notebook, number):
    """Every number of the second edition is stated by a claim: of the notebook its bullet
    names, or of any notebook for the whole-head bullets, which name none."""
    notebooks = [notebook] if notebook else sorted({c.notebook for c in ALL})
    where = f"notebook {notebook}" if notebook else "any notebook"
    assert any(number in stated_numbers(nb) for nb in notebooks), (
        f"CURRICULUM.md's second edition states {number} ({where}), but no claim states it"
    )


# --------------------------------------------------------------------------- the comparison rule


def make(stated_value, value, tolerance=None, id="99.test"):
    """A temporary claim (not registered) whose computation returns ``value``."""

    def compute():
        if isinstance(value, BaseException):
            raise value
        return value

    return Claim(id, id[:2], "a temporary claim for the tests", stated_value, compute, tolerance)


@pytest.mark.parametrize(
    ("stated_value", "value", "ok"),
    [
        ("0.4011", 0.40114, True),
        ("0.4011", 0.401149, True),
        ("0.4011", 0.401051, True),
        ("0.4011", 0.40116, False),  # a deliberately wrong stated value
        ("0.4011", 0.40104, False),
        ("0.4011", -0.4011, False),
        ("-0.41614684", math.cos(2), True),
        ("-0.41614684", math.cos(2) + 1e-8, False),
        ("36.87", 36.8699, True),
        ("36.87", 36.88, False),
        ("25", 25.0, True),  # no decimal point: to 1e-9
        ("25", 25.0 + 1e-8, False),
        ("0.4011", float("nan"), False),
        ("0.4011", float("inf"), False),
        ("0.4011", np.float64(0.40111), True),
        ("0.4011", np.array([0.40111]), True),
    ],
)
def test_a_decimal_is_compared_to_half_a_unit_of_its_last_digit(stated_value, value, ok):
    assert evaluate(make(stated_value, value)).ok is ok


def test_tolerance_follows_the_number_of_decimals():
    assert make("0.40", 0).tolerances()[0] == pytest.approx(0.005)
    assert make("0.4011", 0).tolerances()[0] == pytest.approx(0.00005)
    assert make("0.54030231", 0).tolerances()[0] == pytest.approx(5e-9)
    assert make("7", 0).tolerances()[0] == 1e-9
    assert make(("1", "0.01"), 0).tolerances() == pytest.approx([1e-9, 0.005])


def test_an_explicit_tolerance_overrides_the_rule():
    assert evaluate(make("0", 1e-13, tolerance=1e-12)).ok
    assert not evaluate(make("0", 1e-11, tolerance=1e-12)).ok
    assert evaluate(make("0.4", 0.49, tolerance=0.1)).ok
    assert make(("1", "2"), 0, tolerance=1e-3).tolerances() == [1e-3, 1e-3]


def test_tuples_are_compared_element_by_element():
    assert evaluate(make(("0.8022", "1.1978"), [0.80221, 1.19779])).ok
    assert not evaluate(make(("0.8022", "1.1978"), [0.80221, 1.1979])).ok
    assert not evaluate(make(("0.8022", "1.1978"), [1.1978, 0.8022])).ok  # order matters
    result = evaluate(make(("0.8022", "1.1978"), [0.8022]))
    assert not result.ok and result.error == "computed 1 number(s), the lesson states 2"


def test_counts_are_exact_and_truth_values_are_truth_values():
    assert evaluate(make(32, 32)).ok
    assert evaluate(make(32, np.int64(32))).ok
    assert evaluate(make(32, 32.0)).ok
    assert not evaluate(make(32, 31)).ok
    assert not evaluate(make(32, 32.5)).ok
    assert not evaluate(make(32, "32")).ok
    assert evaluate(make(True, np.True_)).ok
    assert evaluate(make(False, 0)).ok
    assert not evaluate(make(True, False)).ok


def test_a_computation_that_raises_is_a_failed_claim_with_the_reason():
    result = evaluate(make("1.00", ZeroDivisionError("division by zero")))
    assert not result.ok
    assert result.error == "ZeroDivisionError: division by zero"
    assert result.computed_text() == "error: ZeroDivisionError: division by zero"


def test_computed_values_are_formatted_like_the_stated_ones():
    assert format_like(make("0.4011", 0), 0.401149) == "0.4011"
    assert format_like(make(("1", "0.01"), 0), [1.0, 0.0100000001]) == "[1, 0.01]"
    assert format_like(make("0", 0, tolerance=1e-12), 3.2e-16) == "3.2e-16"
    assert format_like(make(16, 0), 16) == "16"
    assert format_like(make(True, 0), 1) == "true"
    assert make(("0.8022", "1.1978"), 0).stated_text() == "[0.8022, 1.1978]"


def test_the_decorator_checks_its_arguments_without_registering():
    before = len(all_claims())
    with pytest.raises(ValueError, match=r"claim id must start with a two-digit notebook number; got 'x\.y'"):
        claim("x.y", "text", "1")
    with pytest.raises(ValueError, match=r"could not convert string to float"):
        claim("99.bad", "text", "one")
    with pytest.raises(
        TypeError, match=r"stated must be a decimal string, a tuple of them, an int or a bool"
    ):
        claim("99.bad", "text", 0.5)
    existing = ALL[0].id
    with pytest.raises(ValueError, match=rf"claim '{re.escape(existing)}' is registered twice"):
        claim(existing, "text", "1")(lambda: 1.0)
    assert len(all_claims()) == before


def test_a_listed_registry_module_that_is_missing_is_an_error():
    from lessons._modules import import_all

    with pytest.raises(ModuleNotFoundError, match="'nb99' is listed in MODULES but does not exist"):
        import_all("lessons.claims", ("nb01", "nb99"))


def test_each_claim_module_registers_the_claims_of_its_own_notebook_only():
    # all_claims("NN") and get("NN.x") import module nbNN alone: a claim of notebook 04
    # registered in nb08 would be missing from 04's table. The module that registered a claim
    # is the module its function was written in.
    from lessons.claims import MODULES

    misplaced = [(c.id, c.compute.__module__) for c in ALL
                 if getattr(c.compute, "residual", c.compute).__module__ != f"lessons.claims.nb{c.notebook}"]
    assert misplaced == []
    assert sorted({c.notebook for c in ALL}) == [m.removeprefix("nb") for m in MODULES]


def test_one_notebooks_table_imports_that_notebooks_claim_module_alone():
    import subprocess
    import sys

    claim_07 = next(c.id for c in ALL if c.notebook == "07")
    code = (
        f"import sys; from lessons.claims import table, get; table('04'); get({claim_07!r}); "
        "print(*sorted(m for m in sys.modules if m.startswith('lessons.claims.nb')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.split() == ["lessons.claims.nb04", "lessons.claims.nb07"]


def test_claim_functions_have_names_that_say_what_they_compute():
    unnamed = [c.id for c in all_claims() if getattr(c.compute, "residual", c.compute).__name__ == "_"]
    assert unnamed == []
