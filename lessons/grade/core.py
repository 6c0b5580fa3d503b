"""Grading a class: find the submissions, grade each in its kernel, write the results.

Everything the grader writes goes through :func:`atomic_write` (a temporary file in the
same folder, then ``os.replace``), one record per submission in ``<out>/records/`` as
soon as it is graded; ``gradebook.csv``, ``results.json`` and ``feedback/`` are rebuilt
from the records. A run killed half way therefore loses at most the submissions being
graded at that moment, and a rerun grades only what has no record for the same file
content (sha256) unless ``--regrade``.
"""

from __future__ import annotations

import asyncio
import csv
import hashlib
import io
import json
import os
import re
import secrets
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..exercises import Exercise, all_exercises, compare, describe_failure, smallest
from .probe import Question
from .runner import Limits, RunResult, Slots, run_submission
from .sandbox import Sandbox

MAX_FILE_BYTES = 20 * 1024 * 1024
RECORD_VERSION = 1


# ----------------------------------------------------------------------------- discovery
@dataclass
class Submission:
    path: Path
    student: str
    notebook: str | None  # "06", or None when it cannot be told


_NB_NAME = re.compile(r"^(\d\d)_")


def _clean_id(text: str) -> str:
    text = re.sub(r"[^A-Za-z0-9._@-]+", "_", text).strip("._") or "student"
    return text[:80]


def student_id(path: Path, root: Path | None = None) -> str:
    """``alice.ipynb`` -> ``alice``. A file named like a course notebook (``NN_*.ipynb``) takes
    the first folder below the folder given on the command line (``root``), else its own
    folder: ``subs/bob/06_exercises.ipynb`` -> ``bob``, and nbgrader's
    ``submitted/carol/ps1/06_exercises.ipynb`` (``root`` = ``submitted``) -> ``carol``."""
    if _NB_NAME.match(path.name):
        if root is not None:
            parts = path.relative_to(root).parts
            if len(parts) > 1:
                return _clean_id(parts[0])
        if path.parent.name:
            return _clean_id(path.parent.name)
    return _clean_id(path.stem if path.suffix == ".ipynb" else path.name)


def notebook_of(path: Path, forced: str | None, known: list[str]) -> str | None:
    if forced:
        return forced
    for part in (path.name, path.parent.name):
        m = _NB_NAME.match(part)
        if m and m.group(1) in known:
            return m.group(1)
    return known[0] if len(known) == 1 else None


def notebook_from_ids(data: bytes) -> str | None:
    """The notebook whose exercise ids (``exNN_*`` in nbgrader metadata) the file mentions most."""
    known = {e.notebook for e in all_exercises()}
    found = re.findall(rb'"grade_id"\s*:\s*"ex(\d\d)_', data[:MAX_FILE_BYTES])
    counts: dict[str, int] = {}
    for f in found:
        nb = f.decode()
        if nb in known:
            counts[nb] = counts.get(nb, 0) + 1
    return max(counts, key=counts.get) if counts else None


def discover(inputs: list[Path], forced_notebook: str | None = None) -> list[Submission]:
    """Files as given (whatever their name); folders searched for ``*.ipynb``."""
    known = sorted({e.notebook for e in all_exercises()})
    files: list[tuple[Path, Path | None]] = []
    for item in inputs:
        if item.is_dir():
            files += [(p, item) for p in sorted(item.rglob("*.ipynb"))
                      if p.is_file() and ".ipynb_checkpoints" not in p.parts]
        elif item.exists():
            files.append((item, None))
        else:
            raise FileNotFoundError(f"no such file or folder: {item}")
    seen: dict[str, int] = {}
    subs = []
    for f, root in files:
        sid = student_id(f, root)
        seen[sid] = seen.get(sid, 0) + 1
        if seen[sid] > 1:
            sid = f"{sid}-{seen[sid]}"
        subs.append(Submission(f, sid, notebook_of(f, forced_notebook, known)))
    return subs


# ------------------------------------------------------------------------------- loading
class NotANotebook(Exception):
    pass


def load_cells(data: bytes) -> tuple[list[tuple[int, str]], list[str]]:
    """The code cells of a submitted file as (cell number, source), plus notes.

    Cell metadata is ignored on purpose: students can delete, duplicate, reorder or retag
    cells. Raises :class:`NotANotebook` with a reason an instructor can read.
    """
    import nbformat

    notes = []
    if len(data) > MAX_FILE_BYTES:
        raise NotANotebook(f"not graded: the file is {len(data) >> 20} MB (limit {MAX_FILE_BYTES >> 20} MB)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise NotANotebook("not a notebook: the file is not UTF-8 text") from None
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise NotANotebook(f"not a notebook: invalid JSON at line {exc.lineno}") from None
    if not isinstance(raw, dict) or not ("cells" in raw or "worksheets" in raw):
        raise NotANotebook("not a notebook: JSON without notebook cells")
    version = raw.get("nbformat")
    try:
        nb = nbformat.reads(text, as_version=4)
        cells = [(i, c.source) for i, c in enumerate(nb.cells, start=1) if c.cell_type == "code"]
        if isinstance(version, int) and version < 4:
            notes.append(f"old notebook format (v{version}), converted")
    except Exception:
        cells = _loose_cells(raw)
        if cells is None:
            raise NotANotebook("not a notebook: its structure is not nbformat's") from None
        notes.append("the notebook does not validate; its code cells were read as they are")
    return [(n, s) for n, s in cells if isinstance(s, str) and s.strip()], notes


def _loose_cells(raw: dict):
    cells = raw.get("cells")
    if cells is None and isinstance(raw.get("worksheets"), list) and raw["worksheets"]:
        cells = raw["worksheets"][0].get("cells") if isinstance(raw["worksheets"][0], dict) else None
    if not isinstance(cells, list):
        return None
    out = []
    for i, c in enumerate(cells, start=1):
        if not isinstance(c, dict) or c.get("cell_type") != "code":
            continue
        src = c.get("source", c.get("input", ""))
        if isinstance(src, list) and all(isinstance(s, str) for s in src):
            src = "".join(src)
        if isinstance(src, str):
            out.append((i, src))
    return out


# ------------------------------------------------------------------------------- scoring
def draw_questions(notebook: str, seed: int) -> list[Question]:
    """The cases and expected answers of a notebook's exercises for this seed (grader side)."""
    questions = []
    for i, ex in enumerate(all_exercises(notebook)):
        if ex.kind == "value":
            questions.append(Question(ex, None, [ex.expected_value()]))
        else:
            rng = np.random.default_rng([seed, int(notebook), i])
            cases = ex.draw_cases(rng)
            questions.append(Question(ex, cases, [ex.expected_for(c) for c in cases]))
    return questions


def score(q: Question, reply) -> dict:
    """Compare a probe reply with the expected values (in the grader's process)."""
    ex: Exercise = q.exercise
    out = {"title": ex.title, "name": ex.name, "max": ex.points, "points": 0,
           "cases": len(q.expected), "passed": 0}
    if isinstance(reply, str):
        out["result"] = reply
        return out
    failures = []
    missing = 0
    for i, (expected, r) in enumerate(zip(q.expected, reply, strict=True)):
        case = q.cases[i] if q.cases is not None else None
        if r.get("missing"):
            missing += 1
            continue
        if "error" in r:
            failures.append({"input": case, "expected": expected, "given": f"raised {r['error']}",
                             "reason": f"it raised {r['error'].split(':', 1)[0]}"})
            continue
        if "values" not in r:
            failures.append({"input": case, "expected": expected,
                             "given": f"an array of shape {tuple(r['shape'])}",
                             "reason": f"shape {tuple(r['shape'])} given, {_shape(expected)} expected"})
            continue
        reason = compare(expected, r["values"], ex.tolerance)
        if reason is None:
            out["passed"] += 1
        else:
            failures.append({"input": case, "expected": expected, "given": r["values"], "reason": reason})
    if missing == len(q.expected):
        out["result"] = "not answered" if ex.kind == "function" else f"not answered ({ex.name} is not set)"
        return out
    if missing:
        failures.append({"input": None, "expected": "an answer", "given": "NotImplementedError",
                         "reason": "not answered for some inputs"})
    if not failures:
        out["points"] = ex.points
        out["result"] = f"passes ({len(q.expected)} case{'s' if len(q.expected) != 1 else ''})"
        return out
    f = smallest(failures)
    out["result"] = f"fails: {f['reason']}"
    out["counterexample"] = describe_failure(ex, f)
    return out


def _shape(value) -> tuple:
    from ..exercises import shape_of

    return shape_of(value)


def course_cell_sources(notebook: str | None) -> frozenset[str]:
    """The code of the course's own cells (not answer cells) of notebook NN, as released in
    ``notebooks/``; empty where the released notebook is not at hand."""
    if not notebook:
        return frozenset()
    import nbformat

    found = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob(f"{notebook}_*.ipynb"))
    if not found:
        return frozenset()
    try:
        nb = nbformat.read(found[0], as_version=4)
    except Exception:  # a broken course file must not stop grading
        return frozenset()
    return frozenset(
        c.source.strip() for c in nb.cells
        if c.cell_type == "code" and not c.metadata.get("nbgrader", {}).get("solution")
    )


def build_record(sub: Submission, sha: str, seed: int, questions, run: RunResult | None,
                 status_notes: list[str], error: str | None = None, *,
                 cells=(), course_cells: frozenset[str] = frozenset()) -> dict:
    exercises = {}
    for q in questions:
        gid = q.exercise.grade_id
        reply = run.replies.get(gid, "not graded") if run is not None else (error or "not graded")
        exercises[gid] = score(q, reply)
    total = sum(e["points"] for e in exercises.values())
    maximum = sum(q.exercise.points for q in questions)
    events = list(status_notes)
    sources = dict(cells)
    if run is not None:
        unanswered = [q.exercise.name for q in questions
                      if exercises[q.exercise.grade_id]["result"].startswith("not answered")]
        if unanswered and len(unanswered) == len(questions):
            events.append("no exercise answered")
        elif unanswered:
            events.append(f"not answered: {', '.join(unanswered)}")
        events += list(run.events.values())
        by_reason: dict[str, list[str]] = {}
        for q in questions:
            reply = run.replies.get(q.exercise.grade_id)
            if isinstance(reply, str):
                by_reason.setdefault(reply, []).append(q.exercise.name)
        for reason, names in by_reason.items():
            if reason.startswith("could not read"):
                events.append(f"{', '.join(names)}: {reason}")
            elif not any(n in reason for n in names):
                events.append(reason)
            else:
                events.append(reason)
        # Errors in the student's own cells are always listed. The course's own cells (as
        # released, unchanged) that fail do so by design: graded code cannot import the
        # lessons package. They are counted, and named only where points were lost.
        own = {n: e for n, e in run.cell_errors.items() if sources.get(n, "").strip() not in course_cells}
        course = {n: e for n, e in run.cell_errors.items() if n not in own}
        if own:
            listed = ", ".join(f"{n} ({e})" for n, e in sorted(own.items())[:8])
            more = "" if len(own) <= 8 else f" and {len(own) - 8} more"
            events.append(f"errors in cell{'s' if len(own) > 1 else ''} {listed}{more}")
        if course and total < maximum:
            events.append(
                f"{len(course)} of the course's own cells failed (graded code cannot import the "
                "lessons package)"
            )
    if error:
        events.insert(0, error)
    return {
        "version": RECORD_VERSION,
        "student": sub.student,
        "file": str(sub.path),
        "sha256": sha,
        "notebook": sub.notebook,
        "seed": seed,
        "points": {gid: e["points"] for gid, e in exercises.items()},
        "total": total,
        "max": maximum,
        "status": "; ".join(events) if events else "ok",
        "exercises": exercises,
        "cell_errors": {str(n): e for n, e in sorted(run.cell_errors.items())} if run is not None else {},
        "seconds": round(run.seconds, 2) if run is not None else 0.0,
        "graded_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


# ------------------------------------------------------------------------------- writing
def atomic_write(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so that a reader sees the old file or the new, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def load_records(out: Path) -> dict[str, dict]:
    records = {}
    for p in sorted((out / "records").glob("*.json")):
        try:
            rec = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # a damaged record is regraded
        if isinstance(rec, dict) and rec.get("version") == RECORD_VERSION and "student" in rec:
            records[rec["student"]] = rec
    return records


def write_outputs(out: Path, records: dict[str, dict], seed: int, settings: dict) -> None:
    """Rebuild gradebook.csv, results.json and feedback/ from the records."""
    rows = sorted(records.values(), key=lambda r: r["student"])
    columns = []
    for ex in all_exercises():
        if any(ex.grade_id in r["points"] for r in rows):
            columns.append(ex.grade_id)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["student", "notebook", *columns, "total", "max", "status"])
    for r in rows:
        w.writerow([r["student"], r["notebook"] or "",
                    *[_num(r["points"][c]) if c in r["points"] else "" for c in columns],
                    _num(r["total"]), _num(r["max"]), r["status"]])
    atomic_write(out / "gradebook.csv", buf.getvalue())
    results = {"seed": seed, "settings": settings, "submissions": rows}
    atomic_write(out / "results.json", json.dumps(results, indent=1) + "\n")
    for r in rows:
        atomic_write(out / "feedback" / f"{r['student']}.md", feedback_markdown(r))


def _num(x) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def feedback_markdown(r: dict) -> str:
    lines = [f"# Feedback for {r['student']}: notebook {r['notebook'] or '?'}", "",
             f"**{_num(r['total'])} of {_num(r['max'])} points.**", ""]
    if r["status"] != "ok":
        lines += [f"While grading: {r['status']}.", ""]
    if r["exercises"]:
        lines += ["| exercise | points | result |", "|---|---|---|"]
        for e in r["exercises"].values():
            lines.append(f"| {e['title']} | {_num(e['points'])} / {_num(e['max'])} | {e['result']} |")
        lines.append("")
    for e in r["exercises"].values():
        if "counterexample" in e:
            lines += [f"## {e['title']}", "", f"`{e['name']}` {e['result']}. A counterexample:", "", "```"]
            lines += e["counterexample"]
            lines += ["```", ""]
    lines.append(f"Inputs drawn with seed {r['seed']}; graded {r['graded_at']}.")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------ progress
class Progress:
    """A bar on a terminal (stderr a tty), one plain line per submission otherwise."""

    def __init__(self, total: int, stream=None):
        self.total = total
        self.done = 0
        self.stream = stream or sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()

    def update(self, record: dict, skipped: bool = False) -> None:
        self.done += 1
        what = "already graded" if skipped else f"{_num(record['total'])}/{_num(record['max'])}"
        if self.tty:
            width = 30
            filled = int(width * self.done / max(1, self.total))
            bar = "#" * filled + "-" * (width - filled)
            text = f"\r[{bar}] {self.done}/{self.total}  {record['student'][:24]:<24} {what:<16}"
            self.stream.write(text)
            if self.done == self.total:
                self.stream.write("\n")
        else:
            status = "" if record["status"] == "ok" or skipped else f" ({record['status'][:120]})"
            self.stream.write(f"[{self.done}/{self.total}] {record['student']}: {what}{status}\n")
        self.stream.flush()


# ------------------------------------------------------------------------------- driving
@dataclass
class Options:
    out: Path
    notebook: str | None = None
    jobs: int = 0
    seed: int | None = None
    regrade: bool = False
    limits: Limits = None  # type: ignore[assignment]
    sandbox: Sandbox = None  # type: ignore[assignment]


def grade(inputs: list[Path], opts: Options, stream=None) -> dict[str, dict]:
    """Grade every submission (see the module docstring); return the records by student."""
    return asyncio.run(_grade(inputs, opts, stream))


async def _grade(inputs: list[Path], opts: Options, stream) -> dict[str, dict]:
    out = opts.out
    out.mkdir(parents=True, exist_ok=True)
    subs = discover(inputs, opts.notebook)
    records = load_records(out)
    previous_seed = None
    try:
        previous_seed = json.loads((out / "run.json").read_text(encoding="utf-8")).get("seed")
    except (OSError, ValueError, AttributeError):
        pass
    if opts.seed is not None:
        seed = opts.seed
    elif previous_seed is not None and not opts.regrade:
        seed = int(previous_seed)  # finishing an interrupted run: the same cases for everyone
    else:
        seed = secrets.randbits(32)
    atomic_write(out / "run.json", json.dumps({"seed": seed}) + "\n")
    limits = opts.limits or Limits()
    settings = {"cell_timeout_s": limits.cell_timeout, "total_timeout_s": limits.total_timeout,
                "memory_limit_mb": limits.memory_bytes >> 20, "max_output_chars": limits.max_output,
                "sandbox": "bubblewrap" if opts.sandbox.bwrap else "none"}
    progress = Progress(len(subs), stream)
    questions_cache: dict[str, list[Question]] = {}
    jobs = opts.jobs or os.cpu_count() or 1
    slots = Slots(jobs)
    lock = asyncio.Lock()
    base = Path(tempfile.mkdtemp(prefix="l13g-"))
    counter = iter(range(10**9))

    course_cache: dict[str, frozenset[str]] = {}

    def course_for(nb: str) -> frozenset[str]:
        if nb not in course_cache:
            course_cache[nb] = course_cell_sources(nb)
        return course_cache[nb]

    def questions_for(nb: str) -> list[Question]:
        if nb not in questions_cache:
            questions_cache[nb] = draw_questions(nb, seed)
        return questions_cache[nb]

    async def one(sub: Submission) -> None:
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
        if (old and not opts.regrade and old.get("sha256") == sha and old.get("notebook") == sub.notebook):
            progress.update(old, skipped=True)
            return
        questions = questions_for(sub.notebook) if sub.notebook else []
        if read_error or sub.notebook is None:
            error = read_error or "cannot tell which notebook this is: pass --notebook NN"
            if not read_error:
                try:
                    load_cells(data)
                except NotANotebook as exc:
                    error = str(exc)
            record = build_record(sub, sha, seed, questions, None, [], error)
        else:
            try:
                cells, notes = load_cells(data)
            except NotANotebook as exc:
                record = build_record(sub, sha, seed, questions, None, [], str(exc))
            else:
                workdir = base / f"s{next(counter)}"
                try:
                    run = await run_submission(cells, questions, opts.sandbox, limits, workdir, slots)
                finally:
                    shutil.rmtree(workdir, ignore_errors=True)
                record = build_record(sub, sha, seed, questions, run, notes_nb + notes,
                                      cells=cells, course_cells=course_for(sub.notebook))
        async with lock:
            atomic_write(out / "records" / f"{sub.student}.json", json.dumps(record, indent=1) + "\n")
            records[sub.student] = record
            atomic_write(out / "feedback" / f"{sub.student}.md", feedback_markdown(record))
            progress.update(record)

    try:
        await asyncio.gather(*(one(s) for s in subs))
    finally:
        shutil.rmtree(base, ignore_errors=True)
        write_outputs(out, records, seed, settings)
    return records
