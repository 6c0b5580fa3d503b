"""Driving a grading run: find the submissions, grade each in its kernel, write the results.

The concerns live one module each: :mod:`.discovery` (which files, which students, which
notebook, shards), :mod:`.loading` (a file's cells), :mod:`.scoring` (the questions and the
one judge's verdicts), :mod:`.records` (records, gradebook, feedback, the manual sheet),
:mod:`.progress` and, here, the run itself. A run killed half way loses at most the
submissions being graded at that moment; a rerun grades only what has no record for the same
file content (sha256) unless ``--regrade``.

A submission's language is its notebook's metadata ``lessons.language`` (the Chinese
edition's notebooks carry ``zh_CN``; anything else is English): its kernel runs with
``LESSONS_LANG`` set to it, and its record and feedback are made inside
:func:`lessons.i18n.use_language`. The points, the columns and the judge are the same.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import secrets
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..exercises import all_exercises
from ..i18n import use_language
from .course import course_cells, course_cells_raising, is_course_cell, question_cells
from .discovery import (  # noqa: F401 - re-exported for callers of the older single module
    NothingToGrade,
    Submission,
    discover,
    notebook_from_ids,
    shard_of,
    student_id,
)
from .hiding import build_course_copy, hidden_for
from .loading import NotANotebook, load_cells, load_notebook, read_submission, valid_text  # noqa: F401
from .progress import Progress
from .records import (  # noqa: F401
    atomic_write,
    build_record,
    feedback_in_its_language,
    feedback_markdown,
    language_of_record,
    load_records,
    read_sheet,
    write_outputs,
    write_record,
)
from .runner import Limits, NoAnswer, RunResult, Slots, Unanswered, run_submission
from .sandbox import Sandbox
from .scoring import Drawn, draw, draw_questions, score, score_written, written_answers  # noqa: F401

GRADING_EVENTS = ("restarts", "total", "internal")


@dataclass
class Options:
    out: Path
    notebook: str | None = None
    jobs: int = 0
    seed: int | None = None
    regrade: bool = False
    limits: Limits = None  # type: ignore[assignment]
    sandbox: Sandbox = None  # type: ignore[assignment]
    shard: tuple[int, int] | None = None  # (K, N): grade only shard K of N, write only records
    reveal: bool = False
    manual: dict | None = None  # merged manual grades (records.read_sheet)


def settings_of(opts: Options) -> dict:
    limits = opts.limits or Limits()
    return {"cell_timeout_s": limits.cell_timeout, "total_timeout_s": limits.total_timeout,
            "memory_limit_mb": limits.memory_bytes >> 20, "max_output_chars": limits.max_output,
            "max_processes": limits.max_processes,
            "sandbox": "bubblewrap" if opts.sandbox is not None and opts.sandbox.bwrap else "none"}


def remove_tree(folder: Path) -> None:
    """Remove ``folder`` whatever a kernel left in it; never raises.

    The course copies are read-only (made writable first), and a run folder may hold a tree
    thousands of levels deep, past Python's recursion limit (``shutil.rmtree`` and
    ``Path.rglob`` recurse per level) and past PATH_MAX: then ``rm -rf`` does it.
    """
    import subprocess

    try:
        for p in folder.rglob("*"):
            if p.is_dir() and not p.is_symlink():
                p.chmod(0o755)
        shutil.rmtree(folder)
        return
    except FileNotFoundError:
        return
    except (OSError, RecursionError):
        pass
    try:
        subprocess.run(["chmod", "-R", "u+rwX", str(folder)], capture_output=True, timeout=600)
        subprocess.run(["rm", "-rf", "--", str(folder)], capture_output=True, timeout=600)
    except (OSError, subprocess.SubprocessError):
        pass


def grade(inputs: list[Path], opts: Options, stream=None) -> dict[str, dict]:
    """Grade every submission (see the module docstring); return the records by student."""
    return asyncio.run(_grade(inputs, opts, stream))


def _choose_seed(out: Path, opts: Options) -> int:
    if opts.seed is not None:
        return opts.seed
    try:
        previous = json.loads((out / "run.json").read_text(encoding="utf-8")).get("seed")
    except (OSError, ValueError, AttributeError):
        previous = None
    if previous is not None and not opts.regrade:
        return int(previous)  # finishing an interrupted run: the same cases for everyone
    return secrets.randbits(32)


def result_record(sub: Submission, sha: str, seed: int, drawn: Drawn | None, run: RunResult | None, *,
                  cells=(), markdown=(), notes=(), error: str | None = None) -> dict:
    """The record of one submission from what its run gave (or why it could not run)."""
    exercises: dict = {}
    if drawn is not None:
        by_id = {q.exercise.grade_id: q for q in drawn.questions}
        answers = written_answers(list(markdown), drawn.written, question_cells(sub.notebook))
        for ex in drawn.exercises:
            gid = ex.grade_id
            if ex.kind == "written":
                exercises[gid] = (score_written(ex, answers.get(gid)) if error is None else
                                  score(by_id.get(gid) or _q(ex), Unanswered(NoAnswer.NOT_A_NOTEBOOK, error)))
            elif run is None:
                exercises[gid] = score(by_id[gid], Unanswered(NoAnswer.NOT_A_NOTEBOOK, error or "not run"))
            else:
                exercises[gid] = score(by_id[gid], run.replies[gid], drawn, run.where.get(gid))
    grading_problems = [error] if error else []
    student_events: list[str] = []
    cell_errors: dict = {}
    course_errors: dict = {}
    course_events: list[str] = []
    if run is not None:
        sources = dict(cells)
        hashes = course_cells(sub.notebook)
        for key, text in run.events.items():
            if key in GRADING_EVENTS:
                grading_problems.append(text)
            elif (isinstance(key, tuple) and key[0] == "cell"
                  and is_course_cell(sources.get(key[1], ""), hashes)):
                course_events.append(text)  # e.g. the course's own slow cell timed out: not the student's
            else:
                student_events.append(text)
        raising = course_cells_raising(sub.notebook)  # tagged raises-exception: raising is what they do
        cell_errors = {n: e for n, e in run.cell_errors.items()
                       if not is_course_cell(sources.get(n, ""), raising)}
        course_errors = {n: e for n, e in cell_errors.items() if is_course_cell(sources.get(n, ""), hashes)}
    record = build_record(
        student=sub.student, file=str(sub.path), sha=sha, notebook=sub.notebook, seed=seed,
        exercises=exercises, grading_problems=grading_problems, notes=list(notes),
        student_events=student_events, cell_errors=cell_errors, course_errors=course_errors,
        timings=run.timings if run is not None else None, seconds=run.seconds if run is not None else 0.0)
    lost = any(e["points"] is not None and e["points"] < e["max"] and e["outcome"] != "MISSING"
               for e in exercises.values())
    record["course_cell_events"] = course_events
    failed = set(course_errors) | {text for text in course_events}
    if failed and lost:
        n = len(failed)
        note = f" ({n} of the course's own cell{'s' if n != 1 else ''} failed or timed out)"
        record["grading"] += note
        record["course_cells_note"] = note  # for the instructor: left out of the student's feedback
    return record


def _q(ex):
    from .probe import Question

    return Question(ex)


async def _grade(inputs: list[Path], opts: Options, stream) -> dict[str, dict]:
    out = opts.out
    out.mkdir(parents=True, exist_ok=True)
    subs = discover(inputs, opts.notebook)
    if opts.shard is not None:
        k, n = opts.shard
        subs = [s for s in subs if shard_of(s.student, n) == k]
    records = load_records(out)
    seed = _choose_seed(out, opts)
    if opts.shard is None:
        atomic_write(out / "run.json", json.dumps({"seed": seed}) + "\n")
    limits = opts.limits or Limits()
    settings = settings_of(opts)
    progress = Progress(len(subs), stream)
    jobs = opts.jobs or os.cpu_count() or 1
    slots = Slots(jobs)
    lock = asyncio.Lock()
    base = Path(tempfile.mkdtemp(prefix="l13g-"))
    counter = iter(range(10**9))
    drawn_cache: dict[str, Drawn] = {}
    copies: dict[str, Path] = {}

    def drawn_for(nb: str) -> Drawn:
        if nb not in drawn_cache:
            drawn_cache[nb] = draw(nb, seed)
        return drawn_cache[nb]

    def course_copy(nb: str) -> Path:
        if nb not in copies:
            copies[nb] = build_course_copy(base / f"course{nb}", hidden_for(all_exercises(nb)))
        return copies[nb]

    async def one(sub: Submission) -> None:
        try:
            record = await record_of(sub)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a fault of the grader's own on this file: still a row, saying so
            # (no sha256: a rerun grades the file again rather than keep the fault)
            why = f"the grader failed on this file ({type(exc).__name__}: {exc})"
            record = result_record(sub, "", seed, None, None, error=why[:300])
            record["language"] = "en"
        if record is None:  # already graded, unchanged
            return
        async with lock:
            try:
                record = valid_record(record)
                write_record(out, record)
                write_feedback(out, record, opts.manual, opts.reveal)
            except Exception as exc:  # the row is kept in memory: the gradebook still has it
                record = {**result_record(sub, record.get("sha256", ""), seed, None, None,
                                          error=f"its record could not be written "
                                                f"({type(exc).__name__}: {exc})"[:300]), "language": "en"}
                record = valid_record(record)
                try:
                    write_record(out, record)
                except Exception:
                    pass
            records[sub.student] = record
            progress.update(record)

    async def record_of(sub: Submission) -> dict | None:
        try:
            data = sub.path.read_bytes()
        except OSError as exc:
            data, read_error = b"", f"could not read the file: {exc.strerror}"
        else:
            read_error = None
        sha = hashlib.sha256(data).hexdigest()
        notes_nb = []
        if sub.notebook is None and not read_error:
            sub.notebook = notebook_from_ids(data)
            if sub.notebook:
                notes_nb.append(f"graded as notebook {sub.notebook} (from its cells' nbgrader ids)")
        old = records.get(sub.student)
        if (old and not opts.regrade and old.get("sha256") == sha and old.get("notebook") == sub.notebook
                and old.get("seed") == seed):
            progress.update(old, skipped=True)
            return None
        drawn = drawn_for(sub.notebook) if sub.notebook else None
        error = read_error or (None if sub.notebook else
                               "cannot tell which notebook this is: pass --notebook NN")
        cells = markdown = notes = ()
        language = "en"
        if error is None or not read_error:
            try:
                loaded = read_submission(data)
            except NotANotebook as exc:
                error = str(exc)
            else:
                cells, markdown, notes, language = loaded.code, loaded.markdown, loaded.notes, loaded.language
        if error is not None:
            with use_language(language):
                record = result_record(sub, sha, seed, drawn, None, error=error)
        else:
            workdir = base / f"s{next(counter)}"
            try:
                run = await run_submission(list(cells), drawn.questions, opts.sandbox, limits, workdir, slots,
                                           python_path=course_copy(sub.notebook), language=language)
            finally:
                remove_tree(workdir)
            with use_language(language):
                record = result_record(sub, sha, seed, drawn, run, cells=cells, markdown=markdown,
                                       notes=notes_nb + list(notes))
        record["language"] = language
        return record

    try:
        await asyncio.gather(*(one(s) for s in subs))
    finally:
        try:
            if opts.shard is None:
                write_outputs(out, records, seed, settings, reveal=opts.reveal, grades=opts.manual)
        finally:
            remove_tree(base)
    return records


def valid_record(value, depth: int = 0):
    """A record with every text valid Unicode (a file name may hold undecodable bytes, which
    Python keeps as lone surrogates): no CSV, JSON or Markdown writer can then fail on it.
    Anything nested deeper than a record ever is becomes short text."""
    if depth > MAX_RECORD_DEPTH:
        return "(nested too deep)"
    if isinstance(value, str):
        return valid_text(value)
    if isinstance(value, dict):
        return {valid_record(k, depth + 1): valid_record(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [valid_record(v, depth + 1) for v in value]
    return value


MAX_RECORD_DEPTH = 20


def write_feedback(out: Path, record: dict, manual: dict | None, reveal: bool) -> None:
    """``feedback/<student>.md`` in the submission's language."""
    from .records import with_manual

    text = feedback_in_its_language(with_manual(record, manual or {}), reveal=reveal)
    atomic_write(out / "feedback" / f"{record['student']}.md", text)


def collect(inputs: list[Path], opts: Options) -> tuple[dict[str, dict], list[str]]:
    """Write gradebook, results and feedback from the records in ``opts.out`` without grading;
    return (records, the students of ``inputs`` that have no record for their file yet)."""
    out = opts.out
    records = load_records(out)
    missing = []
    if inputs:
        for sub in discover(inputs, opts.notebook):
            rec = records.get(sub.student)
            try:
                sha = hashlib.sha256(sub.path.read_bytes()).hexdigest()
            except OSError:
                sha = None
            if rec is None or (sha is not None and rec.get("sha256") != sha):
                missing.append(sub.student)
    seeds = sorted({r["seed"] for r in records.values()})
    seed = seeds[0] if len(seeds) == 1 else seeds
    write_outputs(out, records, seed, settings_of(opts), reveal=opts.reveal, grades=opts.manual)
    return records, missing
