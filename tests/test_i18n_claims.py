"""The claims in Chinese: the catalog (lessons/locale/zh_CN/LC_MESSAGES/claims.po) is complete,
current and faithful, and the claims table renders from it without changing the English one."""

from __future__ import annotations

import dataclasses
import io
import json
import re
import unicodedata
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog
from babel.messages.mofile import write_mo

from lessons.claims import _registry, all_claims, catalog, display_width, show, table, wrap_cell
from lessons.i18n import use_language
from lessons.i18n.parity import numbers

ROOT = Path(__file__).resolve().parents[1]
CLAIMS = all_claims()
PO = catalog.read("zh_CN")


def has_chinese(text: str) -> bool:
    return any("CJK" in unicodedata.name(ch, "") for ch in text)


# --------------------------------------------------------------------------- the catalog


def test_the_catalog_lives_in_the_package_under_the_claims_domain():
    assert catalog.po_path() == ROOT / "lessons" / "locale" / "zh_CN" / "LC_MESSAGES" / "claims.po"
    assert catalog.mo_path().is_file()


def test_every_claim_id_and_english_text_is_in_the_catalog_exactly():
    """A claim whose English text changes misses its entry here (and at run time): the test fails
    until `python -m lessons.claims.catalog update` and a translator have been through it."""
    missing = [c.id for c in CLAIMS if PO.get(c.text, context=c.id) is None]
    assert missing == []
    ids = [m.context for m in PO if m.id and m.context]
    assert sorted(ids) == sorted(c.id for c in CLAIMS)  # and nothing else: no stale claim entries


def test_every_claim_has_a_checked_chinese_translation():
    for c in CLAIMS:
        message = PO.get(c.text, context=c.id)
        assert not message.fuzzy, f"{c.id}: fuzzy"
        assert has_chinese(message.string), f"{c.id}: {message.string!r} is not Chinese"


def test_every_translation_states_the_numbers_of_its_english():
    for c in CLAIMS:
        translated = PO.get(c.text, context=c.id).string
        assert numbers(translated) == numbers(c.text), (c.id, c.text, translated)


def test_translations_use_no_character_of_ambiguous_width():
    """An ambiguous-width character (…, “, ·) is one column in most terminals and two in CJK ones:
    it would shift the columns of the plain-text table. Use ASCII ("...") or a full-width form."""
    for message in PO:
        if message.id:
            ambiguous = sorted({ch for ch in message.string if unicodedata.east_asian_width(ch) == "A"})
            assert ambiguous == [], (message.context or message.id, ambiguous)


def test_numbers_count_every_figure_of_a_claim():
    c = next(c for c in CLAIMS if c.id == "02.cos_distance.2")
    assert numbers(c.text) == {"1,0": 1, "7": 1, "5": 1, "2": 2}
    assert numbers(PO.get(c.text, context=c.id).string) == numbers(c.text)


def test_the_catalog_check_finds_no_problem():
    """Numbers, glossary terms, placeholders of the interface messages, fuzzy flags, and a .mo
    compiled from the .po as it is now (``python -m lessons.claims.catalog check``)."""
    assert catalog.problems("zh_CN") == []


def test_the_mo_is_the_compiled_po():
    buffer = io.BytesIO()
    write_mo(buffer, catalog.read("zh_CN"), use_fuzzy=False)
    assert catalog.mo_path().read_bytes() == buffer.getvalue()


def test_the_interface_messages_are_translated_with_their_placeholders():
    summary = PO.get("{held} of {total} claims of notebook {notebook} hold")
    assert summary.string == "笔记本 {notebook} 的 {total} 条结论中 {held} 条成立"
    for message, _source in catalog.interface_messages():
        assert has_chinese(PO.get(message).string), message


# --------------------------------------------------------------------------- update: changed English is fuzzy


def _one_claim_catalog(text: str, translation: str) -> Catalog:
    old = Catalog(locale="zh_CN", fuzzy=False)
    old.add(text, translation, context="02.radian.degrees")
    old.add("Squared length of [3,4]", "[3,4] 的长度平方", context="01.length.before")
    return old


def test_update_marks_a_changed_claim_fuzzy_and_the_mo_leaves_it_out():
    old = _one_claim_catalog("One radian in degrees, about", "一弧度换算成度，约为")
    new = Catalog(fuzzy=False)
    new.add("One radian in degrees, roughly", context="02.radian.degrees")
    new.add("Squared length of [3,4]", context="01.length.before")
    catalog.merge(old, new)
    changed = old.get("One radian in degrees, roughly", context="02.radian.degrees")
    assert changed.fuzzy and changed.string == "一弧度换算成度，约为"
    assert changed.previous_id == ["One radian in degrees, about"]
    assert not old.get("Squared length of [3,4]", context="01.length.before").fuzzy
    assert list(old.obsolete) == []  # the old entry became the fuzzy guess, not an obsolete one
    buffer = io.BytesIO()
    write_mo(buffer, old, use_fuzzy=False)
    assert "一弧度".encode() not in buffer.getvalue()
    assert "[3,4] 的长度平方".encode() in buffer.getvalue()


def test_update_never_borrows_another_claims_translation():
    old = _one_claim_catalog("One radian in degrees, about", "一弧度换算成度，约为")
    new = Catalog(fuzzy=False)
    new.add("One radian in degrees, about", context="02.radian.degrees")
    new.add("Two radians in degrees, about", context="02.two_radians")  # a new claim, similar text
    catalog.merge(old, new)
    new_claim = old.get("Two radians in degrees, about", context="02.two_radians")
    assert not new_claim.string and not new_claim.fuzzy  # untranslated: nothing to show but English
    assert [m.context for m in old.obsolete.values()] == ["01.length.before"]


def test_update_and_check_on_the_real_catalog_when_a_claim_changes(tmp_path, monkeypatch):
    """`python -m lessons.claims.catalog update` after an English edit: the claim's entry turns
    fuzzy (old translation kept beside the old English), the .mo drops it, `check` names it."""
    po, mo = tmp_path / "claims.po", tmp_path / "claims.mo"
    po.write_bytes(catalog.po_path().read_bytes())
    monkeypatch.setattr(catalog, "po_path", lambda language="zh_CN": po)
    monkeypatch.setattr(catalog, "mo_path", lambda language="zh_CN": mo)
    target = _registry._CLAIMS["03.d32.pairs"]
    changed = dataclasses.replace(target, text="d = 32 has this many pairs of dims")
    monkeypatch.setitem(_registry._CLAIMS, target.id, changed)
    assert catalog.main(["update"]) == 0
    text = po.read_text(encoding="utf-8")
    assert ('#, fuzzy\n#| msgid "d = 32 has this many pairs"\nmsgctxt "03.d32.pairs"\n'
            'msgid "d = 32 has this many pairs of dims"\nmsgstr "d = 32 时的配对数"\n') in text
    assert catalog.problems() == [
        "03.d32.pairs: fuzzy (the English changed; check the translation and clear the flag)"
    ]
    assert "d = 32 时的配对数".encode() not in mo.read_bytes()
    assert catalog.main(["check"]) == 1


def test_a_claim_whose_text_changed_is_shown_in_english(monkeypatch):
    target = _registry._CLAIMS["02.radian.degrees"]
    changed = dataclasses.replace(target, text="One radian, in degrees, about")
    monkeypatch.setitem(_registry._CLAIMS, target.id, changed)
    with use_language("zh_CN"):
        assert target.translated_text() == "一弧度换算成度，约为"
        assert changed.translated_text() == "One radian, in degrees, about"


# --------------------------------------------------------------------------- rendering


def test_show_renders_chinese_inside_use_language(capsys):
    n = len(all_claims("02"))
    with use_language("zh_CN"):
        show("02")
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].split() == ["结论", "文中值", "计算值"]
    assert lines[-1] == f"笔记本 02 的 {n} 条结论中 {n} 条成立"
    assert "ok   一弧度换算成度，约为" in out
    assert "Without positions" not in out and "claims of notebook" not in out
    assert all(display_width(line) <= 100 for line in lines)


def test_the_chinese_table_keeps_its_columns_in_display_columns():
    with use_language("zh_CN"):
        text = table("03").text()
    lines = text.splitlines()
    header = lines[0]
    stated_at = display_width(header[: header.index("文中值")])
    for line in lines[1:-1]:
        assert display_width(line) <= 100, line
        cut = _at_column(line, stated_at)
        assert display_width(line[:cut]) == stated_at or cut == len(line), line  # no wide char straddles
        assert line[:cut].endswith("  ") or cut == len(line), line
    whole = set(re.findall(r"-?\d[\d.e+-]*", text))
    for c in all_claims("03"):
        assert set(re.findall(r"-?\d[\d.e+-]*", c.stated_text())) <= whole, c.id


def _at_column(line: str, column: int) -> int:
    for i in range(len(line) + 1):
        if display_width(line[:i]) >= column:
            return i
    return len(line)


def test_the_chinese_html_table():
    n = len(all_claims("09"))
    with use_language("zh"):
        html = table(9)._repr_html_()
    assert html.startswith('<table class="lessons-claims" data-notebook="09" lang="zh-CN">')
    assert '<th style="text-align: left; vertical-align: top">结论</th>' in html
    assert f"笔记本 09 的 {n} 条结论中 {n} 条成立</caption>" in html
    assert html.count("<tr title=") == n


def test_a_chinese_cell_wraps_between_characters_never_inside_a_number():
    text = "d = 128：sum_i cos(distance * omega_i) 在距离 0、2、16、256、1024 处的值"
    lines = wrap_cell(text, 20)
    assert len(lines) > 3 and all(display_width(line) <= 20 for line in lines)
    assert "".join(lines).replace(" ", "") == text.replace(" ", "")
    assert re.findall(r"\d+", "\n".join(lines)) == re.findall(r"\d+", text)
    assert not any(line.startswith(("，", "、", "：", "）")) for line in lines)


def _sanitize(text: str) -> str:
    return re.sub(r"-?\d\.\de-1\d\b", "FLOAT_NOISE", text)  # as tests/nbval_sanitize.cfg does


def _committed_claims_output(notebook: str) -> dict[str, str]:
    path = next((ROOT / "notebooks").glob(f"{notebook}_*.ipynb"))
    cell = json.loads(path.read_text(encoding="utf-8"))["cells"][-1]
    assert "".join(cell["source"]) == f'show("{notebook}")'
    return {kind: "".join(value) for kind, value in cell["outputs"][0]["data"].items()}


@pytest.mark.parametrize("notebook", ["01", "02", "05", "09"])
def test_the_english_table_is_the_committed_notebook_output(notebook):
    """English stays byte for byte what the notebooks show (and nbval compares)."""
    committed = _committed_claims_output(notebook)
    with use_language("en"):
        shown = table(notebook)
        assert _sanitize(repr(shown)) == _sanitize(committed["text/plain"])
        assert _sanitize(shown._repr_html_()) == _sanitize(committed["text/html"])
