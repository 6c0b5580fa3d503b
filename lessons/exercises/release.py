"""``python -m lessons.exercises.release``: write the student notebooks from the solutions (``06``).

One source of truth: ``solutions/NN_*.ipynb`` holds the solved exercises; every region
between ``### BEGIN SOLUTION`` and ``### END SOLUTION`` (the markers nbgrader uses) is
replaced by a stub, and the result is written to ``notebooks/NN_*.ipynb`` and executed
from a fresh kernel so that its committed outputs are current::

    python -m lessons.exercises.release            # every solutions/NN_*.ipynb with a region
    python -m lessons.exercises.release solutions/06_exercises.ipynb
    python -m lessons.exercises.release --check    # exit 1 if a committed student notebook is stale

The stub of a region:

* in a code cell, inside a function body (the BEGIN line is indented):
  ``# YOUR CODE HERE`` and ``raise NotImplementedError()`` at that indentation;
* in a code cell at the top level, for a value exercise (the cell's
  ``metadata.nbgrader.grade_id`` names one): ``<name> = None  # YOUR CODE HERE``;
* otherwise in a code cell: ``# YOUR CODE HERE`` and ``raise NotImplementedError()``;
* in a markdown cell: ``YOUR ANSWER HERE``.

The cell layout of an exercise (see ``solutions/06_exercises.ipynb``):

* the answer cell, ``metadata.nbgrader = {"grade_id": "ex06_rotate_pair", "solution": true,
  "grade": false, "locked": false, "task": false, "schema_version": 3}`` (:func:`answer_metadata`);
* below it the locked check cell ``check("ex06_rotate_pair", rotate_pair)`` with
  ``{"grade_id": "ex06_rotate_pair_check", "solution": false, "grade": true, "locked": true,
  "points": 2, "task": false, "schema_version": 3}`` (:func:`check_metadata`) — nbgrader's
  autograded-answer / autograder-test pair. Outputs are cleared and nbgrader metadata kept.

A written question (:func:`lessons.exercises.written_question`, graded by a person) is one
markdown cell, nbgrader's manually graded answer: ``{"grade_id": "ex06_why_not_v",
"solution": true, "grade": true, "locked": false, "task": false, "points": 1,
"schema_version": 3}`` (:func:`written_metadata`). Its model answer sits between the markers
and becomes ``YOUR ANSWER HERE``; the question itself is in the markdown cell above.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
BEGIN = "### BEGIN SOLUTION"
END = "### END SOLUTION"
_REGION = re.compile(
    r"^(?P<indent>[ \t]*)### BEGIN SOLUTION[^\n]*\n(?P<body>.*?)^[ \t]*### END SOLUTION[^\n]*(?:\n|$)",
    re.MULTILINE | re.DOTALL,
)


def answer_metadata(grade_id: str) -> dict:
    """nbgrader schema 3 metadata of an autograded answer cell."""
    return {
        "grade": False,
        "grade_id": grade_id,
        "locked": False,
        "schema_version": 3,
        "solution": True,
        "task": False,
    }


def check_metadata(grade_id: str, points: float) -> dict:
    """nbgrader schema 3 metadata of the locked check (autograder test) cell of ``grade_id``."""
    return {
        "grade": True,
        "grade_id": f"{grade_id}_check",
        "locked": True,
        "points": points,
        "schema_version": 3,
        "solution": False,
        "task": False,
    }


def written_metadata(grade_id: str, points: float) -> dict:
    """nbgrader schema 3 metadata of a manually graded (written) answer cell."""
    return {
        "grade": True,
        "grade_id": grade_id,
        "locked": False,
        "points": points,
        "schema_version": 3,
        "solution": True,
        "task": False,
    }


def has_solution(source: str) -> bool:
    return BEGIN in source


def stub_source(source: str, cell_type: str = "code", value_name: str | None = None) -> str:
    """``source`` with every solution region replaced by its stub."""
    if source.count(BEGIN) != source.count(END):
        raise ValueError(f"unbalanced solution markers ({BEGIN!r} / {END!r}) in:\n{source}")

    def replace(match: re.Match) -> str:
        indent = match.group("indent")
        if cell_type == "markdown":
            return f"{indent}YOUR ANSWER HERE\n"
        if not indent and value_name is not None:
            return f"{value_name} = None  # YOUR CODE HERE\n"
        return f"{indent}# YOUR CODE HERE\n{indent}raise NotImplementedError()\n"

    out, n = _REGION.subn(replace, source)
    if n != source.count(BEGIN):
        raise ValueError(f"a {BEGIN!r} line without its {END!r} line in:\n{source}")
    return out.rstrip("\n")


def student_notebook(solution):
    """The student version of a solution notebook (an nbformat node), not yet executed."""
    import copy

    from . import get

    nb = copy.deepcopy(solution)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
            cell.metadata.pop("execution", None)
        if cell.cell_type not in ("code", "markdown") or not has_solution(cell.source):
            continue
        value_name = None
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id:
            try:
                ex = get(grade_id)
            except KeyError:
                ex = None
            if ex is not None and ex.kind == "value":
                value_name = ex.name
            if ex is not None and ex.kind == "written":
                if cell.cell_type != "markdown" or dict(cell.metadata["nbgrader"]) != written_metadata(
                    ex.grade_id, ex.points
                ):
                    raise ValueError(
                        f"{grade_id}: a written answer is a markdown cell with metadata "
                        f"{written_metadata(ex.grade_id, ex.points)}"
                    )
        cell.source = stub_source(cell.source, cell.cell_type, value_name)
    return nb


def solution_notebooks() -> list[Path]:
    return sorted(
        p for p in (ROOT / "solutions").glob("[0-9][0-9]_*.ipynb") if BEGIN in p.read_text(encoding="utf-8")
    )


def release(solution_path: Path, out_dir: Path, execute: bool = True) -> Path:
    """Write (and execute) the student version of ``solution_path`` into ``out_dir``."""
    import nbformat

    from ..run_notebooks import execute_notebook, stored

    nb = nbformat.read(solution_path, as_version=4)
    student = student_notebook(nb)
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / solution_path.name
    previous = stored(target)
    nbformat.validate(student)
    nbformat.write(student, target)
    if execute:
        execute_notebook(target, previous=previous)
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m lessons.exercises.release",
        description="Write notebooks/NN_*.ipynb (student versions, executed) from solutions/NN_*.ipynb.",
    )
    parser.add_argument("solutions", nargs="*", type=Path, help="solution notebooks (default: all)")
    parser.add_argument(
        "--check", action="store_true", help="do not write; exit 1 if a committed student notebook differs"
    )
    args = parser.parse_args(argv)
    paths = [p.resolve() for p in args.solutions] or solution_notebooks()
    if not paths:
        print("no solution notebook with a '### BEGIN SOLUTION' region", file=sys.stderr)
        return 2
    stale = []
    for path in paths:
        if args.check:
            with tempfile.TemporaryDirectory() as tmp:
                fresh = release(path, Path(tmp))
                problems = differences(ROOT / "notebooks" / path.name, fresh)
            if problems:
                stale.append(path.name)
                print(f"stale: notebooks/{path.name}")
                for p in problems[:10]:
                    print(f"  {p}")
            else:
                print(f"up to date: notebooks/{path.name}")
        else:
            target = release(path, ROOT / "notebooks")
            print(f"wrote {target.relative_to(ROOT)}")
    if not args.check:
        refresh_course_cells()
    if stale:
        print("run: python -m lessons.exercises.release", file=sys.stderr)
        return 1
    return 0


def refresh_course_cells() -> None:
    """The grader ships the released notebooks' own cells (``lessons/grade/course_cells.json``):
    rewrite it from ``notebooks/`` whenever a student notebook is written."""
    from ..grade import course

    course.main(["--notebooks", str(ROOT / "notebooks")])


def _sanitize(text: str) -> str:
    text = re.sub(r"at 0x[0-9a-fA-F]+", "at 0xADDRESS", text)
    return re.sub(r"/tmp/ipykernel_\d+/\d+\.py", "IPYKERNEL_CELL", text)


def _output_text(output) -> str:
    if output.get("output_type") == "stream":
        return f"{output.get('name')}: {output.get('text', '')}"
    if output.get("output_type") == "error":
        return f"error: {output.get('ename')}: {output.get('evalue')}"
    data = output.get("data", {})
    return "data: " + str({k: v for k, v in data.items() if not k.startswith("image/")})


def _joined_streams(outputs) -> list:
    """Outputs with consecutive pieces of one stream joined: a kernel under load may split
    one print's text into several messages (nbval joins them too)."""
    joined = []
    for out in outputs:
        prev = joined[-1] if joined else None
        if (
            out.get("output_type") == "stream"
            and prev is not None
            and prev.get("output_type") == "stream"
            and prev.get("name") == out.get("name")
        ):
            joined[-1] = {**prev, "text": prev.get("text", "") + out.get("text", "")}
        else:
            joined.append(out)
    return joined


def differences(committed: Path, fresh: Path) -> list[str]:
    """Where the committed student notebook differs from a freshly generated one (empty: none).

    Sources, cell types and cell metadata must be equal; outputs are compared as text after
    sanitising memory addresses and kernel temp paths (images are not compared), the text of
    a cell's outputs joined.
    """
    import nbformat

    if not committed.is_file():
        return [f"{committed.name} is missing"]
    a = nbformat.read(committed, as_version=4)
    b = nbformat.read(fresh, as_version=4)
    problems = []
    if len(a.cells) != len(b.cells):
        problems.append(f"{len(a.cells)} cells committed, {len(b.cells)} generated")
    for i, (x, y) in enumerate(zip(a.cells, b.cells, strict=False), start=1):
        if x.cell_type != y.cell_type:
            problems.append(f"cell {i}: {x.cell_type} committed, {y.cell_type} generated")
        elif x.source != y.source:
            problems.append(f"cell {i}: the source differs")
        elif dict(x.metadata) != dict(y.metadata):
            problems.append(f"cell {i}: the metadata differs")
        elif x.cell_type == "code":
            xo = [_sanitize(_output_text(o)) for o in _joined_streams(x.outputs)]
            yo = [_sanitize(_output_text(o)) for o in _joined_streams(y.outputs)]
            if xo != yo:
                problems.append(f"cell {i}: the outputs differ")
    return problems


if __name__ == "__main__":
    sys.exit(main())
