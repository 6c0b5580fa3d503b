"""The grader's probe: what it asks the student's kernel, and how it reads the reply.

The grader first runs :data:`PRELUDE` in the student's kernel (before the student's
cells), then, after them, a probe cell for the exercises. The probe looks each exercise's
name up in the kernel's namespace (so cell metadata, order and duplicates do not matter:
the last definition wins, as in Python), calls a function on the cases the grader drew,
and prints ONE line per exercise::

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

# PRELUDE runs in the student's kernel BEFORE the student's cells. It defines the probe
# function with everything it uses bound as default arguments at that moment (builtins,
# numpy.array, the output stream, the namespace), so a student's later patches of
# builtins, numpy, json, print or sys.stdout do not change how answers are read back.
PRELUDE = r'''
def __l13_probe(gid, name, kind, cases, shapes, nonce, max_size, *,
                _ns=globals(), _out=__import__("sys").stdout, _sys=__import__("sys"), _io=__import__("io"),
                _np_array=__import__("numpy").array, _f64=__import__("numpy").float64,
                _float=float, _int=int, _str=str, _list=list, _dict=dict, _type=type, _zip=zip,
                _isinstance=isinstance, _callable=callable, _repr=float.__repr__, _irepr=int.__repr__,
                _BaseException=BaseException, _Exception=Exception, _SystemExit=SystemExit,
                _NotImplementedError=NotImplementedError):
    def plain(result, shape):
        try:
            arr = _np_array(result, dtype=_f64)
        except _BaseException as exc:
            return {"error": "not numbers: " + _type(result).__name__ + " (" + _type(exc).__name__ + ")"}
        got = [_int(n) for n in arr.shape]
        if arr.size > max_size or got != shape:
            return {"shape": got}
        return {"shape": got, "values": [_float(v) for v in arr.reshape(-1).tolist()]}

    results = []
    if name not in _ns:
        results.append({"missing": True})
    elif kind == "value":
        value = _ns[name]
        results.append({"missing": True} if value is None else plain(value, shapes[0]))
    elif not _callable(_ns[name]):
        results.append({"error": name + " is not a function (" + _type(_ns[name]).__name__ + ")"})
    else:
        fn = _ns[name]
        for case, shape in _zip(cases, shapes):
            args = {k: _np_array(v, dtype=_f64) if _isinstance(v, _list) else v for k, v in case.items()}
            saved, _sys.stdout = _sys.stdout, _io.StringIO()
            try:
                results.append(plain(fn(**args), shape))
            except _NotImplementedError:
                results.append({"missing": True})
            except (_Exception, _SystemExit) as exc:
                results.append({"error": _type(exc).__name__ + ": " + _str(exc)[:200]})
            finally:
                _sys.stdout = saved

    def enc(x):
        if _isinstance(x, _dict):
            return "{" + ", ".join(enc(_str(k)) + ": " + enc(v) for k, v in x.items()) + "}"
        if _isinstance(x, _list):
            return "[" + ", ".join(enc(v) for v in x) + "]"
        if x is True:
            return "true"
        if _type(x) is _int:
            return _irepr(x)
        if _type(x) is _float:
            text = _repr(x)
            return '"' + text + '"' if text in ("nan", "inf", "-inf") else text
        return '"' + "".join(c if c.isalnum() or c in " .,:;()[]_-+=<>'" else "?" for c in _str(x)) + '"'

    _out.write(nonce + enc({"id": gid, "results": results}) + "\n")
    _out.flush()
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
    return "".join(calls)


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
