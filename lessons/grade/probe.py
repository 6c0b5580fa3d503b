"""The grader's probe: what it asks the student's kernel, and how it reads the reply.

For each exercise the grader runs one probe cell in the student's kernel, after the
student's own cells. The probe looks the exercise's name up in the kernel's namespace (so
cell metadata, order and duplicates do not matter: the last definition wins, as in
Python), calls a function on the cases the grader drew, and prints ONE line::

    <nonce>{"id": "ex06_rotate_pair", "results": [{"shape": [2], "values": [0.1, 0.2]}, ...]}

The nonce is random per run and only the probe's line carries it. The reply is plain data:
the grader parses it with ``json.loads`` (never ``eval``, never ``pickle``), checks every
field's type and the shapes strictly (:func:`parse_reply`), and compares the numbers in its
own process with values it computed itself. Whatever a student's code prints, patches or
forges can at most change the numbers reported for that student's own answers.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

from ..exercises import MAX_ANSWER_SIZE, Exercise

# Runs in the student's kernel. Uses only the standard library and numpy (if numpy is
# missing or broken, a student's numpy-based answer could not work either).
_PROBE = r'''
def __l13_probe(gid, name, kind, cases, shapes, nonce, max_size):
    import sys, io
    out = sys.stdout
    def plain(result, shape):
        try:
            import numpy
            arr = numpy.array(result, dtype=numpy.float64)
        except BaseException as exc:
            return {"error": "not numbers: " + type(result).__name__ + " (" + type(exc).__name__ + ")"}
        got = [int(n) for n in arr.shape]
        if arr.size > max_size or got != shape:
            return {"shape": got}
        return {"shape": got, "values": [float(v) for v in arr.reshape(-1).tolist()]}
    ns = globals()
    results = []
    if name not in ns:
        results.append({"missing": True})
    elif kind == "value":
        value = ns[name]
        results.append({"missing": True} if value is None else plain(value, shapes[0]))
    elif not callable(ns[name]):
        results.append({"error": name + " is not a function (" + type(ns[name]).__name__ + ")"})
    else:
        import numpy
        fn = ns[name]
        for case, shape in zip(cases, shapes):
            args = {k: numpy.array(v, dtype=numpy.float64) if isinstance(v, list) else v
                    for k, v in case.items()}
            sys.stdout = io.StringIO()
            try:
                results.append(plain(fn(**args), shape))
            except NotImplementedError:
                results.append({"missing": True})
            except (Exception, SystemExit) as exc:
                results.append({"error": type(exc).__name__ + ": " + str(exc)[:200]})
            finally:
                sys.stdout = out
    def enc(x):
        if isinstance(x, dict):
            return "{" + ", ".join(enc(str(k)) + ": " + enc(v) for k, v in x.items()) + "}"
        if isinstance(x, list):
            return "[" + ", ".join(enc(v) for v in x) + "]"
        if x is True:
            return "true"
        if type(x) is int:
            return int.__repr__(x)
        if type(x) is float:
            s = float.__repr__(x)
            return '"' + s + '"' if s in ("nan", "inf", "-inf") else s
        return '"' + "".join(c if c.isalnum() or c in " .,:;()[]_-+=<>'" else "?" for c in str(x)) + '"'
    out.write(nonce + enc({"id": gid, "results": results}) + "\n")
    out.flush()
'''


@dataclass(frozen=True)
class Question:
    """What the grader asks about one exercise, and what it expects back."""

    exercise: Exercise
    cases: list[dict] | None  # function exercises: the drawn inputs
    expected: list  # one expected value (plain data) per case; one for a value exercise


def expected_shape(value) -> list[int]:
    from ..exercises import shape_of

    shape = shape_of(value)
    return list(shape) if shape is not None else [-1]


def probe_source(questions: list[Question], nonce: str) -> str:
    """The code of a probe cell asking about ``questions`` (cases embedded as Python literals)."""
    calls = []
    for q in questions:
        ex = q.exercise
        shapes = [expected_shape(e) for e in q.expected]
        cases = q.cases if q.cases is not None else []
        calls.append(f"__l13_probe({ex.grade_id!r}, {ex.name!r}, {ex.kind!r}, {cases!r}, {shapes!r}, "
                     f"{nonce!r}, {MAX_ANSWER_SIZE})\n")
    return _PROBE + "".join(calls) + "del __l13_probe\n"


class ReplyError(ValueError):
    pass


def _is_number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def parse_reply(lines: list[str], q: Question) -> list[dict]:
    """Validate the probe's reply for ``q``: one result per expected value.

    A result is ``{"missing": True}``, ``{"error": str}``, ``{"shape": [ints]}`` (wrong shape
    or too large) or ``{"shape": [ints], "values": nested list of floats}``. Anything else
    raises :class:`ReplyError`.
    """
    replies = []
    for line in lines:
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if isinstance(data, dict) and data.get("id") == q.exercise.grade_id:
            replies.append(data)
    if not replies:
        raise ReplyError("no reply from the probe")
    if len(replies) > 1:
        raise ReplyError(f"{len(replies)} replies instead of one (forged output?)")
    data = replies[0]
    if set(data) != {"id", "results"} or not isinstance(data["results"], list):
        raise ReplyError("malformed reply")
    results = data["results"]
    n = len(q.expected)
    if q.exercise.kind == "function" and len(results) == 1 and results[0].get("missing") is True:
        return [{"missing": True}] * n
    if q.exercise.kind == "function" and len(results) == 1 and "error" in results[0] and n > 1:
        return [results[0]] * n
    if len(results) != n:
        raise ReplyError(f"{len(results)} results for {n} cases")
    clean = []
    for r, expected in zip(results, q.expected, strict=True):
        clean.append(_validate(r, expected))
    return clean


def _validate(r, expected) -> dict:
    if not isinstance(r, dict):
        raise ReplyError("a result is not an object")
    if r == {"missing": True}:
        return r
    if set(r) == {"error"} and isinstance(r["error"], str):
        return {"error": r["error"][:300]}
    if "shape" not in r or not set(r) <= {"shape", "values"}:
        raise ReplyError("a result has unexpected fields")
    shape = r["shape"]
    if not (isinstance(shape, list) and all(isinstance(s, int) and not isinstance(s, bool) and s >= 0
                                            for s in shape)):
        raise ReplyError("a shape is not a list of sizes")
    if "values" not in r:
        return {"shape": shape}
    values = r["values"]
    if shape != expected_shape(expected):
        raise ReplyError("values sent for a shape that was not asked for")
    if not isinstance(values, list) or len(values) != math.prod(shape):
        raise ReplyError("the values do not match their shape")
    flat = []
    for v in values:
        if _is_number(v):
            flat.append(float(v))
        elif v in ("nan", "inf", "-inf"):
            flat.append(float(v))
        else:
            raise ReplyError("a value is not a number")
    return {"shape": shape, "values": _nest(flat, shape)}


def _nest(flat: list[float], shape: list[int]):
    if not shape:
        return flat[0]
    step = math.prod(shape[1:])
    return [_nest(flat[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])]
