"""The suite compiles the lessons package once (root conftest.py), for every kernel to read."""

from __future__ import annotations

import importlib.util
import struct
from pathlib import Path

import lessons

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = Path(lessons.__file__).resolve().parent


def _root_conftest(pytestconfig):
    plugin = pytestconfig.pluginmanager.get_plugin(str(ROOT / "conftest.py"))
    assert plugin is not None, "the root conftest.py is not loaded"
    return plugin


def _fresh(source: Path) -> bool:
    """Is there bytecode for ``source`` that Python would use (its header names the source's mtime)?"""
    cached = Path(importlib.util.cache_from_source(str(source)))
    if not cached.is_file():
        return False
    header = cached.read_bytes()[:12]
    mtime = int(source.stat().st_mtime) & 0xFFFF_FFFF
    return header == struct.pack("<4sLL", importlib.util.MAGIC_NUMBER, 0, mtime)


def test_every_module_of_lessons_has_current_bytecode_before_the_kernels_start():
    sources = sorted(PACKAGE.rglob("*.py"))
    assert len(sources) > 30
    stale = [str(p.relative_to(ROOT)) for p in sources if not _fresh(p)]
    assert stale == []


def test_compile_package_compiles_and_survives_a_folder_it_cannot_write(pytestconfig, tmp_path, monkeypatch):
    compile_package = _root_conftest(pytestconfig).compile_package
    folder = tmp_path / "pkg"
    folder.mkdir()
    (folder / "a.py").write_text("X = 1\n")
    assert compile_package(folder) is True
    assert _fresh(folder / "a.py")

    # A read-only checkout: writing the bytecode fails with PermissionError (simulated here,
    # as the suite may run as root, whom permission bits do not stop).
    import py_compile

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(folder / "__pycache__"))

    (folder / "b.py").write_text("Y = 2\n")
    monkeypatch.setattr(py_compile, "compile", refuse)
    assert compile_package(folder) is False


def test_compile_package_reports_a_module_that_does_not_compile(pytestconfig, tmp_path):
    compile_package = _root_conftest(pytestconfig).compile_package
    (tmp_path / "broken.py").write_text("def f(:\n")
    assert compile_package(tmp_path) is False
