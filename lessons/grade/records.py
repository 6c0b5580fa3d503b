"""Records: one JSON file per graded submission, and everything rebuilt from them.

Everything the grader writes goes through :func:`atomic_write` (a temporary file in the
same folder, then ``os.replace``). One record per submission lands in ``<out>/records/`` as
soon as it is graded; ``gradebook.csv``, ``results.json``, ``feedback/`` and the manual
grading sheet ``manual.csv`` are rebuilt from the records (and from a merged sheet,
``manual.json``). Several graders (shards) may write records into one folder at once: each
writes only its own students' records.

A record keeps two things apart:

* ``grading`` — did grading work: ``ok``, ``incomplete: ...`` (some exercise could not be
  graded: the submission's time ran out, its kernel kept dying, a forged reply) or
  ``not graded: ...`` (not a notebook);
* ``result`` — how the student did: ``full marks``, ``nothing answered`` or ``7 of 15:
  wrong: Exercise 3a; not answered: Exercise 4b``, then what the student's own code did
  (a cell timed out, errors in cells ...).
"""

from __future__ import annotations

import csv
import io
import json
import os
import tempfile
import time
from pathlib import Path

from ..exercises import N_, all_exercises, head_line
from ..i18n import gettext as _
from ..i18n import use_language

RECORD_VERSION = 2
# Parts of a record's result words that are recognised again later (see _prefixes).
TO_GRADE_BY_HAND = N_("to grade by hand: {columns}")
CELL_ERRORS = (
    N_("errors in cell {cells}"),
    N_("errors in cells {cells}"),
    N_("errors in cells {cells} and {count} more"),
)
NOT_GRADED = {"OUT_OF_TIME", "TIMED_OUT", "KILLED_KERNEL", "UNREADABLE", "FORGED", "NOT_A_NOTEBOOK"}


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


def num(x) -> str:
    if x is None:
        return ""
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def _labels(names: list[str]) -> str:
    return ", ".join(names)


WRONG = N_("wrong: {columns}")
PARTLY = N_("part marks: {columns}")
NOT_ANSWERED = N_("not answered: {columns}")


def _prefixes(*templates: str) -> tuple[str, ...]:
    """The words before the first placeholder of each template, in English and in the current
    language: how a part of a record's words is recognised whatever language wrote it."""
    out = []
    for template in templates:
        for text in (template, _(template)):
            head = text.split("{", 1)[0]
            if head and head not in out:
                out.append(head)
    return tuple(out)


def summarise(exercises: dict, events: list[str], own_errors: list[str]) -> tuple[str, float, float]:
    """(result words, total, max) of a record's exercises."""
    total = sum(e["points"] for e in exercises.values() if e["points"] is not None)
    maximum = sum(e["max"] for e in exercises.values())
    short = [e for e in exercises.values()
             if e["points"] is not None and e["points"] < e["max"] and e["outcome"] not in ("MISSING",)
             and e["outcome"] not in NOT_GRADED]
    wrong = [e["column"] for e in short if e["points"] <= 0]
    partly = [e["column"] for e in short if e["points"] > 0]
    missing = [e["column"] for e in exercises.values() if e["outcome"] == "MISSING"]
    pending = [e["column"] for e in exercises.values() if e["points"] is None]
    answered = [e for e in exercises.values() if e["outcome"] != "MISSING"]
    if exercises and not answered:
        parts = [_("nothing answered")]
    elif exercises and all(e["points"] is None or e["points"] == e["max"] for e in exercises.values()):
        parts = [_("full marks so far") if pending else _("full marks")]
    else:
        head = _("{total} of {max}").format(total=num(total), max=num(maximum))
        detail = []
        if wrong:
            detail.append(_(WRONG).format(columns=_labels(wrong)))
        if partly:
            detail.append(_(PARTLY).format(columns=_labels(partly)))
        if missing:
            detail.append(_(NOT_ANSWERED).format(columns=_labels(missing)))
        parts = [head + (": " + "; ".join(detail) if detail else "")]
    if pending:
        parts.append(_(TO_GRADE_BY_HAND).format(columns=_labels(pending)))
    parts += events + own_errors
    return "; ".join(parts), total, maximum


def build_record(*, student: str, file: str, sha: str, notebook: str | None, seed: int,
                 exercises: dict, grading_problems: list[str], notes: list[str],
                 student_events: list[str], cell_errors: dict, course_errors: dict,
                 timings: dict | None = None, seconds: float = 0.0) -> dict:
    own = {n: e for n, e in cell_errors.items() if n not in course_errors}
    own_text = []
    if own:
        listed = ", ".join(f"{n} ({e})" for n, e in sorted(own.items())[:8])
        text = CELL_ERRORS[0 if len(own) == 1 else 1 if len(own) <= 8 else 2]
        own_text.append(_(text).format(cells=listed, count=len(own) - 8))
    result, total, maximum = summarise(exercises, student_events, own_text)
    unanswered = [e["column"] for e in exercises.values() if e["outcome"] in NOT_GRADED]
    if grading_problems and (not exercises or len(unanswered) == len(exercises)) and not notes:
        grading = _("not graded: {reasons}").format(reasons="; ".join(grading_problems))
    elif grading_problems or unanswered:
        by_reason: dict[str, list[str]] = {}
        for e in exercises.values():
            if e["outcome"] in NOT_GRADED:
                by_reason.setdefault(e.get("not_graded", _("not graded")), []).append(e["column"])
        why = grading_problems + [f"{_labels(cols)}: {reason}" for reason, cols in by_reason.items()]
        grading = _("incomplete: {reasons}").format(reasons="; ".join(why))
    else:
        grading = "ok"
    if notes:
        grading += " (" + "; ".join(notes) + ")"
    return {
        "version": RECORD_VERSION,
        "student": student,
        "file": file,
        "sha256": sha,
        "notebook": notebook,
        "seed": seed,
        "points": {gid: e["points"] for gid, e in exercises.items()},
        "total": total,
        "max": maximum,
        "grading": grading,
        "result": result,
        "exercises": exercises,
        "cell_errors": {str(n): e for n, e in sorted(cell_errors.items())},
        "course_cell_errors": {str(n): e for n, e in sorted(course_errors.items())},
        "seconds": round(seconds, 2),
        "timings": {k: round(v, 3) for k, v in (timings or {}).items()},
        "graded_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def write_record(out: Path, record: dict) -> None:
    atomic_write(out / "records" / f"{record['student']}.json", json.dumps(record, indent=1) + "\n")


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


# ------------------------------------------------------------------- manual grading
class SheetError(ValueError):
    """A filled manual-grading sheet that cannot be merged (the message names the line)."""


SHEET_COLUMNS = ["student", "question", "title", "max", "answer", "points", "comment"]


def sheet_text(text):
    """Text for a spreadsheet cell that no spreadsheet runs as a formula: one that starts with
    ``=``, ``+``, ``-``, ``@`` or a tab is prefixed with ``'`` (a student's written answer can
    be ``=HYPERLINK(...)``)."""
    if isinstance(text, str) and text[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + text
    return text


def manual_sheet(records: dict[str, dict], grades: dict) -> str:
    """The sheet an instructor fills in: one row per written answer (points and comment as
    merged so far)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(SHEET_COLUMNS)
    for student in sorted(records):
        for gid, e in records[student]["exercises"].items():
            if e["kind"] != "written":
                continue
            g = grades.get(student, {}).get(gid, {})
            w.writerow([student, gid, e["title"], num(e["max"]), sheet_text(e.get("answer", "")),
                        num(g["points"]) if "points" in g else "", g.get("comment", "")])
    return buf.getvalue()


def read_sheet(path: Path, records: dict[str, dict]) -> dict:
    """A filled sheet as {student: {question: {"points": p, "comment": c}}}; raises
    :class:`SheetError` naming the first wrong line."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise SheetError(f"{path}: cannot be read ({exc.strerror})") from None
    reader = csv.DictReader(io.StringIO(text))
    need = {"student", "question", "points"}
    if reader.fieldnames is None or not need <= set(reader.fieldnames):
        raise SheetError(f"{path.name} row 1: the header must name the columns {', '.join(SHEET_COLUMNS)}; "
                         f"got {', '.join(reader.fieldnames or []) or 'nothing'}")
    grades: dict = {}
    for number, row in enumerate(reader, start=2):  # as a spreadsheet numbers rows: the header is 1
        student, gid = (row.get("student") or "").strip(), (row.get("question") or "").strip()
        where = f"{path.name} row {number} (line {reader.line_num})"
        if student not in records:
            raise SheetError(f"{where}: no graded submission of a student {student!r}")
        exercises = records[student]["exercises"]
        if gid not in exercises or exercises[gid]["kind"] != "written":
            known = ", ".join(g for g, e in exercises.items() if e["kind"] == "written") or "none"
            raise SheetError(f"{where}: {student} has no written question {gid!r} (theirs: {known})")
        text_points = (row.get("points") or "").strip()
        entry = {"comment": (row.get("comment") or "").strip()}
        if text_points:
            try:
                points = float(text_points)
            except ValueError:
                raise SheetError(f"{where}: points {text_points!r} is not a number") from None
            maximum = exercises[gid]["max"]
            if not 0 <= points <= maximum:
                raise SheetError(f"{where}: points {text_points} outside 0..{num(maximum)} for {gid}")
            entry["points"] = points
        if gid in grades.get(student, {}):
            raise SheetError(f"{where}: {student} / {gid} is graded twice in the sheet")
        grades.setdefault(student, {})[gid] = entry
    return grades


def with_manual(record: dict, grades: dict) -> dict:
    """The record with the merged manual points and comments (totals and words redone)."""
    mine = grades.get(record["student"])
    if not mine:
        return record
    rec = json.loads(json.dumps(record))
    for gid, g in mine.items():
        e = rec["exercises"].get(gid)
        if e is None or e["kind"] != "written":
            continue
        if e["outcome"] == "MISSING":
            e["points"] = 0.0 if "points" not in g else g["points"]
        elif "points" in g:
            e["points"] = g["points"]
        if g.get("comment"):
            e["comment"] = g["comment"]
    rec["points"] = {gid: e["points"] for gid, e in rec["exercises"].items()}
    # Keep what summarise did not write (events, errors in the student's cells): its own parts
    # are written again from the merged points.
    ours = _prefixes(TO_GRADE_BY_HAND, WRONG, PARTLY, NOT_ANSWERED)
    rest = [p for p in rec["result"].split("; ")[1:] if not p.startswith(ours)]
    result, total, maximum = summarise(rec["exercises"], [], [])
    rec["result"] = "; ".join([result, *rest])
    rec["total"], rec["max"] = total, maximum
    return rec


# ----------------------------------------------------------------------- outputs
def columns_for(rows: list[dict]) -> list[tuple[str, str]]:
    """(header, grade_id) of the exercises present: "Exercise 1a" titles, prefixed with the
    notebook where several notebooks share a title."""
    present = [ex for ex in all_exercises() if any(ex.grade_id in r["exercises"] for r in rows)]
    from .scoring import column_label

    labels = [column_label(ex) for ex in present]
    notebooks = {ex.notebook for ex in present}
    out = []
    for ex, label in zip(present, labels, strict=True):
        if sum(other.notebook == ex.notebook and other_label == label
               for other, other_label in zip(present, labels, strict=True)) > 1:
            label = ex.grade_id  # two exercises of one notebook with one title: the ids tell them apart
        elif len(notebooks) > 1:
            label = f"{ex.notebook} {label}"
        out.append((label, ex.grade_id))
    return out


def write_outputs(out: Path, records: dict[str, dict], seed, settings: dict, *,
                  reveal: bool = False, grades: dict | None = None) -> None:
    """Rebuild gradebook.csv, results.json, feedback/ and manual.csv from the records."""
    grades = grades or {}
    rows = []
    for r in sorted(records.values(), key=lambda r: r["student"]):
        with use_language(language_of_record(r)):  # the result words are redone in the record's language
            rows.append(with_manual(r, grades))
    columns = columns_for(rows)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["student", "notebook", *[c for c, _ in columns], "total", "max", "result", "grading"])
    for r in rows:
        w.writerow([r["student"], r["notebook"] or "",
                    *[num(r["points"][g]) if g in r["points"] else "" for _, g in columns],
                    num(r["total"]), num(r["max"]), sheet_text(r["result"]), sheet_text(r["grading"])])
    atomic_write(out / "gradebook.csv", buf.getvalue())
    results = {"seed": seed, "settings": settings, "columns": {c: g for c, g in columns}, "submissions": rows}
    atomic_write(out / "results.json", json.dumps(results, indent=1) + "\n")
    for r in rows:
        atomic_write(out / "feedback" / f"{r['student']}.md", feedback_in_its_language(r, reveal=reveal))
    if any(e["kind"] == "written" for r in rows for e in r["exercises"].values()):
        atomic_write(out / "manual.csv", manual_sheet(records, grades))


def language_of_record(record: dict) -> str:
    """The language a record's feedback is written in: its submission's (records made before
    the Chinese edition have none: English)."""
    return record.get("language") or "en"


def feedback_in_its_language(r: dict, reveal: bool = False) -> str:
    """:func:`feedback_markdown` in the language of the record's submission."""
    with use_language(language_of_record(r)):
        return feedback_markdown(r, reveal=reveal)


def feedback_markdown(r: dict, reveal: bool = False) -> str:
    """The student's feedback: points, each exercise's verdict in the one judge's words, the
    written answers' points and comments. Never the course's own cells; never the expected
    value of a value exercise unless ``reveal``."""
    lines = [_("# Feedback for {student}: notebook {notebook}").format(
                 student=r["student"], notebook=r["notebook"] or "?"), "",
             _("**{total} of {max} points.**").format(total=num(r["total"]), max=num(r["max"])), ""]
    # the note on the course's own cells is for the instructor, not the student
    grading = r["grading"].removesuffix(r.get("course_cells_note", ""))
    if grading != "ok":
        lines += [_("Grading: {grading}.").format(grading=grading), ""]
    if r["exercises"]:
        lines += [_("| exercise | points | result |"), "|---|---|---|"]
        for e in r["exercises"].values():
            points = _("to be graded") if e["points"] is None else f"{num(e['points'])} / {num(e['max'])}"
            first = e["message"].splitlines()[0]
            short = first
            for prefix in (head_line(e["title"], ""), e["title"] + ": "):
                if first.startswith(prefix):
                    short = first[len(prefix):]
                    break
            if short.endswith((_("does not pass."), "does not pass.")) and e.get("outcome_words"):
                short = _("does not pass: {outcome}").format(outcome=_(e["outcome_words"]))
            lines.append(f"| {_(e['title'])} | {points} | {short.replace('|', '/')} |")
        lines.append("")
    for e in r["exercises"].values():
        text = e.get("message_revealed", e["message"]) if reveal else e["message"]
        details = text.splitlines()[1:]
        if details or e.get("comment"):
            lines += [f"## {_(e['title'])}", ""]
            if details:
                lines += ["```", *[d[2:] if d.startswith("  ") else d for d in details], "```", ""]
            if e.get("comment"):
                lines += [_("Comment: {comment}").format(comment=e["comment"]), ""]
    own = [m for m in r["result"].split("; ") if m.startswith((*_prefixes(*CELL_ERRORS), "cell "))]
    if own:
        lines += [_("While running your notebook: {errors}.").format(errors="; ".join(own)), ""]
    lines.append(
        _("Inputs drawn with seed {seed}; graded {time}.").format(seed=r["seed"], time=r["graded_at"])
    )
    return "\n".join(lines) + "\n"
