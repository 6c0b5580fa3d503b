"""Settings for every pytest run of the project (tests and nbval alike).

Each run gets a fresh, empty results cache (:mod:`lessons.results_cache`): the first test or
notebook that needs notebook 10's training does it, every later one in the same run reads
that training. No run ever reads an entry an earlier run wrote, so nbval always checks the
stored outputs against numbers this run computed. The kernels nbval starts inherit the
variable from this process.

Each run also compiles the ``lessons`` package to bytecode once, before any kernel starts.
Python does that by itself on a first import, unless ``PYTHONDONTWRITEBYTECODE`` is set (as on
some CI machines): then each of the suite's 30 kernels would compile the same modules again.
"""

from __future__ import annotations

import compileall
import os
import shutil
import tempfile
from pathlib import Path

import lessons
from lessons.results_cache import ENV_VAR

_created: list[str] = []


def pytest_configure(config):
    if hasattr(config, "workerinput"):  # a pytest-xdist worker shares its controller's folder
        return
    folder = tempfile.mkdtemp(prefix="lessons-results-")
    _created.append(folder)
    os.environ[ENV_VAR] = folder
    compile_package()


def compile_package(folder: Path = Path(lessons.__file__).parent) -> bool:
    """Write (or refresh) the bytecode of every module under ``folder`` (the ``lessons`` package).

    True if all of it compiled. A folder that cannot be written (a read-only checkout) is no
    error: the kernels then compile as they import, as they would without this step.
    """
    try:
        return bool(compileall.compile_dir(folder, quiet=2))
    except OSError:
        return False


def pytest_unconfigure(config):
    while _created:
        shutil.rmtree(_created.pop(), ignore_errors=True)
