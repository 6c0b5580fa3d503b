"""The grader's parts that need no kernel: ids, loading, reading probe replies, scoring, writing."""

from __future__ import annotations

import json
import os
from pathlib import Path

import nbformat
import pytest

from lessons.exercises import get
from lessons.grade.discovery import (
    NothingToGrade,
    discover,
    notebook_from_ids,
    parse_shard,
    shard_of,
    student_id,
)
from lessons.grade.loading import NotANotebook, load_cells
from lessons.grade.probe import Forged, NoReply, Question, ReplyError, parse_reply, prelude, probe_source
from lessons.grade.records import atomic_write
from lessons.grade.scoring import draw, draw_questions, score


def test_student_ids_from_names():
    assert student_id(Path("subs/alice.ipynb"), Path("subs")) == "alice"
    assert student_id(Path("subs/bob/06_exercises.ipynb"), Path("subs")) == "bob"
    assert student_id(Path("submitted/carol/ps1/06_exercises.ipynb"), Path("submitted")) == "carol"
    assert student_id(Path("dave/06_exercises.ipynb")) == "dave"
    assert student_id(Path("subs/Eve Smith (late).ipynb"), Path("subs")) == "Eve_Smith_late"


def test_ids_cannot_be_taken_over_by_a_lookalike_name(tmp_path):
    """``_alice.ipynb`` cleans to ``alice`` too: the file named alice keeps the id whatever the
    order; a suffix never lands on an id another file has of its own (``bob-2.ipynb``)."""
    for rel in ("subs/_alice.ipynb", "subs/alice.ipynb", "more/bob.ipynb", "more/bob/06_exercises.ipynb",
                "more/bob-2.ipynb"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("{}")
    subs = discover([tmp_path / "subs"], None)
    assert {s.path.name: s.student for s in subs} == {"_alice.ipynb": "alice-2", "alice.ipynb": "alice"}
    subs = discover([tmp_path / "more"], None)
    by_path = {s.path.relative_to(tmp_path / "more").as_posix(): s.student for s in subs}
    assert by_path["bob-2.ipynb"] == "bob-2"
    assert sorted(by_path.values()) == ["bob", "bob-2", "bob-3"]


def test_discover_folders_files_and_duplicate_names(tmp_path):
    for rel in ("a/alice.ipynb", "b/alice.ipynb", "bob/06_exercises.ipynb", "x/.ipynb_checkpoints/c.ipynb"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("{}")
    (tmp_path / "notes.txt").write_text("x")
    subs = discover([tmp_path], None)
    assert [s.student for s in subs] == ["alice", "alice-2", "bob"]
    assert subs[2].notebook == "06" and subs[0].notebook is None  # 07-09 exist too: ambiguous
    assert [s.notebook for s in discover([tmp_path], "06")] == ["06"] * 3
    with pytest.raises(FileNotFoundError):
        discover([tmp_path / "missing"], None)


def test_load_cells_reasons():
    with pytest.raises(NotANotebook, match="invalid JSON at line 2"):
        load_cells(b'{\n  oops')
    with pytest.raises(NotANotebook, match="not UTF-8"):
        load_cells(b"\xff\xfe")
    with pytest.raises(NotANotebook, match="without notebook cells"):
        load_cells(b"[1, 2]")
    new = nbformat.v4
    cells = [new.new_markdown_cell("# hi"), new.new_code_cell("x = 1"), new.new_code_cell("  ")]
    nb = new.new_notebook(cells=cells)
    cells, notes = load_cells(nbformat.writes(nb).encode())
    assert cells == [(2, "x = 1")] and notes == []
    # broken metadata: still graded from the code cells
    raw = {"nbformat": 4, "nbformat_minor": 5, "metadata": [], "cells": [
        {"cell_type": "code", "source": ["y = ", "2"], "metadata": None, "outputs": 7}]}
    cells, notes = load_cells(json.dumps(raw).encode())
    assert cells == [(1, "y = 2")] and "does not validate" in notes[0]


def test_notebook_from_nbgrader_ids():
    text = json.dumps({"cells": [{"metadata": {"nbgrader": {"grade_id": "ex06_rotate_pair"}}}]})
    assert notebook_from_ids(text.encode()) == "06"
    assert notebook_from_ids(b'{"cells": []}') is None


def _q(gid, seed=0):
    return next(q for q in draw_questions("06", seed) if q.exercise.grade_id == gid)


def _reply(gid, results):
    return [json.dumps({"id": gid, "results": results})]


def test_parse_reply_accepts_plain_data_only():
    q = _q("ex06_rotate_pair")
    good = [[0.5, 1.5] for _ in q.cases]
    assert parse_reply(_reply("ex06_rotate_pair", good), q)[0] == [0.5, 1.5]
    tagged = [{"error": "TypeError: x"}] + [{"complex": [2], "max_imag": 0.64}] * (len(q.cases) - 1)
    assert parse_reply(_reply("ex06_rotate_pair", tagged), q)[1] == {"complex": [2], "max_imag": 0.64}
    assert parse_reply(_reply("ex06_rotate_pair", [{"missing": True}]), q) == {"missing": True}
    bad_values = [
        [["0.5", 1.5]] * len(q.cases),                              # a string number
        [{"points": 2}] * len(q.cases),                              # not a tag
        [{"error": "x", "points": 2}] * len(q.cases),                # a tag with an extra field
        [[0.5, 1.5]],                                                # too few results
    ]
    for results in bad_values:
        with pytest.raises(ReplyError):
            parse_reply(_reply("ex06_rotate_pair", results), q)
    with pytest.raises(Forged):
        parse_reply(_reply("ex06_rotate_pair", good) * 2, q)
    with pytest.raises(NoReply):
        parse_reply(["PASS", "not json"], q)


def test_score_uses_the_one_judge():
    drawn = draw("06", 0)
    q = next(q for q in drawn.questions if q.exercise.grade_id == "ex06_rotate_pair")
    right = drawn.expected["ex06_rotate_pair"]
    assert score(q, right, drawn)["points"] == get("ex06_rotate_pair").points
    wrong = [[v + 0.01 for v in r] for r in right]
    out = score(q, wrong, drawn)
    assert out["points"] == 0 and out["outcome"] == "WRONG_VALUE"
    assert "tried:    rotate_pair(" in out["message"]
    assert score(q, {"missing": True}, drawn)["outcome"] == "MISSING"
    complex_answer = [{"complex": [2], "max_imag": 0.64}] * len(right)
    assert score(q, complex_answer, drawn)["outcome"] == "NOT_REAL"


def test_probe_runs_against_a_namespace_as_the_kernel_does(capsys):
    q = _q("ex06_pair_frequencies")
    ns: dict = {}
    exec("import numpy as np\n" + prelude(), ns)  # noqa: S102 - the grader's own probe code
    exec("def pair_frequencies(d, base=10000.0):\n    return base ** (-np.arange(0, d, 2) / d)\n", ns)  # noqa: S102
    exec(probe_source(q, "NONCE:"), ns)  # noqa: S102
    line = capsys.readouterr().out.strip()
    assert line.startswith("NONCE:")
    outputs = parse_reply([line[len("NONCE:"):]], q)
    assert score(q, outputs)["points"] == get("ex06_pair_frequencies").points
    # a renamed parameter: the judge says to keep the names
    renamed = ("def pair_frequencies(width, base=10000.0):\n"
               "    return base ** (-np.arange(0, width, 2) / width)\n")
    exec(renamed, ns)  # noqa: S102
    exec(probe_source(q, "NONCE:"), ns)  # noqa: S102
    line = capsys.readouterr().out.strip()
    out = score(q, parse_reply([line[len("NONCE:"):]], q))
    assert out["outcome"] == "SIGNATURE" and "keep the parameter names" in out["message"]


def test_shards_are_stable_and_cover_everyone():
    assert parse_shard("0/3") == (0, 3) and parse_shard("2/3") == (2, 3)
    for bad in ("3/3", "1", "-1/2", "a/b", "0/0"):
        with pytest.raises(ValueError, match="--shard"):
            parse_shard(bad)
    students = [f"s{i}" for i in range(200)]
    shards = [shard_of(s, 3) for s in students]
    assert set(shards) == {0, 1, 2} and min(shards.count(k) for k in range(3)) > 40
    assert [shard_of(s, 3) for s in students[:50]] == shards[:50]  # adding students moves no one


def test_an_empty_or_wrong_folder_says_what_it_found(tmp_path):
    with pytest.raises(NothingToGrade, match="it is empty"):
        discover([tmp_path])
    (tmp_path / "alice.pdf").write_text("x")
    (tmp_path / "bob.py").write_text("x")
    with pytest.raises(NothingToGrade, match=r"2 files \(1 \.p.*06_exercises"):
        discover([tmp_path])


def test_atomic_write_replaces_whole_files(tmp_path):
    target = tmp_path / "sub" / "gradebook.csv"
    atomic_write(target, "a,b\n")
    atomic_write(target, "c,d\n")
    assert target.read_text() == "c,d\n"
    assert [p.name for p in target.parent.iterdir()] == ["gradebook.csv"]  # no temp file left


def test_question_for_value_exercise_has_no_cases():
    q = _q("ex06_rotated_d4")
    assert isinstance(q, Question) and q.cases is None and q.n == 1


class _Tty:
    def __init__(self, tty: bool):
        self.tty, self.text = tty, ""

    def isatty(self):
        return self.tty

    def write(self, s):
        self.text += s

    def flush(self):
        pass


def test_progress_bar_on_a_terminal_and_lines_otherwise():
    from lessons.grade.progress import Progress

    record = {"student": "alice", "total": 15, "max": 15, "grading": "ok"}
    bar = _Tty(True)
    p = Progress(2, bar)
    p.update(record)
    p.update(dict(record, student="bob", total=3, grading="incomplete: cell 4 timed out after 10 s"))
    assert bar.text.count("\r[") == 2 and "[" + "#" * 30 + "] 2/2" in bar.text and bar.text.endswith("\n")
    lines = _Tty(False)
    p = Progress(2, lines)
    p.update(record)
    p.update(dict(record, student="bob", total=3, grading="incomplete: cell 4 timed out after 10 s"))
    assert lines.text.splitlines() == ["[1/2] alice: 15/15",
                                       "[2/2] bob: 3/15 (incomplete: cell 4 timed out after 10 s)"]


def _exercise(column, points, maximum=2.0, outcome="WRONG", kind="function"):
    return {"column": column, "points": points, "max": maximum, "outcome": outcome, "kind": kind}


def test_the_result_words_tell_part_marks_from_wrong():
    from lessons.grade.records import summarise

    exercises = {"a": _exercise("Exercise 1", 0.0), "b": _exercise("Exercise 2", 1.25),
                 "c": _exercise("Exercise 3", 2.0, outcome="RIGHT")}
    words, total, maximum = summarise(exercises, [], [])
    assert words == "3.25 of 6: wrong: Exercise 1; part marks: Exercise 2"
    assert (total, maximum) == (3.25, 6.0)


def test_merging_hand_grades_writes_each_part_of_the_result_once():
    from lessons.grade.records import summarise, with_manual

    exercises = {"a": _exercise("Exercise 1", 0.0),
                 "b": _exercise("Exercise 2", 0.0, outcome="MISSING"),
                 "c": _exercise("Exercise 3", None, outcome="ANSWERED", kind="written")}
    words, total, maximum = summarise(exercises, ["the kernel restarted once"], [])
    assert words == ("0 of 6: wrong: Exercise 1; not answered: Exercise 2; to grade by hand: Exercise 3; "
                     "the kernel restarted once")
    record = {"student": "s", "exercises": exercises, "result": words, "points": {}, "total": total,
              "max": maximum}
    merged = with_manual(record, {"s": {"c": {"points": 1.0}}})
    assert merged["result"] == ("1 of 6: wrong: Exercise 1; part marks: Exercise 3; "
                                "not answered: Exercise 2; the kernel restarted once")
    assert merged["total"] == 1.0


def test_each_notebook_titles_its_exercises_apart():
    """The gradebook's columns and the result words name exercises by their titles' heads."""
    from lessons.exercises import all_exercises
    from lessons.grade.scoring import column_label

    for nb in sorted({ex.notebook for ex in all_exercises()}):
        labels = [column_label(ex) for ex in all_exercises(nb)]
        assert len(labels) == len(set(labels)), (nb, labels)


def test_columns_stay_apart_when_one_notebook_repeats_a_title(monkeypatch):
    """Two exercises of one notebook with one title get their ids as columns, with one
    notebook or several: results.json must map every column to one exercise."""
    from lessons.grade import records, scoring

    monkeypatch.setattr(scoring, "column_label",
                        lambda ex: "Question" if ex.grade_id.startswith("ex08_") and ex.kind == "written"
                        else ex.grade_id)
    both = {"ex08_why_not_v": None, "ex08_shift_question": None}
    alone = records.columns_for([{"exercises": both}])
    mixed = records.columns_for([{"exercises": both}, {"exercises": {"ex06_rotate_pair": None}}])
    for columns in (alone, mixed):
        headers = [header for header, _ in columns]
        assert len(headers) == len(set(headers)) == len(columns), columns
    assert dict(mixed)["ex08_why_not_v"] == "ex08_why_not_v"
    assert dict(mixed)["06 ex06_rotate_pair"] == "ex06_rotate_pair"


def test_a_course_cell_that_raises_on_purpose_is_no_error():
    """08 shows a ValueError on purpose (tagged raises-exception): it is neither the student's
    error nor a failure of the course's cells; another course cell's error still counts."""
    from lessons.grade.core import result_record
    from lessons.grade.course import cell_hash, course_cells_raising
    from lessons.grade.discovery import Submission
    from lessons.grade.runner import RunResult

    nb = nbformat.read(Path(__file__).parent.parent / "notebooks" / "08_layouts_caches_and_failures.ipynb", 4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    raising = [n for n, c in enumerate(code) if "raises-exception" in c.metadata.get("tags", ())]
    assert raising and {cell_hash(code[n].source) for n in raising} == course_cells_raising("08")
    other = next(n for n, c in enumerate(code) if n not in raising and c.source.strip()
                 and not (c.metadata.get("nbgrader") or {}).get("solution"))
    run = RunResult(cell_errors={raising[0]: "ValueError", other: "NameError"})
    record = result_record(Submission(Path("s.ipynb"), "s", "08"), "0", 1, None, run,
                           cells=[(n, c.source) for n, c in enumerate(code)])
    assert record["cell_errors"] == record["course_cell_errors"] == {str(other): "NameError"}


def _git(folder, *args):
    import subprocess

    subprocess.run(["git", "-C", str(folder), *args], check=True, capture_output=True)


def _course_notebook(*cells):
    nb = nbformat.v4.new_notebook()
    for source, meta in cells:
        nb.cells.append(nbformat.v4.new_code_cell(source, metadata=meta))
    return nb


@pytest.mark.skipif(__import__("shutil").which("git") is None, reason="git is not installed")
def test_course_cells_of_earlier_committed_versions_are_the_courses(tmp_path):
    """A student may hold an earlier version of a notebook: the course cells of every committed
    version that the current one no longer has are kept apart (NN/earlier), answer cells never;
    a shallow clone or a folder outside git gives no history (None), not a wrong one."""
    from lessons.grade.course import EARLIER, RAISES, cell_hash, compute, compute_earlier

    repo, folder = tmp_path / "repo", tmp_path / "repo" / "notebooks"
    folder.mkdir(parents=True)
    _git(repo, "init", "-q")
    answer = {"nbgrader": {"solution": True, "grade_id": "ex06_a"}}
    raises = {"tags": ["raises-exception"]}
    versions = [
        [("x = 1", {}), ("y = 2", answer), ("raise ValueError('v1')", raises)],
        [("x = 10", {}), ("y = 3", answer), ("raise ValueError('v2')", raises)],
    ]
    for n, cells in enumerate(versions):
        nbformat.write(_course_notebook(*cells), folder / "06_exercises.ipynb")
        _git(repo, "add", "-A")
        _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", f"v{n}")
    nbformat.write(_course_notebook(("x = 100", {}), ("raise ValueError('v2')", raises)),
                   folder / "06_exercises.ipynb")  # the working copy, not committed yet
    current = compute(folder)
    assert current == {"06": sorted({cell_hash("x = 100"), cell_hash("raise ValueError('v2')")}),
                       "06" + RAISES: [cell_hash("raise ValueError('v2')")]}
    earlier = compute_earlier(folder, current)
    assert earlier == {"06" + EARLIER: sorted({cell_hash("x = 1"), cell_hash("x = 10"),
                                               cell_hash("raise ValueError('v1')")}),
                       "06" + EARLIER + RAISES: [cell_hash("raise ValueError('v1')")]}
    shallow = tmp_path / "shallow"
    _git(tmp_path, "clone", "-q", "--depth", "1", f"file://{repo}", str(shallow))
    assert compute_earlier(shallow / "notebooks", current) is None
    outside = tmp_path / "outside"
    outside.mkdir()
    assert compute_earlier(outside, current) is None


def test_a_course_cell_of_an_earlier_version_is_never_the_students(monkeypatch):
    """A submission made from an earlier release: the course cell it still holds, changed since,
    fails in the graded run; the error is the course's, not the student's."""
    from lessons.grade import course
    from lessons.grade.core import result_record
    from lessons.grade.discovery import Submission
    from lessons.grade.runner import RunResult

    old, now, mine = "plot_old_way()", "plot_new_way()", "my_own_cell()"
    monkeypatch.setattr(course, "_data", lambda: {"09": [course.cell_hash(now)],
                                                  "09" + course.EARLIER: [course.cell_hash(old)]})
    run = RunResult(cell_errors={0: "NameError: plot_old_way", 1: "NameError: my_own_cell"})
    record = result_record(Submission(Path("s.ipynb"), "s", "09"), "0", 1, None, run,
                           cells=[(0, old), (1, mine)])
    assert record["course_cell_errors"] == {"0": "NameError: plot_old_way"}
    assert record["result"].endswith("errors in cell 1 (NameError: my_own_cell)")
    assert course.course_cells("09") == {course.cell_hash(now), course.cell_hash(old)}


def test_feedback_leaves_out_the_note_on_the_course_cells():
    from lessons.grade.records import feedback_markdown

    note = " (1 of the course's own cell failed or timed out)"
    record = {"student": "s", "notebook": "08", "total": 1.0, "max": 2.0, "grading": "ok" + note,
              "course_cells_note": note, "exercises": {}, "result": "1 of 2", "seed": 1, "graded_at": "now"}
    text = feedback_markdown(record)
    assert "course" not in text and "Grading:" not in text
    record["grading"] = "incomplete: Exercise 1: f did not return within 10 s" + note
    assert "Grading: incomplete: Exercise 1: f did not return within 10 s." in feedback_markdown(record)


def test_the_kernel_client_refuses_huge_messages_and_never_splits_a_flood(tmp_path):
    """A kernel can write pre-serialized messages straight to its sockets, past every output
    cap: the client's sockets refuse any over MAX_MESSAGE_BYTES, and a stream without the
    probe's nonce is never split into lines (a flood of short lines once took 5.8 GB)."""
    import zmq

    from lessons.grade.kernel import MAX_MESSAGE_BYTES, CappedClient, SandboxedKernelManager
    from lessons.grade.sandbox import Sandbox

    km = SandboxedKernelManager(Sandbox(None, 1 << 30), tmp_path, tmp_path)
    kc = km.client()  # kept: its context ends with it
    sock = kc.context.socket(zmq.SUB)
    try:
        assert sock.getsockopt(zmq.MAXMSGSIZE) == MAX_MESSAGE_BYTES <= 64 << 20
    finally:
        sock.close()

    class Text(str):
        def splitlines(self, *args):
            raise AssertionError("a stream without the nonce was split into lines")

    client = CappedClient(nbformat.v4.new_notebook(), km=km, max_output=10, nonce="L13-abc:")
    outs: list = []
    client.output(outs, {"msg_type": "stream", "content": {"name": "stdout", "text": Text("ab\n" * 1000)}},
                  None, 0)
    assert client.probe_lines == [] and "truncated" in outs[-1]["text"]
    probe = {"msg_type": "stream", "content": {"name": "stdout", "text": "x\nL13-abc:{}\n"}}
    client.output(outs, probe, None, 0)
    assert client.probe_lines == ["{}"]


def test_a_memory_limit_no_kernel_can_start_under_is_refused_by_name(tmp_path, capsys):
    from lessons.grade.cli import MIN_MEMORY_MB, main

    assert main([str(tmp_path), "--out", str(tmp_path / "out"), "--memory", "512"]) == 2
    err = capsys.readouterr().err
    assert f"--memory must be at least {MIN_MEMORY_MB} MB" in err and "got 512" in err


def test_spreadsheet_cells_never_start_a_formula():
    from lessons.grade.discovery import _clean_id
    from lessons.grade.records import manual_sheet

    record = {"exercises": {"ex06_gap_question": {"kind": "written", "title": "Q", "max": 1,
                                                  "answer": '=HYPERLINK("http://x.invalid")'}}}
    sheet = manual_sheet({"mallory": record}, {})
    assert "'=HYPERLINK" in sheet and ',=HYPERLINK' not in sheet
    assert _clean_id("-2-3") == "2-3" and _clean_id("@sum") == "sum"


def test_a_check_call_in_a_comment_or_a_string_is_no_call():
    from lessons.grade.runner import check_calls, checked_names

    src = ('# check("ex06_rotate_pair", rotate_pair_v1)\n'
           'note = "check(\'ex06_score\', old_score)"\n'
           'check("ex06_rotate_pair", turn_pair)\n'
           'check("ex06_score", lambda q, k, m, n: 0.0)\n')
    assert check_calls(src) == [("ex06_rotate_pair", "turn_pair"), ("ex06_score", None)]
    assert checked_names([(1, src)], {"ex06_rotate_pair", "ex06_score"}) == {"ex06_rotate_pair": "turn_pair",
                                                                             "ex06_score": None}
    # The last check call decides: a lambda after a named draft is judged by the exercise's name.
    later = 'check("ex06_rotate_pair", draft)\ncheck("ex06_rotate_pair", lambda p, a: rotate_pair(p, a))\n'
    assert checked_names([(1, later)], {"ex06_rotate_pair"}) == {"ex06_rotate_pair": None}


def test_ids_from_students_folders_win_and_ids_fit_a_file_name(tmp_path):
    import unicodedata

    from lessons.grade.discovery import MAX_ID_BYTES

    zoe = unicodedata.normalize("NFD", "Zoë")  # a folder from a zip made on a Mac
    for rel in (f"subs/{zoe}/06_exercises.ipynb", "subs/aaron/Zoë.ipynb", "subs/aaron/06_exercises.ipynb",
                "subs/" + "一" * 80 + ".ipynb"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("{}")
    by_path = {s.path.relative_to(tmp_path / "subs").as_posix(): s.student
               for s in discover([tmp_path / "subs"], None)}
    assert by_path[f"{zoe}/06_exercises.ipynb"] == "Zoë" and by_path["aaron/Zoë.ipynb"] == "Zoë-2"
    long_id = by_path["一" * 80 + ".ipynb"]
    assert long_id == "一" * (MAX_ID_BYTES // 3) and len((long_id + ".json").encode()) < 200


def test_a_file_of_millions_of_empty_lists_is_refused_before_it_is_parsed():
    from lessons.grade.loading import MAX_CONTAINERS

    data = b'{"cells": [], "metadata": {"x": [' + b"[]," * (MAX_CONTAINERS + 1) + b'[]]}}'
    with pytest.raises(NotANotebook, match=r"JSON arrays or objects \(limit 2,000,000\)"):
        load_cells(data)


def test_an_exception_name_is_short_plain_text_whatever_the_kernel_sent():
    from lessons.grade.runner import MAX_EXCEPTION_NAME, _exception_name

    nested: list = []
    for _ in range(700):
        nested = [nested]
    assert _exception_name(nested) == "error" and _exception_name(None) == "error"
    assert _exception_name("E" * 3_000_000) == "E" * MAX_EXCEPTION_NAME + "..."
    assert _exception_name("Zero\x1b[31mDivisionError") == "Zero?[31mDivisionError"


def test_a_chinese_answer_cell_without_metadata_is_found_after_its_question():
    from lessons.exercises import all_exercises
    from lessons.grade.course import question_cells
    from lessons.grade.scoring import written_answers

    root = Path(__file__).resolve().parent.parent
    nb = nbformat.read(root / "solutions" / "zh" / "06_exercises.ipynb", 4)
    markdown = [(i, c.source, None) for i, c in enumerate(nb.cells, start=1) if c.cell_type == "markdown"]
    tagged = {(c.metadata.get("nbgrader") or {}).get("grade_id"): c.source for c in nb.cells
              if c.cell_type == "markdown" and (c.metadata.get("nbgrader") or {}).get("grade_id")}
    written = [e for e in all_exercises("06") if e.kind == "written"]
    found = written_answers(markdown, written, question_cells("06"))
    assert found == {e.grade_id: tagged[e.grade_id] for e in written}


def test_a_gone_cgroup_is_removed_at_once_and_a_folder_is_measured_with_a_bound(tmp_path):
    """On cgroup v2 the pids and memory groups of a kernel are one folder: removing it twice
    must not wait (the second remove once slept 5 s, holding every other kernel's loop).
    folder_usage walks at most max_entries entries (a run folder of a million files)."""
    import time

    from lessons.grade.runner import folder_usage
    from lessons.grade.sandbox import MemoryCgroup, PidsCgroup

    start = time.perf_counter()
    PidsCgroup.remove(tmp_path / "gone")
    MemoryCgroup.remove(tmp_path / "gone")
    assert time.perf_counter() - start < 0.5
    for n in range(30):
        (tmp_path / f"f{n}").write_bytes(b"x" * 100)
    size, entries = folder_usage(tmp_path, 1000)
    assert entries == 30 and size >= 3000  # the bytes a file holds, or its blocks on disk
    size, entries = folder_usage(tmp_path, 10)
    assert entries == 11 and size >= 1100
    # A tree too deep to walk by path (3000 levels, or 20 names of 250 characters: past
    # PATH_MAX) counts as over the limit, and remove_tree still removes it.
    from lessons.grade.core import remove_tree

    for name, levels in (("d", 3000), ("x" * 250, 20)):
        top = tmp_path / f"deep-{len(name)}"
        top.mkdir()
        fd = os.open(top, os.O_RDONLY)
        for _ in range(levels):
            os.mkdir(name, dir_fd=fd)
            inner = os.open(name, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
        os.close(fd)
        assert folder_usage(top, 1000)[1] == 1001
        remove_tree(top)
        assert not top.exists()
