"""A disk cache for the course's long experiments: train once, reuse the arrays.

Notebook 10 trains 30 small models (:func:`lessons.tiny_model.sweep`), a few seconds of
numpy. The same runs are asked for by the notebook, its solution, their Chinese twins and the
claims of ``python -m lessons.l13``, each in its own process; without a cache every one of
them trains again. With it the first trains and stores the results, and the others read them.
The slower measurements of the trained runs (the gradient check, the attention share past
the trained distances, the per-position answers: :func:`lessons.tiny_model.correct` and its
neighbours) are kept the same way.

What makes an entry valid: its key holds the experiment's arguments and a *fingerprint* of
the code that computes it — the source of the module and of every module of the ``lessons``
package it imports, directly or not, plus numpy's version. Change a line of
``tiny_model.py`` (or of ``frequencies.py``, which it imports) and every entry it made is
simply never found again: a cached result is always what the current code computes.

Where it lives (the environment variable ``LESSONS_CACHE_DIR``):

* unset: ``$XDG_CACHE_HOME/lessons-rope`` (``~/.cache/lessons-rope`` by default);
* a folder: that folder (the test suite gives every run a fresh one, so each run trains
  once and every notebook of the run checks the numbers of that training);
* ``off``: no cache; every process trains.

A cache that cannot be read or written never stops a notebook: an unreadable entry is
computed again (and replaced), a folder that cannot be written is reported once as a warning.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import hashlib
import os
import tempfile
import warnings
from pathlib import Path

import numpy as np

ENV_VAR = "LESSONS_CACHE_DIR"
OFF = "off"
PACKAGE_DIR = Path(__file__).resolve().parent


def cache_dir() -> Path | None:
    """The cache folder, or None when ``LESSONS_CACHE_DIR=off``."""
    value = os.environ.get(ENV_VAR, "").strip()
    if value.lower() == OFF:
        return None
    if value:
        return Path(value).expanduser()
    base = os.environ.get("XDG_CACHE_HOME", "").strip() or Path.home() / ".cache"
    return Path(base) / "lessons-rope"


@contextlib.contextmanager
def turned_off():
    """Within the block, ``LESSONS_CACHE_DIR=off`` (nothing read, nothing stored); the variable
    is restored afterwards, set or unset as it was."""
    before = os.environ.get(ENV_VAR)
    os.environ[ENV_VAR] = OFF
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(ENV_VAR, None)
        else:
            os.environ[ENV_VAR] = before


def _module_file(name: str) -> Path:
    """The source file of ``lessons.<name>`` (a dotted name inside the package)."""
    path = PACKAGE_DIR.joinpath(*name.split("."))
    if path.is_dir():
        return path / "__init__.py"
    return path.with_suffix(".py")


def _package_imports(name: str) -> set[str]:
    """The modules of the package that ``lessons.<name>`` imports (relative or absolute)."""
    source = _module_file(name)
    tree = ast.parse(source.read_text(encoding="utf-8"), filename=str(source))
    here = name.split(".")[:-1] if source.name != "__init__.py" else name.split(".")
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:  # from .x import y, from .. import z
                parts = here[: len(here) - (node.level - 1)] + (node.module.split(".") if node.module else [])
            elif node.module and (node.module == "lessons" or node.module.startswith("lessons.")):
                parts = node.module.split(".")[1:]
            else:
                continue
            if parts:
                found.add(".".join(parts))
            found.update(".".join([*parts, alias.name]) for alias in node.names)  # from . import rope
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
            found.update(name.split(".", 1)[1] for name in names if name.startswith("lessons."))
    return {m for m in found if _module_file(m).is_file()}


def dependencies(name: str) -> list[str]:
    """``lessons.<name>`` and every module of the package it imports, directly or not, sorted."""
    seen: set[str] = set()
    todo = [name]
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        todo.extend(_package_imports(module) - seen)
    return sorted(seen)


@functools.cache
def fingerprint(name: str) -> str:
    """A hash of the source of ``lessons.<name>`` and of its dependencies, and numpy's version."""
    digest = hashlib.sha256(f"numpy {np.__version__}\n".encode())
    for module in dependencies(name):
        digest.update(f"{module}\n".encode())
        digest.update(_module_file(module).read_bytes())
    return digest.hexdigest()


def entry_path(module: str, key: str) -> Path | None:
    """Where the entry of ``key`` computed by ``lessons.<module>`` lives (None: cache off)."""
    folder = cache_dir()
    if folder is None:
        return None
    digest = hashlib.sha256(f"{fingerprint(module)}\n{key}".encode()).hexdigest()
    return folder / f"{module.replace('.', '-')}-{digest[:32]}.npz"


def load(module: str, key: str) -> dict[str, np.ndarray] | None:
    """The arrays stored for ``key`` by the current code of ``lessons.<module>``, or None."""
    path = entry_path(module, key)
    if path is None or not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as data:
            if str(data["__key__"]) != key:  # a hash collision, or a file put there by hand
                return None
            return {name: data[name] for name in data.files if name != "__key__"}
    except Exception:  # noqa: BLE001 - a damaged entry is computed again, whatever the damage
        return None


_warned: set[str] = set()


def store(module: str, key: str, arrays: dict[str, np.ndarray]) -> Path | None:
    """Store ``arrays`` for ``key``; return the file, or None (cache off or not writable).

    The file is written under a temporary name and then renamed, so two processes storing the
    same entry at once leave one whole file, never a mixture.
    """
    path = entry_path(module, key)
    if path is None:
        return None
    if "__key__" in arrays:
        raise ValueError("arrays must not use the name '__key__' (the cache stores the key under it)")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        try:
            with os.fdopen(handle, "wb") as out:
                np.savez(out, __key__=np.array(key), **arrays)
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
    except OSError as error:
        folder = str(path.parent)
        if folder not in _warned:
            _warned.add(folder)
            warnings.warn(
                f"the results cache {folder} cannot be written ({error.strerror or error}); "
                f"results are computed anew each time. Set {ENV_VAR} to a writable folder, "
                f"or to '{OFF}'.",
                RuntimeWarning,
                stacklevel=2,
            )
        return None
    return path
