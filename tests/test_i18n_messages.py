"""The package's own words follow the learner's language (gettext domain ``lessons``).

What ``check()`` prints, the judge's verdicts and hints, the input checks' errors and the
grader's feedback are marked in the code (``_``/``gettext`` from :mod:`lessons.i18n`, ``N_``
for words kept as data and translated where shown) and translated in
``lessons/locale/zh_CN/LC_MESSAGES/lessons.po``. The catalog tests extract the marked messages
with Babel at test time, so adding a message without its translation fails here.
"""

from __future__ import annotations

import ast
import io
import re
import unicodedata
from pathlib import Path

import numpy as np
import pytest

babel_extract = pytest.importorskip("babel.messages.extract")
from babel.messages.mofile import write_mo  # noqa: E402
from babel.messages.pofile import read_po  # noqa: E402

from lessons import _checks  # noqa: E402
from lessons.exercises import check, get, head_line, label, verdict_of  # noqa: E402
from lessons.grade import records, scoring  # noqa: E402
from lessons.grade.runner import NoAnswer, Unanswered  # noqa: E402
from lessons.i18n import use_language  # noqa: E402
from lessons.rotation import rotate_2d  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "lessons"
PO = PACKAGE / "locale" / "zh_CN" / "LC_MESSAGES" / "lessons.po"
MO = PO.with_suffix(".mo")
CJK = re.compile(r"[\u4e00-\u9fff]")
PLACEHOLDER = re.compile(r"\{[^{}]*\}")

# How Babel reads a call of each translate function: gettext(msgid), pgettext(context, msgid).
_SPECS = {"gettext": None, "_": None, "N_": None, "pgettext": ((1, "c"), 2)}


# --------------------------------------------------------------------------- extraction
def _keywords(tree: ast.Module) -> dict:
    """The names through which a module marks messages of the ``lessons`` domain: gettext and
    pgettext imported from ``lessons.i18n`` (under any alias, e.g. ``gettext as _``) and
    ``N_``. A module that imports none marks nothing of this domain."""
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            from_i18n = (node.module or "").split(".")[-1] == "i18n"
            for alias in node.names:
                if from_i18n and alias.name in ("gettext", "pgettext", "_"):
                    found[alias.asname or alias.name] = _SPECS[alias.name]
                if alias.name == "N_":
                    found[alias.asname or alias.name] = None
        elif isinstance(node, ast.FunctionDef) and node.name == "N_":
            found["N_"] = None
    return found


def _other_domain_lines(tree: ast.Module) -> set[int]:
    """Lines of calls that name another domain (``gettext(text, domain="claims")``)."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            for kw in node.keywords:
                ours = isinstance(kw.value, ast.Constant) and kw.value.value == "lessons"
                if kw.arg == "domain" and not ours:
                    lines.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return lines


def source_messages() -> dict[tuple[str | None, str], list[str]]:
    """{(context, msgid): ["lessons/x.py:12", ...]} of every message of the ``lessons``
    domain marked in the package's source, extracted with Babel."""
    messages: dict[tuple[str | None, str], list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        source = path.read_bytes()
        tree = ast.parse(source)
        keywords = _keywords(tree)
        if not keywords:
            continue
        skip = _other_domain_lines(tree)
        where = path.relative_to(ROOT).as_posix()
        for lineno, message, _comments, context in babel_extract.extract(
            "python", io.BytesIO(source), keywords=keywords
        ):
            if lineno in skip:
                continue
            msgid = message[0] if isinstance(message, tuple) else message
            messages.setdefault((context, msgid), []).append(f"{where}:{lineno}")
    return messages


def _catalog():
    with PO.open("rb") as fh:
        return read_po(fh, locale="zh_CN", domain="lessons")


def _entries(catalog) -> dict:
    return {(m.context, m.id): m for m in catalog if m.id}


# --------------------------------------------------------------------------- the catalog
def test_every_marked_message_has_a_translation():
    entries = _entries(_catalog())
    found = source_messages()
    assert len(found) > 150  # verdicts, hints, labels, input checks, feedback
    missing = [f"{where[0]}: {key[1]!r}" for key, where in found.items() if key not in entries]
    assert not missing, "messages without an entry in lessons.po (add a translation):\n" + "\n".join(missing)
    untranslated = [
        f"{found[key][0]}: {key[1]!r}"
        for key, m in entries.items()
        if key in found and (not m.string or m.fuzzy)
    ]
    assert not untranslated, "empty or fuzzy translations:\n" + "\n".join(untranslated)


def test_no_stale_entries_in_the_catalog():
    found = source_messages()
    stale = [msgid for (ctx, msgid) in _entries(_catalog()) if (ctx, msgid) not in found]
    assert not stale, "entries of lessons.po no longer in the source (remove them):\n" + "\n".join(stale)


def test_translations_keep_every_placeholder_and_number():
    problems = []
    for (_ctx, msgid), m in _entries(_catalog()).items():
        if set(PLACEHOLDER.findall(msgid)) != set(PLACEHOLDER.findall(m.string)):
            problems.append(f"{msgid!r}: placeholders {PLACEHOLDER.findall(m.string)}")
        numbers_en = sorted(re.findall(r"(?<![\w{])\d+(?:\.\d+)?", PLACEHOLDER.sub("", msgid)))
        numbers_zh = sorted(re.findall(r"(?<![\w{])\d+(?:\.\d+)?", PLACEHOLDER.sub("", m.string)))
        if numbers_en != numbers_zh:
            problems.append(f"{msgid!r}: numbers {numbers_en} became {numbers_zh}")
        if re.search(r"[A-Za-z]{3,}", PLACEHOLDER.sub("", msgid)) and not CJK.search(m.string):
            problems.append(f"{msgid!r}: no Chinese in {m.string!r}")
    assert not problems, "\n".join(problems)


def test_the_catalog_header_names_its_language():
    catalog = _catalog()
    assert catalog.mime_headers and dict(catalog.mime_headers)["Language"] == "zh_CN"


def test_mo_is_compiled_from_the_current_po():
    buffer = io.BytesIO()
    write_mo(buffer, _catalog(), use_fuzzy=False)
    assert MO.exists(), f"{MO.relative_to(ROOT)} is missing: run python -m lessons.i18n compile"
    assert MO.read_bytes() == buffer.getvalue(), (
        f"{MO.relative_to(ROOT)} is stale: run python -m lessons.i18n compile"
    )


def test_extraction_sees_only_this_domain(tmp_path):
    """A claims message (another domain) is not asked for here; N_ and gettext-as-_ are."""
    tree = ast.parse(
        "from ..i18n import gettext as _, pgettext\nfrom ._spec import N_\n"
        'a = _("one {n}")\nb = N_("two")\nc = pgettext("ctx", "three")\n'
        'd = pgettext("id", "four", domain="claims")\n'
    )
    keywords = _keywords(tree)
    assert set(keywords) == {"_", "pgettext", "N_"}
    assert _other_domain_lines(tree) == {6}


# --------------------------------------------------------------------------- check() in Chinese
def sign_flipped(pair, angle):
    return rotate_2d(pair, -angle)


def rotate_pair(pair, angle):
    return rotate_2d(pair, angle)


def _columns(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def test_check_prints_chinese_for_a_wrong_function(capsys):
    with use_language("zh_CN"):
        check("ex06_rotate_pair", sign_flipped, seed=3)
    out = capsys.readouterr().out
    verdict = verdict_of("ex06_rotate_pair", sign_flipped, seed=3)  # the same cases: the same failure
    f = verdict.failure
    lines = out.splitlines()
    assert lines[0] == "练习 2a：旋转一对坐标：未通过。"
    assert lines[1].startswith("  用例：    rotate_pair(pair=")
    index = int(re.search(r"\[(\d)\]", f.where).group(1))
    which = "x" if index == 0 else "y"
    assert f"  位置：    输出 [{index}]（旋转后这一对的 {which}）" in lines
    assert f"  应为：    {f.expected:.8g}" in lines
    assert f"  你的：    {f.given:.8g}" in lines
    assert ("  提示：    你的输出等于把角度符号取反（顺时针旋转）后的结果：检查旋转公式里的负号，"
            "并确认你计算的是 R @ pair（pair @ R 会朝另一个方向转）") in lines
    assert "{" not in out and "}" not in out  # every placeholder filled


def test_chinese_labels_line_up_by_display_width(capsys):
    with use_language("zh"):
        check("ex06_apply_rope", lambda q, k, positions: (np.asarray(q), np.asarray(k)), seed=1)
    lines = capsys.readouterr().out.splitlines()[1:]
    labelled = [re.match(r"  (\S+：)( +)", line) for line in lines]
    labelled = [m.group(0) for m in labelled if m]
    assert len(labelled) >= 4, lines
    for start in labelled:  # the detail starts at display column 12 (2 + 10), as in English
        assert _columns(start) == 12, start
    for line in lines:
        if not line.startswith("  ") or line.startswith("  " * 6):
            continue
        assert re.match(r"  \S+：", line), line

def test_check_prints_chinese_for_a_wrong_value_with_its_counts(capsys):
    with use_language("zh_CN"):
        check("ex06_rotated_d4", [1.0, 0.0, 1.0, 0.0])
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "练习 2d：[1, 0, 1, 0] 在位置 1 旋转后的结果：未通过。"
    assert re.search(r"\n  原因：    坐标 [0-3] 处的值不对\n", out)
    assert re.search(r"4 个数中有 [1-4] 个不同", out)
    assert "  提示：    这是未旋转的 x：每一对都要转过“位置 × 该对的频率”这么大的角度" in out


def test_check_in_chinese_for_passing_and_unanswered(capsys):
    with use_language("zh_CN"):
        check("ex06_rotate_pair", rotate_pair, seed=0)
        check("ex06_rotate_pair", None)
    assert capsys.readouterr().out.splitlines() == [
        "练习 2a：旋转一对坐标：通过（8 个用例）",
        "练习 2a：旋转一对坐标：尚未作答",
    ]


def test_a_chinese_notebook_folder_makes_check_speak_chinese(capsys, monkeypatch, tmp_path):
    """notebooks/zh holds a .lessons-language file and its kernels start there; the grader's
    kernel for a Chinese submission gets LESSONS_LANG instead."""
    monkeypatch.delenv("LESSONS_LANG", raising=False)
    (tmp_path / ".lessons-language").write_text("zh_CN\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    check("ex06_rotate_pair", None)
    monkeypatch.chdir(ROOT)
    check("ex06_rotate_pair", None)
    monkeypatch.setenv("LESSONS_LANG", "zh")
    check("ex06_rotate_pair", None)
    assert capsys.readouterr().out.splitlines() == [
        "练习 2a：旋转一对坐标：尚未作答",
        "Exercise 2a: rotate one pair: not answered yet",
        "练习 2a：旋转一对坐标：尚未作答",
    ]


def test_signature_message_in_chinese(capsys):
    def renamed(p, a):
        return rotate_2d(p, a)

    with use_language("zh_CN"):
        check("ex06_rotate_pair", renamed, seed=0)
    out = capsys.readouterr().out
    assert "  原因：    rotate_pair(p, a) 无法接收参数 pair, angle：请保留原来的参数名（pair, angle）" in out


def test_english_is_unchanged(capsys):
    with use_language("en"):
        check("ex06_rotate_pair", sign_flipped, seed=3)
        check("ex06_rotate_pair", rotate_pair, seed=0)
    out = capsys.readouterr().out
    f = verdict_of("ex06_rotate_pair", sign_flipped, seed=3).failure
    lines = out.splitlines()
    assert lines[0] == "Exercise 2a: rotate one pair: does not pass."
    assert lines[1].startswith("  tried:    rotate_pair(pair=")
    assert lines[2].startswith("  at:       output [")
    assert lines[3] == f"  expected: {f.expected:.8g}"
    assert lines[4] == f"  given:    {f.given:.8g}"
    assert lines[-2] == (
        "  hint:     your output is what you get with the angle's sign flipped (a clockwise turn): "
        "check the minus sign in the rotation, and that you compute R @ pair (pair @ R turns the other way)"
    )
    assert lines[-1] == "Exercise 2a: rotate one pair: passes (8 cases)"
    assert not CJK.search(out)


def test_the_verdict_keeps_english_data_whatever_the_language():
    """Hints and titles are data in English (what the grader stores and compares); only the
    words made from them follow the language."""
    with use_language("zh_CN"):
        zh = verdict_of("ex06_rotate_pair", sign_flipped, seed=3)
    en = verdict_of("ex06_rotate_pair", sign_flipped, seed=3)
    assert zh.hint == en.hint and zh.title == en.title == "Exercise 2a: rotate one pair"
    assert zh.outcome is en.outcome and zh.points == en.points == 0


def test_label_pads_to_the_same_column_in_both_languages():
    assert label("why:") == "why:      " and label("expected:") == "expected: "
    assert label("原因：") == "原因：    " and _columns(label("原因：")) == 10
    assert head_line("Exercise 2a: rotate one pair", "passes") == "Exercise 2a: rotate one pair: passes"


# --------------------------------------------------------------------------- input checks
def test_input_checks_speak_chinese():
    with use_language("zh_CN"), pytest.raises(ValueError) as err:
        _checks.check_width(5, "d")
    assert str(err.value) == "d 必须是正偶数（坐标是两两成对旋转的）；实际为 5"
    with use_language("zh_CN"), pytest.raises(ValueError) as err:
        _checks.as_positions([0.0, 1.0], length=3)
    assert str(err.value) == "positions 必须为每个 token 给出一个位置：应为 3 个（T 轴），实际为 2 个"
    with use_language("en"), pytest.raises(ValueError) as err:
        _checks.check_width(5, "d")
    assert str(err.value) == "d must be a positive even integer (coordinates are rotated in pairs); got 5"


# --------------------------------------------------------------------------- grader's feedback
def _record(language: str) -> dict:
    ex = get("ex06_rotate_pair")
    with use_language(language):
        wrong = scoring.from_verdict(ex, verdict_of("ex06_rotate_pair", sign_flipped, seed=3))
        lost = scoring.unanswered(get("ex06_pair_frequencies"), Unanswered(NoAnswer.TIMED_OUT, "5 s"))
        return records.build_record(
            student="s1", file="s1.ipynb", sha="0", notebook="06", seed=7,
            exercises={"ex06_rotate_pair": wrong, "ex06_pair_frequencies": lost},
            grading_problems=[], notes=[], student_events=[],
            cell_errors={3: "NameError: x"}, course_errors={},
        )


def test_feedback_for_a_chinese_submission_is_in_chinese():
    record = _record("zh_CN")
    assert record["exercises"]["ex06_pair_frequencies"]["not_graded"] == "5 s"
    assert record["result"].startswith("0 / 4: 错误：Exercise 2a")
    assert "出错的单元格：3 (NameError: x)" in record["result"]
    with use_language("zh_CN"):
        text = records.feedback_markdown(record)
    assert text.startswith("# 给 s1 的反馈：笔记本 06\n\n**得分 0 / 4。**\n")
    assert "| 练习 | 得分 | 结果 |" in text
    assert "| 练习 2a：旋转一对坐标 | 0 / 2 | 未通过：数值不对 |" in text
    assert "| 练习 2b：频率表 | 0 / 2 | 未评分：5 s |" in text
    assert "## 练习 2a：旋转一对坐标" in text
    assert "运行你的笔记本时：出错的单元格：3 (NameError: x)。" in text
    assert "输入用随机种子 7 抽取" in text


def test_feedback_in_english_is_unchanged():
    record = _record("en")
    assert record["exercises"]["ex06_pair_frequencies"]["not_graded"] == "5 s"
    assert record["result"] == (
        "0 of 4: wrong: Exercise 2a; errors in cell 3 (NameError: x)"
    )
    text = records.feedback_markdown(record)
    assert text.startswith("# Feedback for s1: notebook 06\n\n**0 of 4 points.**\n")
    assert "| Exercise 2a: rotate one pair | 0 / 2 | does not pass: wrong value |" in text
    assert "| Exercise 2b: the frequency table | 0 / 2 | not graded: 5 s |" in text
    assert "While running your notebook: errors in cell 3 (NameError: x)." in text
    assert not CJK.search(text)


def test_manual_grading_redoes_the_words_in_either_language():
    """with_manual drops the old "to grade by hand" part, whatever language wrote it."""
    written = get("ex06_gap_question")
    for language, pending in (("en", "to grade by hand"), ("zh_CN", "待人工评分")):
        with use_language(language):
            entry = scoring.score_written(written, "Only the distance counts.")
            rec = records.build_record(
                student="s2", file="s2.ipynb", sha="0", notebook="06", seed=1,
                exercises={written.grade_id: entry}, grading_problems=[], notes=[],
                student_events=[], cell_errors={}, course_errors={},
            )
            assert pending in rec["result"]
            merged = records.with_manual(rec, {"s2": {written.grade_id: {"points": 1.0}}})
        assert pending not in merged["result"] and merged["total"] == 1.0


def test_the_gradebook_redoes_a_chinese_record_in_chinese_after_manual_grading(tmp_path):
    """write_outputs merges the hand grades in each record's own language: a Chinese row keeps
    no stale "待人工评分" part naming a question already graded, and gains no English words."""
    first, second = get("ex06_gap_question"), get("ex06_length_question")
    with use_language("zh_CN"):
        exercises = {ex.grade_id: scoring.score_written(ex, "只有距离起作用。") for ex in (first, second)}
        rec = records.build_record(
            student="s3", file="s3.ipynb", sha="0", notebook="06", seed=1, exercises=exercises,
            grading_problems=[], notes=[], student_events=[], cell_errors={}, course_errors={},
        )
    rec["language"] = "zh_CN"
    records.write_outputs(tmp_path, {"s3": rec}, 1, {}, grades={"s3": {first.grade_id: {"points": 1.0}}})
    row = (tmp_path / "gradebook.csv").read_text(encoding="utf-8").splitlines()[1]
    pending = row[row.index("待人工评分"):]
    assert row.count("待人工评分") == 1 and "to grade by hand" not in row
    assert scoring.column_label(second) in pending and scoring.column_label(first) not in pending


def test_not_graded_words_share_their_prefix_in_chinese():
    """unanswered() strips the words of NOT_GRADED_PREFIX: every reason must start with them."""
    with use_language("zh_CN"):
        prefix = scoring._(scoring.NOT_GRADED_PREFIX).format(detail="")
        assert prefix == "未评分："
        for template in scoring.NOT_GRADED_WORDS.values():
            assert scoring._(template).startswith(prefix), template
