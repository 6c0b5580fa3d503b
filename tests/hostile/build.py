"""Hostile submissions for the grader's tests, built with nbformat from the solution of 06.

:func:`build` writes one notebook (or file) per kind into a folder and returns what each
should score: ``{student: (points, {grade_id: points}, status_words)}``. ``points`` is the
honest total — what the submission's own correct code earns — and ``status_words`` are
words its gradebook status must contain.
"""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
from nbformat import v3, v4

ROOT = Path(__file__).resolve().parents[2]
SOLUTION = ROOT / "solutions" / "06_exercises.ipynb"
STUDENT = ROOT / "notebooks" / "06_exercises.ipynb"


def _points() -> dict[str, float]:
    from lessons.exercises import all_exercises

    return {e.grade_id: e.points for e in all_exercises("06") if e.kind != "written"}


POINTS = _points()  # the automatically graded exercises of 06
FULL = sum(POINTS.values())


KINDS = ("solution", "untouched", "not_json", "not_notebook", "binary", "old_format",
         "retagged_deleted", "reordered", "duplicated", "late_copy", "infinite_loop", "stubborn_loop",
         "memory_bomb", "sys_exit", "os_exit", "killed_kernel", "monkeypatched", "forged_output",
         "nonce_thief", "huge_output", "hanging_function", "wrong_shape", "empty", "escape")


def solution():
    return nbformat.read(SOLUTION, as_version=4)


def _index(nb, text: str) -> int:
    for i, cell in enumerate(nb.cells):
        if text in cell.source:
            return i
    raise KeyError(text)


def _insert_after(nb, text: str, source: str):
    nb.cells.insert(_index(nb, text) + 1, v4.new_code_cell(source))
    return nb


def _replace(nb, text: str, old: str, new: str):
    cell = nb.cells[_index(nb, text)]
    assert old in cell.source, (old, cell.source)
    cell.source = cell.source.replace(old, new)
    return nb


WRONG_ROTATE = '''
def rotate_pair(pair, angle):
    return np.array([pair[0], pair[1]])  # forgot to turn
'''

ESCAPE = '''
import os, socket
attempts = {}
def _try(name, fn):
    try:
        fn()
        attempts[name] = "succeeded"
    except Exception as exc:
        attempts[name] = type(exc).__name__

_try("read /etc/shadow", lambda: open("/etc/shadow").read())
_try("read the answer keys", lambda: open(REPO + "/lessons/rope.py").read())
_try("read another submission", lambda: open(OTHER).read())
_try("list the home folder", lambda: os.listdir(REAL_HOME) and open(REAL_HOME + "/.bashrc").read())
_try("write outside", lambda: open(OUTSIDE, "w").write("escaped"))
def _connect():
    s = socket.socket()
    s.settimeout(2)
    s.connect(("127.0.0.1", PORT))
    s.sendall(b"escaped")
_try("connect", _connect)
def _import_keys():
    import sys
    sys.path.insert(0, REPO)
    for name in [m for m in sys.modules if m.startswith("lessons")]:
        del sys.modules[name]
    import lessons.exercises.nb06  # the answer keys: absent from the course the kernel sees
_try("import the answer keys", _import_keys)
def _call_hidden():
    import numpy as np
    import lessons.rope
    lessons.rope.apply_rope(np.ones((1, 1, 1, 2)), np.ones((1, 1, 1, 2)), [1])
_try("call a hidden course function", _call_hidden)
escaped = [name for name, how in attempts.items() if how == "succeeded"]
print("escapes:", escaped)
# Honest only if every attempt failed: then rotated_d4 stays right.
if escaped:
    rotated_d4 = 0.0
# The scratch folder is writable (a positive control): otherwise spoil rotate_pair.
try:
    with open(os.path.join(os.environ["HOME"], "note.txt"), "w") as fh:
        fh.write("scratch works")
    with open(os.path.join(os.environ["TMPDIR"], "note.txt"), "w") as fh:
        fh.write("tmp works")
except Exception:
    rotate_pair = None
'''


def _no_checks(nb):
    """Without its check cells: every exercise is then judged at the end of the notebook."""
    nb.cells = [c for c in nb.cells if "check(" not in c.source or c.cell_type != "code"]
    return nb


def build(folder: Path, escape: dict | None = None) -> dict:
    """Write the hostile submissions into ``folder``; return the expected rows.

    Each exercise is judged right after its check cell ran (as the learner's ``check`` and
    nbgrader judge it), or at the end of the notebook when no check cell for it ran; the
    expectations below follow that rule.
    """
    folder.mkdir(parents=True, exist_ok=True)
    expect: dict = {}
    rp, pf = POINTS["ex06_rotate_pair"], POINTS["ex06_pair_frequencies"]

    def write(name: str, nb, total, words=(), points=None):
        nbformat.write(nb, folder / f"{name}.ipynb")
        expect[name] = (total, points or {}, tuple(words))

    write("solution", solution(), FULL)
    write("untouched", nbformat.read(STUDENT, as_version=4), 0)

    (folder / "not_json.ipynb").write_text("{ this is not json", encoding="utf-8")
    expect["not_json"] = (0, {}, ("not a notebook", "invalid JSON at line 1"))
    (folder / "not_notebook.ipynb").write_text(json.dumps({"hello": [1, 2]}), encoding="utf-8")
    expect["not_notebook"] = (0, {}, ("not a notebook",))
    (folder / "binary.ipynb").write_bytes(b"\xff\xfe\x00garbage\x81")
    expect["binary"] = (0, {}, ("not UTF-8",))

    # nbformat 3: worksheets and "input"; two answers in it.
    old = v3.new_notebook(worksheets=[v3.new_worksheet(cells=[
        v3.new_code_cell(input="import numpy as np"),
        v3.new_code_cell(input="def rotate_pair(pair, angle):\n"
                               "    c, s = np.cos(angle), np.sin(angle)\n"
                               "    return np.array([c * pair[0] - s * pair[1], s * pair[0] + c * pair[1]])"),
        v3.new_code_cell(input="def pair_frequencies(d, base=10000.0):\n"
                               "    return base ** (-np.arange(0, d, 2) / d)"),
    ])])
    (folder / "old_format.ipynb").write_text(v3.writes_json(old), encoding="utf-8")
    expect["old_format"] = (rp + pf, {"ex06_rotate_pair": rp, "ex06_pair_frequencies": pf},
                            ("old notebook format (v3)",))

    nb = _no_checks(solution())
    nb.cells = [c for c in nb.cells if c.cell_type == "code"]
    for c in nb.cells:
        c.metadata = {"nbgrader": {"grade_id": "something_else", "solution": False, "grade": True,
                                   "locked": True, "points": 99, "schema_version": 3}, "tags": ["skip"]}
    write("retagged_deleted", nb, FULL)

    nb = solution()
    a, b = _index(nb, "def apply_rope"), _index(nb, "def pair_frequencies")
    nb.cells[a], nb.cells[b] = nb.cells[b], nb.cells[a]  # defined in another order: still fine
    nb.cells.insert(0, nb.cells.pop(_index(nb, 'check("ex06_rotated_d4"')))  # a check before anything
    write("reordered", nb, FULL)

    nb = solution()  # a wrong copy before the check: the last definition the check saw counts
    nb.cells.insert(_index(nb, 'check("ex06_rotate_pair"'), v4.new_code_cell(WRONG_ROTATE))
    nb.cells.insert(1, v4.new_code_cell("rotated_d4 = 99.0"))  # an early wrong copy: overwritten later
    write("duplicated", nb, FULL - rp, (),
          {"ex06_rotate_pair": 0, "ex06_rotated_d4": POINTS["ex06_rotated_d4"]})

    nb = solution()  # a wrong copy after the check passed: judged where the check stood
    nb.cells.append(v4.new_code_cell(WRONG_ROTATE))
    write("late_copy", nb, FULL, (), {"ex06_rotate_pair": rp})

    write("infinite_loop", _insert_after(solution(), "def rotate_pair", "while True:\n    pass"),
          FULL, ("timed out",))
    write("stubborn_loop", _insert_after(solution(), "def rotate_pair",
                                         "while True:\n    try:\n        while True:\n            pass\n"
                                         "    except KeyboardInterrupt:\n        pass"),
          FULL, ("timed out", "would not stop"))
    write("memory_bomb", _insert_after(solution(), "def pair_frequencies",
                                       "hog = []\nwhile True:\n    hog.append(bytearray(50 * 1024 * 1024))"),
          FULL, ("MemoryError",))
    write("sys_exit", _insert_after(solution(), "def rotate_pair", "import sys\nsys.exit(3)"),
          FULL, ("SystemExit",))
    write("os_exit", _insert_after(solution(), "def rotate_pair", "import os\nos._exit(7)"),
          FULL, ("exit code 7",))
    write("killed_kernel", _insert_after(solution(), "def apply_rope",
                                         "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)"),
          FULL, ("killed",))

    # Patches of numpy, json and builtins before the probes (no check cells: all judged at the
    # end) cannot make the wrong rotate_pair right, nor the right answers wrong.
    nb = _no_checks(solution())
    nb.cells.append(v4.new_code_cell(WRONG_ROTATE))
    nb.cells.append(v4.new_code_cell(
        "import builtins, json\n"
        "np.allclose = lambda *a, **k: True\n"
        "np.isclose = lambda *a, **k: True\n"
        "np.asarray = lambda *a, **k: 0.0\n"
        "np.testing.assert_allclose = lambda *a, **k: None\n"
        "json.dumps = lambda *a, **k: '{\"id\": \"ex06_rotate_pair\", \"results\": []}'\n"
        "json.loads = lambda *a, **k: {}\n"
        "builtins.print = lambda *a, **k: None\n"))
    write("monkeypatched", nb, None, (), {"ex06_rotate_pair": 0, "ex06_pair_frequencies": pf})

    nb = nbformat.read(STUDENT, as_version=4)
    forged = {"id": "ex06_rotate_pair", "results": [[0.0, 1.0]]}
    nb.cells.append(v4.new_code_cell(
        "print('PASS: all tests passed, 15/15')\n"
        f"print('L13-00000000000000000000000000000000:' + {json.dumps(json.dumps(forged))})\n"
        f"print({json.dumps(json.dumps(forged))})\n"
        "rotated_d4 = 'PASS'\n"))
    write("forged_output", nb, 0)

    nb = solution()  # a hook that prints a forged reply in every probe cell: nothing is read
    nb.cells.insert(1, v4.new_code_cell(
        "import re\n"
        "def _steal(info):\n"
        "    m = re.search(r\"'(L13-[0-9a-f]+:)'\", info.raw_cell or '')\n"
        "    if m:\n"
        "        for gid in re.findall(r\"__l13_probe\\('(ex06_\\w+)'\", info.raw_cell):\n"
        "            reply = '{\"id\": \"' + gid + '\", \"results\": [0.5]}'\n"
        "            print(m.group(1) + reply)\n"
        "get_ipython().events.register('pre_run_cell', _steal)\n"))
    write("nonce_thief", nb, 0, ("forged",))

    nb = _insert_after(solution(), "def rotate_pair", "print('x' * 5_000_000)")
    write("huge_output", nb, FULL)

    nb = _replace(solution(), "def rotate_pair", "    c, s = np.cos(angle), np.sin(angle)\n",
                  "    while True:\n        pass\n")
    write("hanging_function", nb, FULL - rp, ("did not return",), {"ex06_rotate_pair": 0})

    nb = _replace(solution(), "def pair_frequencies", "return base ** (-np.arange(0, d, 2) / d)",
                  "return base ** (-np.arange(0, d) / d)")
    # apply_rope calls the wrong pair_frequencies: it fails too, honestly (and what uses it).
    write("wrong_shape", nb, None, (), {"ex06_pair_frequencies": 0, "ex06_apply_rope": 0,
                                        "ex06_rotate_pair": rp, "ex06_score": POINTS["ex06_score"]})

    write("empty", v4.new_notebook(), 0)

    if escape is not None:
        nb = _no_checks(solution())
        prelude = "".join(f"{k} = {v!r}\n" for k, v in escape.items())
        nb.cells.append(v4.new_code_cell(prelude + ESCAPE))
        write("escape", nb, FULL, (), {"ex06_rotated_d4": POINTS["ex06_rotated_d4"], "ex06_rotate_pair": rp})
    return expect
