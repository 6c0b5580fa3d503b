"""What the graded kernel may import: the course, minus what would answer the exercises.

While grading notebook NN the sandboxed kernel imports a read-only copy of the ``lessons``
package built here (:func:`build_course_copy`):

* every module of the course as it is, so that the notebook's own cells run as they do for
  the learner and a learner may build on what earlier notebooks taught;
* except the functions that would answer one of NN's exercises (each exercise names them,
  ``Exercise.hides``): their bodies are replaced by ``raise HiddenByGrader(...)`` saying
  that this exercise asks you to write it (the code is not in the copy at all);
* without the answer keys (``lessons/exercises/nb*.py``, replaced by a ``check`` that only
  prints) and without the grader itself (``lessons/grade``).
"""

from __future__ import annotations

import ast
import importlib.util
import shutil
from pathlib import Path

HIDDEN_ERROR = "HiddenByGrader"

STUB_EXERCISES = '''"""lessons.exercises in the grader's sandbox: the grader judges the answers."""


def check(grade_id, answer=None, *args, **kwargs):
    print(f"{grade_id}: checked by the grader")
'''

HIDDEN_CLASS = f'''

class {HIDDEN_ERROR}(Exception):
    """Raised by a course function hidden while an exercise asking for it is graded."""
'''


class HidesError(ValueError):
    pass


def hides_of(exercise) -> tuple[str, ...]:
    """The dotted names an exercise hides: those it names itself (``Exercise.hides``)."""
    return tuple(exercise.hides)



def package_dir() -> Path:
    spec = importlib.util.find_spec("lessons")
    if spec is None or not spec.submodule_search_locations:
        raise HidesError("the lessons package cannot be found")
    return Path(next(iter(spec.submodule_search_locations))).resolve()


def _split(name: str, root: Path) -> tuple[Path, list[str]]:
    """``lessons.rope.apply_rope`` -> (the file of lessons.rope, ["apply_rope"])."""
    parts = name.split(".")
    if parts[0] != "lessons" or len(parts) < 3:
        raise HidesError(f"a hidden name must be lessons.<module>.<function>; got {name!r}")
    for cut in range(len(parts) - 1, 1, -1):
        rel = Path(*parts[1:cut])
        for candidate in (root / rel.with_suffix(".py"), root / rel / "__init__.py"):
            if candidate.is_file():
                return candidate, parts[cut:]
    raise HidesError(f"no module of the course holds {name!r}")


def _hide_in_tree(tree: ast.Module, path: list[str], message: str) -> bool:
    body = tree.body
    for i, part in enumerate(path):
        last = i == len(path) - 1
        found = None
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == part:
                found = node
        if found is None:
            return False
        if last:
            if isinstance(found, ast.ClassDef):
                found.body = [ast.parse(f"def __init__(self, *args, **kwargs):\n    raise "
                                        f"__import__('lessons').{HIDDEN_ERROR}({message!r})").body[0]]
            else:
                doc = ast.get_docstring(found)
                raise_stmt = ast.parse(f"raise __import__('lessons').{HIDDEN_ERROR}({message!r})").body[0]
                found.body = ([ast.Expr(ast.Constant(doc))] if doc else []) + [raise_stmt]
            return True
        if not isinstance(found, ast.ClassDef):
            return False
        body = found.body
    return False


def hidden_message(name: str) -> str:
    short = name.split(".", 1)[1] if name.count(".") > 1 else name
    return (f"{name} is hidden while this exercise is graded: the exercise asks you to write "
            f"{short.rsplit('.', 1)[-1]} yourself")


def build_course_copy(dest: Path, hidden: tuple[str, ...] | list[str], source: Path | None = None) -> Path:
    """Write the sandbox's ``lessons`` into ``dest/lessons`` (see the module docstring); return ``dest``.

    Raises :class:`HidesError` naming a hidden name that does not exist.
    """
    root = source or package_dir()
    target = dest / "lessons"
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(root, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "grade", "exercises"))
    (target / "exercises").mkdir()
    (target / "exercises" / "__init__.py").write_text(STUB_EXERCISES, encoding="utf-8")
    init = target / "__init__.py"
    init.write_text(init.read_text(encoding="utf-8") + HIDDEN_CLASS, encoding="utf-8")
    by_file: dict[Path, list[tuple[str, list[str]]]] = {}
    for name in sorted(set(hidden)):
        file, path = _split(name, root)
        by_file.setdefault(target / file.relative_to(root), []).append((name, path))
    for file, items in by_file.items():
        tree = ast.parse(file.read_text(encoding="utf-8"))
        for name, path in items:
            if not _hide_in_tree(tree, path, hidden_message(name)):
                raise HidesError(f"no function or class {name!r} in the course")
        file.write_text(ast.unparse(tree) + "\n", encoding="utf-8")
    for p in sorted(target.rglob("*"), reverse=True):
        p.chmod(0o555 if p.is_dir() else 0o444)
    return dest


def hidden_for(exercises) -> tuple[str, ...]:
    names: list[str] = []
    for ex in exercises:
        for n in hides_of(ex):
            if n not in names:
                names.append(n)
    return tuple(names)


def check_hides(exercises) -> None:
    """Refuse a hidden name that does not exist, naming the exercise (before any grading)."""
    root = package_dir()
    for ex in exercises:
        for name in hides_of(ex):
            try:
                file, path = _split(name, root)
            except HidesError as exc:
                raise HidesError(f"{ex.grade_id}: {exc}") from None
            if not _hide_in_tree(ast.parse(file.read_text(encoding="utf-8")), path, ""):
                raise HidesError(f"{ex.grade_id}: no function or class {name!r} in the course")
