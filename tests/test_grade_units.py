"""The grader's parts that need no kernel: ids, loading, reading probe replies, scoring, writing."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

from lessons.exercises import get
from lessons.grade.core import (
    NotANotebook,
    atomic_write,
    discover,
    draw_questions,
    load_cells,
    notebook_from_ids,
    score,
    student_id,
)
from lessons.grade.probe import PRELUDE, Question, ReplyError, parse_reply, probe_source


def test_student_ids_from_names():
    assert student_id(Path("subs/alice.ipynb"), Path("subs")) == "alice"
    assert student_id(Path("subs/bob/06_exercises.ipynb"), Path("subs")) == "bob"
    assert student_id(Path("submitted/carol/ps1/06_exercises.ipynb"), Path("submitted")) == "carol"
    assert student_id(Path("dave/06_exercises.ipynb")) == "dave"
    assert student_id(Path("subs/Eve Smith (late).ipynb"), Path("subs")) == "Eve_Smith_late"


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
    good = [{"shape": [2], "values": [0.5, 1.5]} for _ in q.expected]
    parsed = parse_reply(_reply("ex06_rotate_pair", good), q)
    assert parsed[0] == {"shape": [2], "values": [0.5, 1.5]}
    bad_values = [
        [{"shape": [2], "values": ["0.5", 1.5]}] * len(q.expected),   # a string number
        [{"shape": [2], "values": [True, 1.5]}] * len(q.expected),    # a bool
        [{"shape": [2], "values": [0.5]}] * len(q.expected),          # too few for the shape
        [{"shape": [3], "values": [0.5, 1, 2]}] * len(q.expected),    # values for a shape not asked
        [{"shape": [2], "values": [0.5, 1.5], "points": 2}] * len(q.expected),  # extra field
        [{"shape": [2], "values": [0.5, 1.5]}],                      # too few results
    ]
    for results in bad_values:
        with pytest.raises(ReplyError):
            parse_reply(_reply("ex06_rotate_pair", results), q)
    with pytest.raises(ReplyError, match="forged"):
        parse_reply(_reply("ex06_rotate_pair", good) * 2, q)
    with pytest.raises(ReplyError, match="no reply"):
        parse_reply(["PASS", "not json"], q)


def test_score_compares_with_the_graders_own_values():
    q = _q("ex06_rotate_pair")
    right = [{"shape": [2], "values": e} for e in q.expected]
    assert score(q, right)["points"] == 2
    wrong = [dict(r, values=[v + 0.01 for v in r["values"]]) for r in right]
    out = score(q, wrong)
    assert out["points"] == 0 and out["result"].startswith("fails: element")
    assert any(line.startswith("input:    rotate_pair(") for line in out["counterexample"])
    assert score(q, [{"missing": True}] * len(q.expected))["result"] == "not answered"
    assert score(q, "rotate_pair did not return within 3 s")["points"] == 0
    value = _q("ex06_dot_2_3")
    assert score(value, [{"shape": [], "values": 0.5403023058681398}])["points"] == 1
    assert score(value, [{"shape": [2]}])["result"].startswith("fails: shape (2,) given")


def test_probe_source_embeds_cases_and_runs_against_a_namespace(capsys):
    q = _q("ex06_pair_frequencies")
    ns: dict = {}
    exec("import numpy as np\n" + PRELUDE, ns)  # noqa: S102 - the grader's own probe code
    exec("def pair_frequencies(d, base=10000.0):\n    return base ** (-np.arange(0, d, 2) / d)\n", ns)  # noqa: S102
    exec(probe_source([q], "NONCE:"), ns)  # noqa: S102
    line = capsys.readouterr().out.strip()
    assert line.startswith("NONCE:")
    parsed = parse_reply([line[len("NONCE:"):]], q)
    assert score(q, parsed)["points"] == get("ex06_pair_frequencies").points


def test_atomic_write_replaces_whole_files(tmp_path):
    target = tmp_path / "sub" / "gradebook.csv"
    atomic_write(target, "a,b\n")
    atomic_write(target, "c,d\n")
    assert target.read_text() == "c,d\n"
    assert [p.name for p in target.parent.iterdir()] == ["gradebook.csv"]  # no temp file left


def test_question_for_value_exercise_has_one_expected():
    q = _q("ex06_layout_bug")
    assert isinstance(q, Question) and q.cases is None and len(q.expected) == 1


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
    from lessons.grade.core import Progress

    record = {"student": "alice", "total": 15, "max": 15, "status": "ok"}
    bar = _Tty(True)
    p = Progress(2, bar)
    p.update(record)
    p.update(dict(record, student="bob", total=3, status="cell 4 timed out after 10 s"))
    assert bar.text.count("\r[") == 2 and "[" + "#" * 30 + "] 2/2" in bar.text and bar.text.endswith("\n")
    lines = _Tty(False)
    p = Progress(2, lines)
    p.update(record)
    p.update(dict(record, student="bob", total=3, status="cell 4 timed out after 10 s"))
    assert lines.text.splitlines() == ["[1/2] alice: 15/15", "[2/2] bob: 3/15 (cell 4 timed out after 10 s)"]
