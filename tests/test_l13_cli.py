"""``python -m lessons.l13``: run as a reader would, and in-process with one claim made to fail."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from lessons import l13
from lessons.claims import _registry, all_claims

ROOT = Path(__file__).resolve().parents[1]
CLAIMS = all_claims()


def run(*args: str, columns: int = 140, cwd: Path = ROOT, **env: str) -> subprocess.CompletedProcess:
    """Run the command; English unless ``env`` (e.g. ``LESSONS_LANG="zh"``) or ``cwd`` says otherwise."""
    base = {k: v for k, v in os.environ.items() if k != "LESSONS_LANG"}
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return subprocess.run(
        [sys.executable, "-m", "lessons.l13", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        env={**base, "COLUMNS": str(columns), "PYTHONPATH": path, "PYTHONIOENCODING": "utf-8", **env},
    )


def rows(stdout: str) -> list[str]:
    return [line for line in stdout.splitlines() if line.startswith(("ok ", "FAIL"))]


@pytest.fixture(scope="module")
def table():
    return run(columns=80)  # (notebook 10's claims train a small model: run the whole table once)


def numbers(text: str) -> set[str]:
    return set(re.findall(r"-?\d[\d.e+-]*", text))


@pytest.fixture(scope="module")
def as_json():
    return run("--json")


def test_every_claim_holds_exit_0(table):
    assert table.returncode == 0, table.stdout[-2000:] + table.stderr
    assert table.stderr == ""


def test_one_row_per_claim(table):
    found = rows(table.stdout)
    assert len(found) == len(CLAIMS)
    assert all(r.startswith("ok ") for r in found)
    printed = numbers(table.stdout)
    for c in CLAIMS:  # every number of every claim's stated value is printed, whole
        assert numbers(c.stated_text()) <= printed, c.id
    assert f"{len(CLAIMS)} of {len(CLAIMS)} claims hold" in table.stdout.splitlines()[-1]
    for nb in sorted({c.notebook for c in CLAIMS}):
        assert f"notebook {nb}" in table.stdout


def test_json_has_one_entry_per_claim(as_json):
    assert as_json.returncode == 0
    payload = json.loads(as_json.stdout)
    entries = payload["claims"]
    assert [e["id"] for e in entries] == [c.id for c in CLAIMS]
    assert payload["passed"] == len(CLAIMS) and payload["failed"] == 0
    assert all(e["ok"] is True for e in entries)
    first = entries[0]
    assert set(first) >= {"id", "notebook", "claim", "stated", "computed", "tolerance", "ok"}
    by_id = {e["id"]: e for e in entries}
    assert by_id["02.position_1"]["stated"] == "[0.54030231, 0.84147098]"
    assert by_id["02.position_1"]["computed"] == "[0.54030231, 0.84147098]"


def test_help_exits_0():
    result = run("--help")
    assert result.returncode == 0
    for option in ("--json", "--notebook", "--failed"):
        assert option in result.stdout


def test_unknown_notebook_exits_2_with_a_message():
    result = run("--notebook", "99")
    assert result.returncode == 2
    assert "no claims for notebook '99'" in result.stderr
    assert rows(result.stdout) == []


def test_unknown_option_exits_2():
    assert run("--frobnicate").returncode == 2


def test_notebook_without_leading_zero():
    result = run("--notebook", "3")
    assert result.returncode == 0, result.stderr
    assert len(rows(result.stdout)) == len(all_claims("03"))
    assert "notebook 03" in result.stdout


def test_notebook_not_a_number_exits_2_naming_the_argument():
    result = run("--notebook", "three")
    assert result.returncode == 2
    assert "argument --notebook: expected a notebook number such as 3 or 03; got 'three'" in result.stderr


def test_piped_into_head_ends_quietly():
    """``python -m lessons.l13 | head -3``: the reader closes the pipe early; no traceback."""
    l13_cmd = [sys.executable, "-m", "lessons.l13", "--notebook", "3"]
    producer = subprocess.Popen(l13_cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # Close the reading end before the claims are checked and printed: the first print meets
    # a pipe nobody reads (EPIPE), as it does when head has exited. (Reading first would let
    # the whole table fit in the pipe's buffer and test nothing.)
    producer.stdout.close()
    _, err = producer.communicate(timeout=300)
    assert b"Traceback" not in err and b"BrokenPipeError" not in err, err.decode()
    assert producer.returncode == 0


def test_at_80_columns_every_line_fits_and_no_number_is_broken(table):
    result = table
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    too_long = [line for line in lines if len(line) > 80]
    assert too_long == []
    # Each number a claim states appears whole on one line (wrapping happens between numbers).
    stated = {n for c in CLAIMS for n in numbers(c.stated_text())}
    whole = numbers(result.stdout)
    assert stated <= whole, sorted(stated - whole)[:10]
    # Wrapped values continue in their own column: the row with the longest stated value
    # continues on the next line, starting under "stated".
    header = next(line for line in lines if "stated" in line and "computed" in line)
    column = header.index("stated")
    longest = max(CLAIMS, key=lambda c: len(c.stated_text()))
    first_number = re.findall(r"-?\d[\d.e+-]*", longest.stated_text())[0]
    row = next(i for i, line in enumerate(lines) if line.startswith("ok ") and line[column:].startswith("["
               + first_number))
    assert lines[row + 1][column - 2:column] == "  " and lines[row + 1][column] not in " ["


# --------------------------------------------------------------------------- in-process


def test_one_notebook_only(capsys):
    assert l13.main(["--notebook", "02"]) == 0
    out = capsys.readouterr().out
    assert len(rows(out)) == len(all_claims("02"))
    assert "notebook 01" not in out


def test_failed_lists_nothing_when_all_hold(capsys):
    assert l13.main(["--failed", "--notebook", "02"]) == 0
    assert rows(capsys.readouterr().out) == []


@pytest.fixture
def one_wrong_claim(monkeypatch):
    """Replace one registered claim by a copy whose stated value is wrong (restored after)."""
    target = _registry._CLAIMS["02.position_1"]
    wrong = dataclasses.replace(target, stated=("0.54030231", "0.84147099"))
    monkeypatch.setitem(_registry._CLAIMS, target.id, wrong)
    return wrong


def test_a_failing_claim_exits_1_and_says_fail(one_wrong_claim, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")  # every value on one line
    assert l13.main(["--notebook", "02"]) == 1
    out = capsys.readouterr().out
    failing = [r for r in rows(out) if r.startswith("FAIL")]
    assert len(failing) == 1
    assert one_wrong_claim.text[:30] in failing[0]
    assert "[0.54030231, 0.84147099]" in out  # what the lesson states ...
    assert "[0.54030231, 0.84147098]" in out  # ... and what was computed
    n = len(all_claims("02"))
    assert f"{n - 1} of {n} claims hold; 1 FAIL" in out


def test_a_failing_claim_in_json_and_failed_mode(one_wrong_claim, capsys):
    assert l13.main(["--json", "--notebook", "02"]) == 1
    payload = json.loads(capsys.readouterr().out)
    assert payload["failed"] == 1
    assert [e["id"] for e in payload["claims"] if not e["ok"]] == ["02.position_1"]
    assert l13.main(["--failed", "--notebook", "02"]) == 1
    assert len(rows(capsys.readouterr().out)) == 1


def test_json_failed_lists_only_the_failures(one_wrong_claim, capsys):
    assert l13.main(["--json", "--failed", "--notebook", "2"]) == 1
    payload = json.loads(capsys.readouterr().out)
    assert [e["id"] for e in payload["claims"]] == ["02.position_1"]
    assert payload["failed"] == 1 and payload["passed"] == len(all_claims("02")) - 1
    assert l13.main(["--json", "--failed", "--notebook", "3"]) == 0
    assert json.loads(capsys.readouterr().out)["claims"] == []


def test_a_claim_whose_computation_raises_is_reported(monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "200")
    target = _registry._CLAIMS["03.d32.pairs"]

    def broken():
        raise RuntimeError("the experiment broke")

    monkeypatch.setitem(_registry._CLAIMS, target.id, dataclasses.replace(target, compute=broken))
    assert l13.main(["--notebook", "03"]) == 1
    assert "error: RuntimeError: the experiment broke" in capsys.readouterr().out


# --------------------------------------------------------------------------- the table ending a notebook


def test_claims_table_html_is_a_table_with_one_row_per_claim():
    from lessons.claims import table

    html = table(9)._repr_html_()
    assert html.startswith('<table class="lessons-claims" data-notebook="09">')
    assert html.count("<tr title=") == len(all_claims("09"))
    assert html.count("<td ") == 4 * len(all_claims("09"))  # every row has its four cells
    # Each number of a vector sits in its own no-wrap span: a line may break between numbers only.
    nowrap = '<span style="white-space: nowrap">'
    assert f"{nowrap}[0.38205142,</span> {nowrap}0.62054458]</span>" in html
    assert f"{len(all_claims('09'))} of {len(all_claims('09'))} claims of notebook 09 hold" in html


def test_claims_table_text_keeps_its_columns_and_numbers():
    from lessons.claims import table

    shown = table("03")
    text = repr(shown)
    assert text == str(shown) == repr(table(3))  # the same on every call: no timing, no addresses
    lines = text.splitlines()
    assert all(len(line) <= 100 for line in lines)
    header = lines[0]
    stated_at, computed_at = header.index("stated"), header.index("computed")
    whole = set(re.findall(r"-?\d[\d.e+-]*", text))
    for c in all_claims("03"):  # every stated number is printed whole
        assert set(re.findall(r"-?\d[\d.e+-]*", c.stated_text())) <= whole, c.id
    for line in lines[1:-1]:  # every value starts at its column: nothing is shifted
        assert line[stated_at - 2:stated_at] in ("  ", "") and line[computed_at - 2:computed_at] in ("  ", "")
    assert lines[-1] == f"{len(all_claims('03'))} of {len(all_claims('03'))} claims of notebook 03 hold"


def test_show_prints_plain_text_outside_ipython(capsys):
    from lessons.claims import show, table

    show("2")
    assert capsys.readouterr().out == table("02").text() + "\n"


def test_show_displays_the_table_object_in_ipython(monkeypatch):
    import IPython
    import IPython.display

    from lessons.claims import ClaimsTable, show

    shown = []
    monkeypatch.setattr(IPython, "get_ipython", lambda: object())
    monkeypatch.setattr(IPython.display, "display", lambda obj: shown.append(obj))
    assert show("05") is None  # nothing for the cell to echo a second time
    assert len(shown) == 1 and isinstance(shown[0], ClaimsTable) and shown[0].notebook == "05"


@pytest.mark.parametrize("bad", ["x", "0", "100", "3.0", True, None])
def test_show_names_a_bad_notebook(bad):
    from lessons.claims import table

    with pytest.raises(ValueError, match=r"notebook must be a notebook number such as 3 or '03'; got"):
        table(bad)


# --------------------------------------------------------------------------- in Chinese (--lang zh)


def display_width(line: str) -> int:
    from lessons.claims import display_width

    return display_width(line)


@pytest.fixture(scope="module")
def table_zh():
    return run("--lang", "zh", columns=80)


def test_lang_zh_exits_0_and_prints_the_claims_in_chinese(table_zh):
    assert table_zh.returncode == 0, table_zh.stdout[-2000:] + table_zh.stderr
    assert table_zh.stderr == ""
    out = table_zh.stdout
    assert len(rows(out)) == len(CLAIMS) and all(r.startswith("ok ") for r in rows(out))
    assert "ok   一弧度换算成度，约为" in out  # 02.radian.degrees, on one line
    assert "笔记本 02" in out and "notebook 02" not in out
    assert out.splitlines()[1] == "笔记本 01"
    assert out.splitlines()[2].split() == ["结论", "文中值", "计算值"]
    last = out.splitlines()[-1]
    assert re.fullmatch(rf"{len(CLAIMS)} 条结论中 {len(CLAIMS)} 条成立（检查用时 \d+\.\d\d 秒）", last), last
    assert "Without positions" not in out


def test_lang_zh_at_80_columns_fits_and_keeps_every_number_whole(table_zh):
    lines = table_zh.stdout.splitlines()
    assert [line for line in lines if display_width(line) > 80] == []
    stated = {n for c in CLAIMS for n in numbers(c.stated_text())}
    assert stated <= numbers(table_zh.stdout), sorted(stated - numbers(table_zh.stdout))[:10]


def test_lessons_lang_env_chooses_chinese():
    result = run("--notebook", "2", LESSONS_LANG="zh")
    assert result.returncode == 0, result.stderr
    n = len(all_claims("02"))
    assert "笔记本 02" in result.stdout
    assert f"{n} 条结论中 {n} 条成立（检查用时" in result.stdout


def test_lang_en_overrides_the_environment():
    result = run("--notebook", "2", "--lang", "en", LESSONS_LANG="zh_CN")
    assert result.returncode == 0
    n = len(all_claims("02"))
    assert "notebook 02" in result.stdout and f"{n} of {n} claims hold (checked in" in result.stdout
    assert "笔记本" not in result.stdout


def test_a_lessons_language_file_in_the_current_folder_chooses_chinese(tmp_path):
    (tmp_path / ".lessons-language").write_text("zh_CN\n", encoding="utf-8")
    result = run("--notebook", "4", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "相隔一个位置" in result.stdout  # 04.dot_table.one_apart


def test_lang_zh_help_is_chinese_and_fits():
    result = run("--lang", "zh", "--help", columns=80)
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert lines[0].startswith("用法: python -m lessons.l13 [-h] [--json]")
    indent = len(lines[1]) - len(lines[1].lstrip())  # the usage continues under its first option
    assert lines[1].lstrip().startswith("[") and indent == display_width("用法: python -m lessons.l13 ")
    assert "选项:" in lines
    assert "  -h, --help            显示此帮助信息并退出" in lines
    assert "  --notebook NN         只检查一个笔记本的结论（3 或 03）" in lines
    for option in ("--json", "--failed", "--lang {en,zh,zh_CN}"):
        assert option in result.stdout
    assert [line for line in lines if display_width(line) > 80] == []
    assert "Re-run" not in result.stdout and "show this help" not in result.stdout


def test_an_unknown_language_exits_2_naming_the_argument():
    result = run("--lang", "fr")
    assert result.returncode == 2
    assert "argument --lang: expected one of en, zh, zh_CN; got 'fr'" in result.stderr
    assert rows(result.stdout) == []


def test_lang_zh_errors_are_chinese():
    result = run("--lang", "zh", "--notebook", "three")
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1] == (
        "python -m lessons.l13：错误：参数 --notebook：应为笔记本编号，如 3 或 03；实际为 'three'"
    )
    assert result.stderr.startswith("用法: python -m lessons.l13")


def test_json_keeps_its_schema_and_adds_the_text_in_the_chosen_language(capsys):
    assert l13.main(["--json", "--lang", "zh", "--notebook", "02"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["language"] == "zh_CN"
    by_id = {e["id"]: e for e in payload["claims"]}
    entry = by_id["02.radian.degrees"]
    assert entry["claim"] == "One radian in degrees, about"  # the English source, as before
    assert entry["text"] == "一弧度换算成度，约为"
    assert entry["stated"] == "57.3" and entry["ok"] is True
    assert l13.main(["--json", "--notebook", "02"]) == 0
    english = json.loads(capsys.readouterr().out)
    assert english["language"] == "en"
    assert all(e["text"] == e["claim"] for e in english["claims"])


def test_a_failing_claim_in_chinese(one_wrong_claim, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    assert l13.main(["--lang", "zh", "--notebook", "02"]) == 1
    out = capsys.readouterr().out
    failing = [r for r in rows(out) if r.startswith("FAIL")]
    assert len(failing) == 1 and "位置 1 处（频率 1）的 [1,0] 变为 [cos 1, sin 1]" in failing[0]
    n = len(all_claims("02"))
    assert f"{n} 条结论中 {n - 1} 条成立；1 条不成立（FAIL）（检查用时" in out


def test_lang_does_not_outlive_the_call(capsys):
    from lessons.i18n import language

    before = language()
    assert l13.main(["--lang", "zh", "--notebook", "01"]) == 0
    capsys.readouterr()
    assert language() == before


@pytest.mark.parametrize("before", [None, "/somewhere/else"])
def test_fresh_turns_the_results_cache_off_for_the_run_only(monkeypatch, before):
    from lessons import results_cache

    if before is None:
        monkeypatch.delenv(results_cache.ENV_VAR, raising=False)
    else:
        monkeypatch.setenv(results_cache.ENV_VAR, before)
    seen = []
    monkeypatch.setattr(l13, "_run", lambda args: seen.append((args.fresh, results_cache.cache_dir())) or 0)
    assert l13.main(["--notebook", "10", "--fresh"]) == 0
    assert l13.main(["--notebook", "10"]) == 0
    expected_after = None if before is None else before
    assert os.environ.get(results_cache.ENV_VAR) == expected_after
    assert seen[0] == (True, None)  # off: nothing read, nothing stored
    assert seen[1][0] is False and seen[1][1] is not None
