"""The Chinese edition is graded by the same grader, for the same points (issue 13).

One run of ``python -m lessons.grade`` over the committed Chinese notebooks of 06-09
(``solutions/zh`` solved, ``notebooks/zh`` untouched) beside the English solutions: the
Chinese solutions earn exactly the English solutions' points (full marks; written answers go
to the manual sheet in both), the untouched Chinese notebooks earn zero, the course's own
cells are recognised in a Chinese notebook (its code cells are the English ones), and the
gradebook has the same columns. The submission's language (its metadata
``lessons.language``) reaches its kernel (``LESSONS_LANG``) and its feedback
(:func:`lessons.i18n.use_language`).
"""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from lessons.grade import core
from lessons.grade.loading import language_of, read_submission
from lessons.grade.sandbox import Sandbox, bwrap_path, bwrap_works

ROOT = Path(__file__).resolve().parent.parent
GRADED = ("06", "07", "08", "09")
_BWRAP = bwrap_path()
UNSANDBOXED = [] if _BWRAP and bwrap_works(_BWRAP)[0] else ["--allow-unsandboxed"]
CJK = re.compile(r"[\u4e00-\u9fff]")
# The kernel reports its language by failing a cell with a named exception when it is wrong.
LANGUAGE_CELL = (
    "import os\n"
    "from lessons.i18n import language\n"
    "if (os.environ.get('LESSONS_LANG'), language()) != ({want!r}, {want!r}):\n"
    "    raise LookupError(f\"kernel language {{os.environ.get('LESSONS_LANG')!r}}, {{language()!r}}\")\n"
)


def course_file(folder: str, nn: str) -> Path:
    found = sorted((ROOT / folder).glob(f"{nn}_*.ipynb"))
    assert len(found) == 1, f"expected one {folder}/{nn}_*.ipynb, found {[p.name for p in found]}"
    return found[0]


def chinese(kind: str, nn: str) -> Path:
    """The committed Chinese twin (``notebooks/zh`` or ``solutions/zh``) of notebook ``nn``."""
    english = course_file(kind, nn)
    path = ROOT / kind / "zh" / english.name
    assert path.is_file(), (f"no {path.relative_to(ROOT)}: generate the Chinese notebooks "
                            "(python -m lessons.i18n build) and commit them")
    return path


def language_notebook(path: Path, metadata_language: str | None, want: str) -> None:
    nb = nbformat.v4.new_notebook()
    if metadata_language:
        nb.metadata["lessons"] = {"language": metadata_language, "source": "a test's notebook"}
    nb.cells = [nbformat.v4.new_code_cell(LANGUAGE_CELL.format(want=want), id="lang")]
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    work = tmp_path_factory.mktemp("zhgrade")
    subs = work / "subs"
    for nn in GRADED:
        for who, path in ((f"en_solved_{nn}", course_file("solutions", nn)),
                          (f"zh_solved_{nn}", chinese("solutions", nn)),
                          (f"zh_untouched_{nn}", chinese("notebooks", nn))):
            (subs / who).mkdir(parents=True)
            (subs / who / path.name).write_bytes(path.read_bytes())
    name = course_file("notebooks", "06").name
    language_notebook(subs / "lang_zh" / name, "zh_CN", "zh_CN")
    language_notebook(subs / "lang_en" / name, None, "en")
    language_notebook(subs / "lang_wrong" / name, None, "zh_CN")  # the control: must fail its cell
    out = work / "out"
    cmd = [sys.executable, "-m", "lessons.grade", str(subs), "--out", str(out), "--seed", "13", *UNSANDBOXED]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stderr[-3000:]
    records = {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in (out / "records").glob("*.json")}
    with open(out / "gradebook.csv", newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        table = {r["student"]: r for r in reader}
        header = reader.fieldnames
    return {"out": out, "records": records, "table": table, "header": header}


@pytest.mark.parametrize("nn", GRADED)
def test_chinese_solution_earns_the_english_points_full_marks(graded, nn):
    en, zh = graded["records"][f"en_solved_{nn}"], graded["records"][f"zh_solved_{nn}"]
    assert zh["language"] == "zh_CN" and en["language"] == "en"
    assert zh["notebook"] == en["notebook"] == nn
    assert zh["points"] == en["points"]  # written answers: None (to grade by hand) in both
    assert (zh["total"], zh["max"]) == (en["total"], en["max"]) and zh["max"] > 0
    auto = {g: e for g, e in zh["exercises"].items() if e["kind"] != "written"}
    assert auto and all(e["points"] == e["max"] for e in auto.values()), auto
    assert all(e["points"] is None for e in zh["exercises"].values() if e["kind"] == "written")
    # The same cells fail in both (a demonstration that raises, a helper the grader hides), and
    # they are the course's own cells, not the student's.
    assert zh["cell_errors"] == en["cell_errors"] == zh["course_cell_errors"]
    assert zh["grading"] == en["grading"] == "ok"


@pytest.mark.parametrize("nn", GRADED)
def test_chinese_student_notebook_earns_zero(graded, nn):
    zh = graded["records"][f"zh_untouched_{nn}"]
    assert zh["language"] == "zh_CN"
    assert zh["total"] == 0 and zh["max"] == graded["records"][f"en_solved_{nn}"]["max"]
    assert all(p in (0, None) for p in zh["points"].values())
    # Its code cells are the English ones, so the course's own failing cells are the course's.
    assert zh["cell_errors"] == zh["course_cell_errors"]


def numbers(row: dict) -> dict:
    """A gradebook row without the student and the words (which follow the submission's language)."""
    return {k: v for k, v in row.items() if k not in ("student", "result", "grading")}


def test_same_gradebook_for_both_editions(graded):
    header, table = graded["header"], graded["table"]
    assert header[:2] == ["student", "notebook"] and header[-4:] == ["total", "max", "result", "grading"]
    for nn in GRADED:
        en, zh = table[f"en_solved_{nn}"], table[f"zh_solved_{nn}"]
        assert numbers(zh) == numbers(en)


def test_the_kernel_runs_in_the_submissions_language(graded):
    records = graded["records"]
    assert records["lang_zh"]["language"] == "zh_CN" and records["lang_zh"]["cell_errors"] == {}
    assert records["lang_en"]["language"] == "en" and records["lang_en"]["cell_errors"] == {}
    assert records["lang_wrong"]["cell_errors"] == {"1": "LookupError"}  # the cell can fail


def test_chinese_feedback_is_in_chinese(graded):
    feedback = graded["out"] / "feedback"
    for nn in GRADED:
        zh = (feedback / f"zh_untouched_{nn}.md").read_text(encoding="utf-8")
        en = (feedback / f"en_solved_{nn}.md").read_text(encoding="utf-8")
        assert CJK.search(zh), f"zh_untouched_{nn}.md has no Chinese:\n{zh[:600]}"
        assert not CJK.search(en), f"en_solved_{nn}.md is not English:\n{en[:600]}"


def test_feedback_is_rendered_in_the_records_language(tmp_path, monkeypatch):
    """The plumbing, with the rendering replaced by one that writes the language it runs in."""
    from lessons.grade import records
    from lessons.i18n import language

    monkeypatch.setattr(records, "feedback_markdown", lambda record, reveal=False: language())
    for student, lang in (("wang", "zh_CN"), ("smith", "en"), ("old_record", None)):
        record = {"student": student, "exercises": {}}
        if lang:
            record["language"] = lang
        core.write_feedback(tmp_path, record, None, False)
    assert (tmp_path / "feedback" / "wang.md").read_text(encoding="utf-8") == "zh_CN"
    assert (tmp_path / "feedback" / "smith.md").read_text(encoding="utf-8") == "en"
    assert (tmp_path / "feedback" / "old_record.md").read_text(encoding="utf-8") == "en"


def test_language_from_the_notebook_metadata():
    assert language_of({"metadata": {"lessons": {"language": "zh_CN", "source": "x"}}}) == ("zh_CN", None)
    assert language_of({"metadata": {"lessons": {"language": "zh"}}}) == ("zh_CN", None)
    assert language_of({"metadata": {}}) == ("en", None)
    assert language_of({}) == ("en", None)
    lang, note = language_of({"metadata": {"lessons": {"language": "fr"}}})
    assert lang == "en" and note == "notebook language 'fr' is not one the course has; feedback in English"
    zh = chinese("solutions", "06")
    assert read_submission(zh.read_bytes()).language == "zh_CN"
    assert read_submission(course_file("solutions", "06").read_bytes()).language == "en"


def test_the_sandbox_passes_the_language(tmp_path):
    sandbox = Sandbox(None, 1 << 30, tmp_path)
    assert sandbox.env(tmp_path, tmp_path, "zh_CN")["LESSONS_LANG"] == "zh_CN"
    assert sandbox.env(tmp_path, tmp_path)["LESSONS_LANG"] == "en"
    bwrapped = Sandbox("/usr/bin/bwrap", 1 << 30, tmp_path, hooks=[Path("/dev/null")])
    cmd = bwrapped.command(tmp_path, tmp_path, str(tmp_path / "k.json"), tmp_path, language="zh_CN")
    at = cmd.index("LESSONS_LANG")
    assert cmd[at - 1:at + 2] == ["--setenv", "LESSONS_LANG", "zh_CN"] and at < cmd.index("--")


def test_chinese_code_cells_are_the_english_ones():
    """What the grader's course-cell detection relies on (lessons/grade/course.py hashes them)."""
    for kind in ("notebooks", "solutions"):
        for nn in GRADED:
            en = nbformat.read(course_file(kind, nn), as_version=4)
            zh = nbformat.read(chinese(kind, nn), as_version=4)
            assert [c.source for c in zh.cells if c.cell_type == "code"] == \
                   [c.source for c in en.cells if c.cell_type == "code"], f"{kind}/zh/{nn}"
