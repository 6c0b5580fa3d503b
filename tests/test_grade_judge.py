"""One judge, at the check cell: the learner's check and the grader give the same verdict.

Each submission below is also judged in this process the way the learner's ``check`` judges
it (the cells before the check cell run here, then :func:`lessons.exercises.verdict_of`),
and the grader's outcome for that exercise must be the same outcome with the same points.
The five disagreements of the grader issue are here, plus a family of wrong answers.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import nbformat
import numpy as np
import pytest
from nbformat import v4

from lessons.exercises import get, verdict_of
from lessons.grade.sandbox import bwrap_path, bwrap_works

ROOT = Path(__file__).resolve().parent.parent
_BWRAP = bwrap_path()
UNSANDBOXED = [] if (_BWRAP and bwrap_works(_BWRAP)[0]) else ["--allow-unsandboxed"]

IMPORTS = "import math\nimport numpy as np\nfrom lessons.exercises import check\n"
TURN = '''
def turn(pair, angle):
    c, s = np.cos(angle), np.sin(angle)
    return np.array([c * pair[0] - s * pair[1], s * pair[0] + c * pair[1]])
'''
ROTATE_PAIR = "def rotate_pair(pair, angle):\n    return {body}\n"


def _yarn_solution() -> str:
    nb = nbformat.read(ROOT / "solutions" / "09_longer_contexts.ipynb", as_version=4)
    cell = next(c for c in nb.cells if c.cell_type == "code" and "def yarn_inv_freq" in c.source)
    lines = [ln for ln in cell.source.splitlines() if "SOLUTION" not in ln]
    return "\n".join(lines) + "\n"


def _cases() -> dict[str, tuple[str, str, list[str], str]]:
    """name -> (notebook, grade_id, cells, the check cell's source)."""
    cases: dict[str, tuple[str, str, list[str], str]] = {}
    # 08: a helper rotate(x1, x2, angle) used by the answer; a course cell below redefines rotate.
    split = ('''def rotate(x1, x2, angle):
    return x1 * np.cos(angle) - x2 * np.sin(angle), x2 * np.cos(angle) + x1 * np.sin(angle)


def rotate_split_half(x, position):
    half = len(x) // 2
    angle = position * 10000.0 ** (-np.arange(0, len(x), 2) / len(x))
    a, b = rotate(x[:half], x[half:], angle)
    return np.concatenate([a, b])
''')
    cases["helper_redefined_08"] = ("08", "ex08_rotate_split_half", [IMPORTS, split],
                                    "def rotate(x, positions):\n    return x  # the course's own helper\n")
    # 09: a helper omega(d, base) used by exercise 1, rebound by a later cell.
    yarn = _yarn_solution().replace("inv = base ** (-np.arange(0, d, 2) / d)", "inv = omega(d, base)")
    assert "omega(d, base)" in yarn
    helper = "def omega(d, base):\n    return base ** (-np.arange(0, d, 2) / d)\n"
    cases["helper_rebound_09"] = ("09", "ex09_yarn_inv_freq", [IMPORTS, helper + yarn],
                                  "omega = 10000.0 ** (-np.arange(0, 64, 2) / 64)\n")
    # 06: rotate_pair calls a helper defined only after its check cell: the check fails.
    cases["helper_defined_later_06"] = ("06", "ex06_rotate_pair",
                                        [IMPORTS, ROTATE_PAIR.format(body="turn(pair, angle)")], TURN)
    # 06: a complex answer, refused by both (not silently made real).
    cases["complex_06"] = ("06", "ex06_rotated_d4", [
        IMPORTS, "rotated_d4 = np.array([1.0, 0.0, 1.0, 0.0]) * (np.conj(np.exp(2j)) * np.exp(3j))\n"], "")
    # 06: a ragged list, refused by both (check() itself does not crash).
    cases["ragged_06"] = ("06", "ex06_rotated_d4", [IMPORTS, "rotated_d4 = [[1.0, 0.0], [1.0]]\n"], "")
    # A family of wrong rotate_pair answers (and one right one).
    wrong = {
        "sign_flipped": "turn(pair, -angle)",
        "swapped": "turn(pair, angle)[::-1]",
        "scaled": "1.01 * turn(pair, angle)",
        "degrees": "turn(pair, np.degrees(angle))",
        "no_turn": "np.asarray(pair, dtype=float)",
        "list_out": "list(turn(pair, angle))",
        "wrong_shape": "turn(pair, angle)[:1]",
        "raises": "1 / 0",
        "none": "None",
        "float32": "turn(pair, np.float32(angle)).astype(np.float32)",
        "right": "turn(pair, angle)",
    }
    for key, body in wrong.items():
        cases[f"rotate_pair_{key}"] = ("06", "ex06_rotate_pair",
                                       [IMPORTS, TURN + ROTATE_PAIR.format(body=body)], "")
    return cases


CASES = _cases()


def _notebook(cells: list[str], gid: str, after: str):
    nb = v4.new_notebook()
    nb.cells = [v4.new_code_cell(src) for src in cells]
    nb.cells.append(v4.new_code_cell(f'check("{gid}", {get(gid).name})'))
    if after:
        nb.cells.append(v4.new_code_cell(after))
    return nb


def _learner_verdict(cells: list[str], gid: str):
    ns: dict = {}
    for src in cells:
        try:
            exec(src, ns)  # noqa: S102 - the test's own submissions
        except Exception:
            pass
    return verdict_of(gid, ns.get(get(gid).name), seed=5)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("judge")
    for name, (nb_id, gid, cells, after) in CASES.items():
        folder = tmp / "subs" / nb_id
        folder.mkdir(parents=True, exist_ok=True)
        nbformat.write(_notebook(cells, gid, after), folder / f"{name}.ipynb")
    records = {}
    for nb_id in sorted({c[0] for c in CASES.values()}):
        out = tmp / f"out{nb_id}"
        done = subprocess.run([sys.executable, "-m", "lessons.grade", str(tmp / "subs" / nb_id),
                               "--out", str(out), "--notebook", nb_id, "--seed", "11", *UNSANDBOXED],
                              cwd=ROOT, capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, done.stderr
        for p in (out / "records").glob("*.json"):
            records[p.stem] = json.loads(p.read_text())
    return records


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_learners_check_and_the_grader_agree(graded, name):
    nb_id, gid, cells, _ = CASES[name]
    learner = _learner_verdict(cells, gid)
    grader = graded[name]["exercises"][gid]
    assert grader["outcome"] == learner.outcome.name, (name, grader["message"], learner.message())
    assert grader["points"] == learner.points, (name, grader, learner)
    assert grader["judged_after_cell"] is not None  # judged where its check cell stood


def test_the_five_cases_of_the_issue_get_the_right_verdicts(graded):
    def outcome(name, gid):
        return graded[name]["exercises"][gid]["outcome"]

    assert outcome("helper_redefined_08", "ex08_rotate_split_half") == "RIGHT"
    assert outcome("helper_rebound_09", "ex09_yarn_inv_freq") == "RIGHT"
    assert outcome("helper_defined_later_06", "ex06_rotate_pair") == "ERROR"
    assert outcome("complex_06", "ex06_rotated_d4") == "NOT_REAL"
    assert outcome("ragged_06", "ex06_rotated_d4") == "RAGGED"


def test_a_wrong_answer_that_is_a_known_bug_gets_its_hint_in_the_feedback(graded):
    record = graded["rotate_pair_sign_flipped"]["exercises"]["ex06_rotate_pair"]
    assert record["points"] == 0 and record["hint"] and "sign" in record["hint"]
    assert np.isfinite(graded["rotate_pair_right"]["total"])
