"""The results cache of long experiments (lessons.results_cache) and notebook 10's use of it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from lessons import results_cache, tiny_model
from lessons.results_cache import ENV_VAR

# A sweep small enough to train in a fraction of a second, with the real code path.
SMALL = replace(tiny_model.Config(method="rope"), vocab=6, width=6, train_length=8, steps=12, batch=4)
SEEDS = (0, 3)
LENGTHS = (8, 16)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv(ENV_VAR, str(folder))
    tiny_model.sweep.cache_clear()
    yield folder
    tiny_model.sweep.cache_clear()


def same_sweep(a: tiny_model.SweepResult, b: tiny_model.SweepResult) -> None:
    assert (a.config, a.seeds, a.lengths) == (b.config, b.seeds, b.lengths)
    np.testing.assert_array_equal(a.accuracies, b.accuracies)
    for ra, rb in zip(a.runs, b.runs, strict=True):
        assert ra.config == rb.config and ra.tokens_seen == rb.tokens_seen
        np.testing.assert_array_equal(ra.losses, rb.losses)
        assert ra.params.keys() == rb.params.keys()
        for name in ra.params:
            np.testing.assert_array_equal(ra.params[name], rb.params[name])


def test_a_stored_sweep_is_the_computed_one_array_for_array(cache):
    computed = tiny_model._compute_sweep(SMALL, SEEDS, LENGTHS)
    first = tiny_model.sweep(SMALL, SEEDS, LENGTHS)
    assert len(list(cache.glob("*.npz"))) == 1
    same_sweep(first, computed)
    tiny_model.sweep.cache_clear()  # a new process: only the disk remains
    second = tiny_model.sweep(SMALL, SEEDS, LENGTHS)
    same_sweep(second, computed)
    assert second.runs[1].config.seed == 3


def test_the_cache_is_read_not_recomputed(cache, monkeypatch):
    tiny_model.sweep(SMALL, SEEDS, LENGTHS)
    tiny_model.sweep.cache_clear()

    def refuse(*args):
        raise AssertionError("trained again although the cache holds the sweep")

    monkeypatch.setattr(tiny_model, "_compute_sweep", refuse)
    assert tiny_model.sweep(SMALL, SEEDS, LENGTHS).accuracies.shape == (2, 2)


def test_other_arguments_are_other_entries(cache):
    a = tiny_model.sweep(SMALL, SEEDS, LENGTHS)
    b = tiny_model.sweep(replace(SMALL, lr=0.1), SEEDS, LENGTHS)
    c = tiny_model.sweep(SMALL, (0,), LENGTHS)
    assert len(list(cache.glob("*.npz"))) == 3
    assert not np.array_equal(a.runs[0].losses, b.runs[0].losses)
    np.testing.assert_array_equal(a.runs[0].losses, c.runs[0].losses)


def test_a_damaged_entry_is_computed_again_and_replaced(cache):
    expected = tiny_model.sweep(SMALL, SEEDS, LENGTHS)
    (entry,) = cache.glob("*.npz")
    entry.write_bytes(b"not an npz file")
    tiny_model.sweep.cache_clear()
    same_sweep(tiny_model.sweep(SMALL, SEEDS, LENGTHS), expected)
    tiny_model.sweep.cache_clear()
    assert results_cache.load("tiny_model", repr((SMALL, SEEDS, LENGTHS))) is not None


def test_an_entry_of_another_key_under_the_same_name_is_not_used(cache):
    key = repr((SMALL, SEEDS, LENGTHS))
    path = results_cache.store("tiny_model", key, {"x": np.arange(3)})
    np.savez(path, __key__=np.array("another key"), x=np.arange(3))
    assert results_cache.load("tiny_model", key) is None


def test_off_stores_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv(ENV_VAR, "off")
    monkeypatch.chdir(tmp_path)
    assert results_cache.cache_dir() is None
    assert results_cache.store("tiny_model", "k", {"x": np.zeros(2)}) is None
    assert results_cache.load("tiny_model", "k") is None
    assert list(tmp_path.iterdir()) == []


def test_default_folder_follows_xdg_cache_home(tmp_path, monkeypatch):
    monkeypatch.delenv(ENV_VAR, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert results_cache.cache_dir() == tmp_path / "lessons-rope"


def test_a_folder_that_cannot_be_written_warns_once_and_results_still_come(tmp_path, monkeypatch):
    blocker = tmp_path / "a file"
    blocker.write_text("")
    monkeypatch.setenv(ENV_VAR, str(blocker / "cache"))  # a folder inside a file: never creatable
    monkeypatch.setattr(results_cache, "_warned", set())
    tiny_model.sweep.cache_clear()
    try:
        with pytest.warns(RuntimeWarning, match=r"cannot be written.*LESSONS_CACHE_DIR"):
            result = tiny_model.sweep(SMALL, SEEDS, LENGTHS)
        with warnings.catch_warnings(record=True) as later:
            warnings.simplefilter("always")
            assert results_cache.store("tiny_model", "other", {"x": np.zeros(1)}) is None
        assert later == []  # once per folder
    finally:
        tiny_model.sweep.cache_clear()
    assert result.accuracies.shape == (2, 2)


def test_the_key_name_is_reserved(cache):
    with pytest.raises(ValueError, match="__key__"):
        results_cache.store("tiny_model", "k", {"__key__": np.zeros(1)})


def test_dependencies_follow_relative_and_absolute_imports():
    deps = results_cache.dependencies("tiny_model")
    # tiny_model imports head, which imports rope and rotation; rope imports _checks
    for module in ("tiny_model", "results_cache", "frequencies", "head", "rope", "rotation", "sinusoidal",
                   "attention", "_checks"):
        assert module in deps
    assert "figures" not in deps and "claims" not in deps
    assert "grade.kernel" in results_cache.dependencies("grade.core")


def test_a_change_to_a_dependency_changes_the_fingerprint(tmp_path, monkeypatch):
    """A copy of the package with one line added to frequencies.py (imported by tiny_model
    through head) gets another fingerprint, so no entry of the old code is found."""
    package = tmp_path / "lessons"
    for source in results_cache.PACKAGE_DIR.rglob("*.py"):
        target = package / source.relative_to(results_cache.PACKAGE_DIR)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(source.read_bytes())
    script = textwrap.dedent(
        """
        import sys
        sys.path.insert(0, sys.argv[1])
        from lessons import results_cache
        print(results_cache.fingerprint("tiny_model"))
        """
    )
    env = {**os.environ}

    def fingerprint() -> str:
        out = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True,
                             env=env, check=True)
        return out.stdout.strip()

    before = fingerprint()
    assert before == results_cache.fingerprint("tiny_model")  # same sources, same fingerprint
    with (package / "frequencies.py").open("a") as out:
        out.write("\n# a change\n")
    assert fingerprint() != before


def test_every_pytest_run_starts_with_an_empty_cache_of_its_own():
    folder = Path(os.environ[ENV_VAR])
    assert folder.name.startswith("lessons-results-")
    assert folder != Path.home() / ".cache" / "lessons-rope"
