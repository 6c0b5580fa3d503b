"""The Chinese edition's notebooks: catalogs that cannot go stale silently, a build that keeps
the code, parity of what the prose states.

The first part works on a small fake repo in a temporary folder (an English notebook, its
solution and their catalog). The second part is the acceptance test of the real repo: every
catalog complete and faithful, ``notebooks/zh`` and ``solutions/zh`` made from them, the
package's ``.mo`` files fresh, the glossary's ``first_used`` column right.

    python -m pytest -o addopts="" tests/test_i18n_notebooks.py -q
"""

from __future__ import annotations

import csv

import nbformat
import pytest

from lessons.i18n import MARKER, parity
from lessons.i18n import build as B
from lessons.i18n.__main__ import main
from lessons.i18n.notebooks import (
    ROOT,
    catalog_dir,
    english_notebooks,
    read_catalog,
    translatable_cells,
    update_catalogs,
    write_catalog,
)

LANG = "zh_CN"

INTRO = "# 01 — Turning\n\nA turn by $\\theta$ keeps the length: rotate 3 arrows by 90 degrees with `rotate`."
INTRO_ZH = "# 01 — 转动\n\n转动 $\\theta$ 不改变长度：用 `rotate` 把 3 根箭头转 90 度。"
NOTE = "The attention read uses 2 keys; see [02](02_next.ipynb)."
NOTE_ZH = "这次注意力读取用到 2 个键；见 [02](02_next.ipynb)。"
TASK = "## Task\n\nWrite `turn(v)`."
TASK_ZH = "## 任务\n\n写出 `turn(v)`。"
ANSWER_EN = "### BEGIN SOLUTION\nIt is 4.\n### END SOLUTION"
ANSWER_ZH = "### BEGIN SOLUTION\n答案是 4。\n### END SOLUTION"
TRANSLATIONS = {("intro", INTRO): INTRO_ZH, ("note", NOTE): NOTE_ZH, ("task", TASK): TASK_ZH,
                ("answer", "YOUR ANSWER HERE"): None, ("answer", ANSWER_EN): ANSWER_ZH}
GRADED = {"nbgrader": {"grade": True, "grade_id": "ex1", "points": 2, "solution": False, "locked": True,
                       "schema_version": 3}}


def _notebook(solution: bool):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    cells = [
        nbformat.v4.new_markdown_cell(INTRO, id="intro"),
        nbformat.v4.new_code_cell("x = 3\nprint(x * 2)", id="code1"),
        nbformat.v4.new_markdown_cell(NOTE, id="note"),
        nbformat.v4.new_markdown_cell(TASK, id="task"),
        nbformat.v4.new_code_cell("assert x == 3  # graded", id="check1", metadata=GRADED),
        nbformat.v4.new_markdown_cell(ANSWER_EN if solution else "YOUR ANSWER HERE", id="answer",
                                      metadata={"nbgrader": {"solution": True, "grade": True,
                                                             "grade_id": "written", "points": 1,
                                                             "schema_version": 3}}),
    ]
    cells[1].outputs = [nbformat.v4.new_output("stream", name="stdout", text="6\n")]
    cells[1].execution_count = 1
    nb.cells = cells
    return nb


@pytest.fixture
def repo(tmp_path):
    """A fake repo: notebooks/01_turn.ipynb, solutions/01_turn.ipynb, a glossary, and the
    catalog fully translated."""
    for folder, solution in (("notebooks", False), ("solutions", True)):
        (tmp_path / folder).mkdir()
        nbformat.write(_notebook(solution), tmp_path / folder / "01_turn.ipynb")
    glossary = tmp_path / "locale" / LANG / "glossary.csv"
    glossary.parent.mkdir(parents=True)
    with glossary.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["english", "chinese", "first_used", "checked", "note"])
        writer.writerow(["attention", "注意力", "01", "yes", ""])
    update_catalogs(LANG, tmp_path)
    _translate(tmp_path, TRANSLATIONS)
    return tmp_path


def _po(root):
    return catalog_dir(LANG, root) / "01_turn.po"


def _translate(root, table) -> None:
    catalog = read_catalog(_po(root), LANG)
    for message in catalog:
        if message.id and (message.context, message.id) in table:
            message.string = table[(message.context, message.id)] or ""
            message.flags.discard("fuzzy")
    write_catalog(catalog, _po(root))


def _set_markdown(path, cell_id, text) -> None:
    nb = nbformat.read(path, as_version=4)
    next(c for c in nb.cells if c.id == cell_id).source = text
    nbformat.write(nb, path)


def _built(root, folder="notebooks"):
    return nbformat.read(root / folder / "zh" / "01_turn.ipynb", as_version=4)


# --- the fake repo ------------------------------------------------------------------------------

def test_the_catalog_has_one_message_per_cell_and_text(repo):
    catalog = read_catalog(_po(repo), LANG)
    keys = sorted((m.context, m.id) for m in catalog if m.id)
    # the student's "YOUR ANSWER HERE" is nbgrader's placeholder: not a message
    assert keys == sorted(k for k in TRANSLATIONS if k[1] != "YOUR ANSWER HERE")
    header = _po(repo).read_text(encoding="utf-8")
    assert "EMAIL@ADDRESS" not in header and "FULL NAME" not in header and "YEAR-MO-DA" not in header
    assert '"Language: zh_CN\\n"' in header and '"Project-Id-Version: rope-lesson13 ' in header


def test_a_fully_translated_and_built_repo_checks_clean(repo):
    B.build(LANG, repo, allow_untranslated=False, execute=False)
    assert B.check(LANG, repo) == []
    assert main(["--root", str(repo), "check"]) == 0


def test_build_keeps_code_cells_and_translates_markdown(repo):
    written = B.build(LANG, repo, execute=False)
    assert sorted(p.relative_to(repo).as_posix() for p in written) == [
        "notebooks/zh/01_turn.ipynb", "solutions/zh/01_turn.ipynb"]
    for folder in ("notebooks", "solutions"):
        english = nbformat.read(repo / folder / "01_turn.ipynb", as_version=4)
        zh = _built(repo, folder)
        assert [c.id for c in zh.cells] == [c.id for c in english.cells]
        for en_cell, zh_cell in zip(english.cells, zh.cells, strict=True):
            assert zh_cell.cell_type == en_cell.cell_type
            assert zh_cell.metadata == en_cell.metadata  # nbgrader metadata included
            if en_cell.cell_type == "code":
                assert zh_cell.source == en_cell.source
                assert zh_cell.outputs == [] and zh_cell.execution_count is None
        assert zh.metadata["lessons"] == {"language": LANG, "source": f"{folder}/01_turn.ipynb"}
        assert zh.metadata["kernelspec"] == english.metadata["kernelspec"]
        assert (repo / folder / "zh" / MARKER).read_text(encoding="utf-8").strip() == LANG
    student, solution = _built(repo), _built(repo, "solutions")
    assert [c.source for c in student.cells if c.cell_type == "markdown"] == [
        INTRO_ZH, NOTE_ZH, TASK_ZH, "YOUR ANSWER HERE"]
    assert solution.cells[-1].source == ANSWER_ZH


def test_build_says_which_notebooks_it_changed(repo):
    lines = []
    B.build(LANG, repo, execute=False, log=lines.append)
    assert lines[-1] == ("2 of 2 notebooks changed: notebooks/zh/01_turn.ipynb, "
                         "solutions/zh/01_turn.ipynb")
    B.build(LANG, repo, execute=False, log=lines.append)
    assert lines[-1] == "0 of 2 notebooks changed: none"
    _set_markdown(repo / "solutions" / "01_turn.ipynb", "note", NOTE)  # the same text: no change
    B.build(LANG, repo, execute=False, log=lines.append)
    assert lines[-1] == "0 of 2 notebooks changed: none"


def test_a_changed_english_cell_fails_check_and_update_marks_it_fuzzy(repo):
    B.build(LANG, repo, execute=False)
    changed = NOTE.replace("2 keys", "two keys")
    _set_markdown(repo / "notebooks" / "01_turn.ipynb", "note", changed)
    _set_markdown(repo / "solutions" / "01_turn.ipynb", "note", changed)

    found = B.check(LANG, repo)
    assert "stale: notebooks/01_turn.ipynb cell note: not in the catalog " \
           "(run python -m lessons.i18n update)" in found
    assert any(line.startswith("notebook: notebooks/zh/01_turn.ipynb: cell 2 (note): source")
               for line in found)
    assert main(["--root", str(repo), "check"]) == 1

    update_catalogs(LANG, repo)
    message = read_catalog(_po(repo), LANG).get(changed, context="note")
    assert message.fuzzy
    assert message.previous_id == [NOTE]
    assert message.string == NOTE_ZH  # kept as a guess, flagged
    assert read_catalog(_po(repo), LANG).get(NOTE, context="note") is None
    assert "stale: notebooks/01_turn.ipynb cell note: fuzzy (the English changed; review the translation " \
           "and clear the flag)" in B.check(LANG, repo)
    # a fuzzy entry is never used: the build refuses, or keeps the English with a warning
    with pytest.raises(B.UntranslatedError, match=r"notebooks/01_turn.ipynb: 1 cell\(s\) without a "
                                                  r"translation: note"):
        B.build(LANG, repo, execute=False)
    B.build(LANG, repo, execute=False, allow_untranslated=True)
    assert next(c for c in _built(repo).cells if c.id == "note").source == changed

    # update again: same bytes (the previous English survives a second merge)
    before = _po(repo).read_bytes()
    update_catalogs(LANG, repo)
    assert _po(repo).read_bytes() == before


def test_a_removed_cell_keeps_its_translation_as_obsolete(repo):
    for folder in ("notebooks", "solutions"):
        path = repo / folder / "01_turn.ipynb"
        nb = nbformat.read(path, as_version=4)
        nb.cells = [c for c in nb.cells if c.id != "note"]
        nbformat.write(nb, path)
    update_catalogs(LANG, repo)
    catalog = read_catalog(_po(repo), LANG)
    assert catalog.get(NOTE, context="note") is None
    assert catalog.obsolete[(NOTE, "note")].string == NOTE_ZH
    assert '#~ msgctxt "note"' in _po(repo).read_text(encoding="utf-8")
    B.build(LANG, repo, execute=False)
    assert B.check(LANG, repo) == []


def test_a_missing_translation_fails_check_and_build(repo):
    _translate(repo, {("task", TASK): None})
    assert "stale: notebooks/01_turn.ipynb cell task: no translation" in B.check(LANG, repo)
    with pytest.raises(B.UntranslatedError) as error:
        B.build(LANG, repo, execute=False)
    text = str(error.value)
    assert "2 markdown cell(s) have no zh_CN translation" in text
    assert "notebooks/01_turn.ipynb: 1 cell(s) without a translation: task" in text
    assert "solutions/01_turn.ipynb: 1 cell(s) without a translation: task" in text
    assert not (repo / "notebooks" / "zh").exists()  # nothing written
    assert main(["--root", str(repo), "build", "--no-execute"]) == 1


def test_a_notebook_that_fails_to_run_is_a_clear_error(repo, tmp_path_factory):
    for folder in ("notebooks", "solutions"):
        path = repo / folder / "01_turn.ipynb"
        nb = nbformat.read(path, as_version=4)
        nb.cells[1].source = "raise ValueError('broken on purpose')"
        nbformat.write(nb, path)
    out = tmp_path_factory.mktemp("out")
    with pytest.raises(B.ExecutionError) as error:
        B.build(LANG, repo, out, execute=True, log=lambda line: None)
    text = str(error.value)
    assert text.startswith(f"{out / 'notebooks' / 'zh' / '01_turn.ipynb'}: CellExecutionError: ")
    assert text.endswith("ValueError: broken on purpose\n") and "\x1b" not in text
    with pytest.raises(ValueError, match="jobs must be a whole number of at least 1; got 0"):
        B.build(LANG, repo, out, jobs=0)


def test_check_catches_a_hand_edited_code_cell_and_a_missing_marker(repo):
    B.build(LANG, repo, execute=False)
    path = repo / "solutions" / "zh" / "01_turn.ipynb"
    nb = nbformat.read(path, as_version=4)
    nb.cells[4].source = "assert True"
    nb.cells[4].metadata["nbgrader"]["points"] = 0
    nbformat.write(nb, path)
    (repo / "notebooks" / "zh" / MARKER).unlink()
    found = B.check(LANG, repo)
    assert ("notebook: solutions/zh/01_turn.ipynb: cell 4 (check1): source, metadata differ from the build"
            in found)
    assert f"notebook: notebooks/zh/{MARKER}: missing or not 'zh_CN'" in found


def test_check_catches_a_catalog_whose_notebook_is_gone(repo):
    B.build(LANG, repo, execute=False)
    (catalog_dir(LANG, repo) / "02_gone.po").write_bytes(_po(repo).read_bytes())
    assert B.check(LANG, repo) == [
        "stale: locale/zh_CN/notebooks/02_gone.po: no English notebook 02_gone.ipynb"]


def test_check_ignores_outputs(repo):
    """Executing a generated notebook changes its outputs, not what check compares."""
    B.build(LANG, repo, execute=False)
    path = repo / "notebooks" / "zh" / "01_turn.ipynb"
    nb = nbformat.read(path, as_version=4)
    nb.cells[1].outputs = [nbformat.v4.new_output("stream", name="stdout", text="6\n")]
    nb.cells[1].execution_count = 1
    nbformat.write(nb, path)
    assert B.check(LANG, repo) == []


@pytest.mark.parametrize("jobs", [1, 2])
def test_build_executes_into_another_folder_and_leaves_course_cells_alone(repo, tmp_path_factory,
                                                                          monkeypatch, jobs):
    from lessons.exercises import release

    def refuse():
        raise AssertionError("the zh build must not refresh lessons/grade/course_cells.json")

    monkeypatch.setattr(release, "refresh_course_cells", refuse)
    out = tmp_path_factory.mktemp("out")
    lines = []
    B.build(LANG, repo, out, execute=True, jobs=jobs, log=lines.append)
    for folder in ("notebooks", "solutions"):
        zh = nbformat.read(out / folder / "zh" / "01_turn.ipynb", as_version=4)
        assert zh.cells[1].outputs[0]["text"] == "6\n"
        assert zh.cells[1].execution_count == 1
        assert zh.cells[4].execution_count == 2
        assert (out / folder / "zh" / MARKER).read_text(encoding="utf-8") == "zh_CN\n"
    assert sorted(line.split()[-1] for line in lines[:2]) == [
        "notebooks/zh/01_turn.ipynb", "solutions/zh/01_turn.ipynb"]
    assert lines[2].endswith("all 2 notebooks")
    assert not (repo / "notebooks" / "zh").exists()


@pytest.mark.parametrize(("translated", "expected"), [
    (INTRO_ZH.replace("3 根", "4 根"), "numbers differ: English states ['3'] that the translation lacks, "
                                        "the translation states ['4'] that the English lacks"),
    (INTRO_ZH.replace("$\\theta$", "$\\phi$"), "formula missing or changed: ['$\\\\theta$']"),
    (INTRO_ZH.replace("用 `rotate` ", ""), "code span missing or changed: ['`rotate`']"),
    (INTRO_ZH.replace("# 01", "## 01"), "heading level missing or changed: ['#']"),
])
def test_parity_catches_what_a_translation_changed(repo, translated, expected):
    assert parity.problems(INTRO, INTRO_ZH, LANG, repo) == []
    assert expected in parity.problems(INTRO, translated, LANG, repo)


def test_parity_catches_a_glossary_term_and_a_link(repo):
    assert parity.problems(NOTE, NOTE_ZH, LANG, repo) == []
    wrong = NOTE_ZH.replace("注意力", "关注")
    assert parity.problems(NOTE, wrong, LANG, repo) == [
        "glossary: the English says 'attention'; use '注意力'"]
    assert "link target missing or changed: ['02_next.ipynb']" in parity.problems(
        NOTE, NOTE_ZH.replace("02_next", "03_next"), LANG, repo)
    _translate(repo, {("intro", INTRO): INTRO_ZH.replace("90", "九十")})
    found = B.check(LANG, repo)
    assert any(line.startswith("parity: notebooks/01_turn.ipynb cell intro: numbers differ")
               for line in found)


def test_compile_writes_deterministic_mo_and_check_finds_a_stale_one(repo):
    from babel.messages.catalog import Catalog
    from babel.messages.pofile import write_po

    po = repo / "lessons" / "locale" / LANG / "LC_MESSAGES" / "lessons.po"
    po.parent.mkdir(parents=True)
    catalog = Catalog(locale=LANG)
    catalog.add("Correct.", "正确。")
    with po.open("wb") as handle:
        write_po(handle, catalog)
    B.build(LANG, repo, execute=False)
    assert B.check(LANG, repo) == ["mo: lessons/locale/zh_CN/LC_MESSAGES/lessons.mo: missing "
                                   "(run python -m lessons.i18n compile)"]
    assert main(["--root", str(repo), "compile"]) == 0
    mo = po.with_suffix(".mo")
    first = mo.read_bytes()
    B.compile_catalogs(repo)
    assert mo.read_bytes() == first
    assert B.check(LANG, repo) == []
    import gettext

    with mo.open("rb") as handle:
        assert gettext.GNUTranslations(handle).gettext("Correct.") == "正确。"
    catalog.add("Try again.", "再试一次。")
    with po.open("wb") as handle:
        write_po(handle, catalog)
    assert B.check(LANG, repo) == ["mo: lessons/locale/zh_CN/LC_MESSAGES/lessons.mo: stale, differs from "
                                   "its .po (run python -m lessons.i18n compile)"]


# --- the real repo (acceptance: these pass once the translation is done and built) -------------

REAL = list(english_notebooks(ROOT).items())


@pytest.mark.parametrize(("stem", "paths"), REAL, ids=[stem for stem, _ in REAL])
def test_real_catalog_is_complete_and_faithful(stem, paths):
    status = next(s for s in B.catalog_status(LANG) if s.catalog.stem == stem)
    assert status.stale == []
    assert status.problems == []


@pytest.mark.parametrize("built", B.expected_notebooks(LANG),
                         ids=lambda b: b.target.relative_to(ROOT).as_posix())
def test_real_zh_notebook_is_its_english_twin(built):
    assert built.target.exists(), f"{built.target.relative_to(ROOT)} missing: python -m lessons.i18n build"
    english = nbformat.read(built.source, as_version=4)
    zh = nbformat.read(built.target, as_version=4)
    assert zh.metadata["lessons"] == {"language": LANG, "source": built.source.relative_to(ROOT).as_posix()}
    assert [c.id for c in zh.cells] == [c.id for c in english.cells]
    catalog = B.load_catalog(built.source.stem, LANG)
    translatable = {c.id for c in translatable_cells(english)}
    for en_cell, zh_cell in zip(english.cells, zh.cells, strict=True):
        assert zh_cell.cell_type == en_cell.cell_type
        if en_cell.cell_type == "code":
            assert (zh_cell.source, zh_cell.metadata) == (en_cell.source, en_cell.metadata), en_cell.id
            assert zh_cell.execution_count is not None, f"{en_cell.id}: not executed"
        elif en_cell.cell_type == "markdown" and en_cell.id in translatable:
            assert zh_cell.source == B.translation(catalog, en_cell), en_cell.id
            assert parity.numbers(zh_cell.source) == parity.numbers(en_cell.source), en_cell.id


@pytest.mark.parametrize("folder", ["notebooks", "solutions"])
def test_real_zh_folders_have_the_language_marker(folder):
    assert (ROOT / folder / "zh" / MARKER).read_text(encoding="utf-8").strip() == LANG


def test_real_nothing_out_of_step():
    assert B.check(LANG) == []


def test_real_mo_files_are_fresh():
    assert B.stale_mo() == []


def _english_markdown_by_notebook() -> dict[str, str]:
    out = {}
    for stem, paths in english_notebooks(ROOT).items():
        texts = [c.source for p in paths for c in translatable_cells(nbformat.read(p, as_version=4))]
        out[stem[:2]] = "\n\n".join(texts)
    return out


def test_glossary_first_used_is_the_first_notebook_that_uses_the_term():
    texts = _english_markdown_by_notebook()
    wrong = []
    for row in parity.glossary(LANG):
        first = next((nn for nn, text in sorted(texts.items()) if parity._uses(text, row["english"])), None)
        if first != row["first_used"]:
            wrong.append(f"{row['english']}: first_used {row['first_used']}, first used in {first}")
    assert wrong == []


def test_every_glossary_term_is_used_by_some_notebook():
    texts = "\n\n".join(_english_markdown_by_notebook().values())
    assert [row["english"] for row in parity.glossary(LANG) if not parity._uses(texts, row["english"])] == []
