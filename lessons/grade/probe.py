"""The grader's probe: what it asks the student's kernel, and how it reads the reply.

The grader first runs :func:`prelude` in the student's kernel (before the student's cells).
Then, right after the cell that checks exercise X (``check("X", ...)``) has run without an
error — or at the end of the notebook when there is no such cell — it runs a probe cell for
X. The probe looks X's name up in the kernel's namespace at that moment (so what the learner's
own ``check`` saw is what is judged), calls a function on the cases the grader drew, turns
each output into plain data with the exercises' ``to_plain`` and prints ONE line::

    <nonce>{"id": "ex06_rotate_pair", "results": [[0.1, 0.2], {"error": "TypeError: ..."}, ...]}

The nonce is random per run and only the probe's line carries it. The reply is plain data:
the grader parses it with ``json.loads`` (never ``eval``, never ``pickle``), checks every
field's type and size (:func:`parse_reply`) and judges it in its own process with the one
judge of :mod:`lessons.exercises`. Whatever a student's code prints, patches or forges can
at most change the numbers reported for that student's own answers.
"""

from __future__ import annotations

import ast
import inspect
import json
import textwrap
from dataclasses import dataclass, field

from ..exercises import MAX_ANSWER_SIZE, Exercise
from ..exercises._plain import TAGS, is_tag

TAG_FIELDS = {*TAGS, "max_imag"}

def plain_source() -> str:
    """The source of :mod:`lessons.exercises._plain` (self-contained: numpy and the standard
    library only), which the kernel runs to turn answers into plain data exactly as the
    learner's ``check`` does."""
    from ..exercises import _plain

    return inspect.getsource(_plain)


def candidate_source(fn) -> str:
    """A checker exercise's candidate (the correct implementation or a mutant) as source,
    renamed ``candidate`` and without its docstring, so a checker cannot tell them apart by
    name or words."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    node = next(n for n in tree.body if isinstance(n, ast.FunctionDef))
    node.name = "candidate"
    node.decorator_list = []
    if ast.get_docstring(node) is not None:
        node.body = node.body[1:] or [ast.Pass()]
    return ast.unparse(node) + "\n"


# The prelude defines the probe with everything it uses bound at that moment (builtins,
# numpy, the output stream, the namespace), so a student's later patches of builtins,
# numpy, json, print or sys.stdout do not change how answers are read back. The _plain
# module runs in a private namespace with a snapshot of the builtins and of numpy's attributes.
PRELUDE_TEMPLATE = r"""
def __l13_setup(source):
    import builtins, numpy, types
    snap_np = types.SimpleNamespace(**vars(numpy))
    real_import = builtins.__import__
    def _import(name, *args, **kwargs):
        return snap_np if name == "numpy" else real_import(name, *args, **kwargs)
    ns = {"__builtins__": dict(vars(builtins), __import__=_import), "__name__": "l13_plain"}
    exec(source, ns)
    return ns


def __l13_probe(gid, name, kind, cases, candidates, time_limit, nonce, *,
                _plain=__l13_setup(__L13_PLAIN__), _ns=globals(),
                _out=__import__("sys").stdout, _sys=__import__("sys"), _io=__import__("io"),
                _signal=__import__("signal"), _np=__import__("numpy"),
                _int=int, _float=float, _str=str, _list=list, _dict=dict, _type=type, _exec=exec,
                _isinstance=isinstance, _callable=callable, _repr=float.__repr__, _irepr=int.__repr__,
                _BaseException=BaseException):
    to_plain, run_case, run_checker = _plain["to_plain"], _plain["run_case"], _plain["run_checker"]

    class _Timeout(_BaseException):
        pass

    def on_alarm(signum, frame):
        raise _Timeout

    def limited(fn, *args):
        previous = _signal.signal(_signal.SIGALRM, on_alarm)
        _signal.setitimer(_signal.ITIMER_REAL, time_limit)
        try:
            return fn(*args)
        except _Timeout:
            return {"timeout": True}
        finally:
            _signal.setitimer(_signal.ITIMER_REAL, 0)
            _signal.signal(_signal.SIGALRM, previous)

    saved, _sys.stdout = _sys.stdout, _io.StringIO()
    try:
        if name not in _ns or _ns[name] is None:
            results = [{"missing": True}]
        elif kind == "value":
            results = [to_plain(_ns[name])]
        elif not _callable(_ns[name]):
            results = [{"not_function": _type(_ns[name]).__name__}]
        elif kind == "checker":
            verdicts = {}
            for key, source in candidates:
                space = {"np": _np, "numpy": _np, "__name__": "candidate"}
                _exec(source, space)
                verdicts[key] = limited(run_checker, _ns[name], space["candidate"])
            results = [verdicts]
        else:
            results = [run_case(_ns[name], case) for case in cases]
    finally:
        _sys.stdout = saved

    def enc(x):
        if _isinstance(x, _dict):
            return "{" + ", ".join(enc(_str(k)) + ": " + enc(v) for k, v in x.items()) + "}"
        if _isinstance(x, _list):
            return "[" + ", ".join(enc(v) for v in x) + "]"
        if x is True:
            return "true"
        if x is False:
            return "false"
        if x is None:
            return "null"
        if _type(x) is _int:
            return _irepr(x)
        if _type(x) is _float:
            text = _repr(x)
            return '"' + text + '"' if text in ("nan", "inf", "-inf") else text
        return '"' + "".join(c if c.isalnum() or c in " .,:;()[]_-+=<>'/" else "?" for c in _str(x)) + '"'

    _out.write(nonce + enc({"id": gid, "results": results}) + "\n")
    _out.flush()
"""


def prelude() -> str:
    return PRELUDE_TEMPLATE.replace("__L13_PLAIN__", repr(plain_source()))


@dataclass(frozen=True)
class Question:
    """What the grader asks about one exercise: the drawn inputs of a function exercise, or
    the candidates of a checker exercise as (opaque key, source) in a shuffled order."""

    exercise: Exercise
    cases: list[dict] | None = None
    candidates: tuple[tuple[str, str], ...] = ()
    keys: dict = field(default_factory=dict)  # checker: opaque key -> candidate name ("correct", mutant)

    @property
    def n(self) -> int:
        return 1 if self.cases is None else len(self.cases)


def probe_source(q: Question, nonce: str, name: str | None = None) -> str:
    """The code of a probe cell asking about ``q`` (cases embedded as Python literals): the
    answer is looked up under ``name`` (the one the learner's check call passed), else under
    the exercise's own name."""
    ex = q.exercise
    cases = q.cases if q.cases is not None else []
    if name is None or not name.isidentifier():
        name = ex.name
    return (f"__l13_probe({ex.grade_id!r}, {name!r}, {ex.kind!r}, {cases!r}, "
            f"{list(q.candidates)!r}, {float(ex.time_limit)!r}, {nonce!r})\n")


class ReplyError(ValueError):
    """The probe's reply cannot be read (``reason`` says why, in words)."""


class NoReply(ReplyError):
    pass


class Forged(ReplyError):
    pass


MAX_TEXT = 300
MAX_DEPTH = 12
WHOLE_ANSWER_TAGS = ("missing", "not_function")


def parse_reply(lines: list[str], q: Question):
    """Validate the probe's reply for ``q`` and return the judge's ``outputs``.

    Plain data only: numbers, nested lists of numbers, and the tags of
    :mod:`lessons.exercises._plain` with values of the right types. A value exercise gives
    one output; a function exercise one per case (or one tag for the whole answer); a
    checker exercise a dict by candidate name. Anything else raises :class:`ReplyError`.
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
        raise NoReply("no reply from the probe")
    if len(replies) > 1:
        raise Forged(f"{len(replies)} replies instead of one (forged output?)")
    data = replies[0]
    if set(data) != {"id", "results"} or not isinstance(data["results"], list) or not data["results"]:
        raise ReplyError("malformed reply")
    results = data["results"]
    count = [0]
    if len(results) == 1 and is_tag(results[0]) and next(iter(results[0])) in WHOLE_ANSWER_TAGS:
        return _clean(results[0], 0, count)
    kind = q.exercise.kind
    if kind == "checker":
        got = results[0]
        if len(results) != 1 or not isinstance(got, dict) or set(got) != set(q.keys):
            raise ReplyError("the checker's verdicts do not name the candidates asked about")
        out = {}
        for key, verdict in got.items():
            if not (isinstance(verdict, bool) or is_tag(verdict)):
                raise ReplyError("a checker's verdict is not True, False or a tag")
            out[q.keys[key]] = _clean(verdict, 0, count)
        return out
    if kind == "value":
        if len(results) != 1:
            raise ReplyError(f"{len(results)} results for one value")
        return _clean(results[0], 0, count)
    if len(results) != q.n:
        raise ReplyError(f"{len(results)} results for {q.n} cases")
    return [_clean(r, 0, count) for r in results]


def _number(x) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float, str)):
        raise ReplyError("a tag's number is not a number")
    try:
        return float(x)
    except ValueError:
        raise ReplyError("a tag's number is not a number") from None


def _clean(x, depth: int, count: list[int], in_tag: bool = False):
    count[0] += 1
    if count[0] > 4 * MAX_ANSWER_SIZE or depth > MAX_DEPTH:
        raise ReplyError("the reply is too large or too deep")
    if isinstance(x, bool) or x is None:
        return x
    if isinstance(x, (int, float)):
        return x
    if isinstance(x, str):
        if in_tag:
            return x[:MAX_TEXT]
        if x in ("nan", "inf", "-inf"):
            return float(x)
        raise ReplyError("a value is not a number")
    if isinstance(x, list):
        return [_clean(v, depth + 1, count, in_tag) for v in x]
    if isinstance(x, dict):
        if not is_tag(x) or not set(x) <= TAG_FIELDS:
            raise ReplyError("a result has unexpected fields")
        out = {k: _clean(v, depth + 1, count, True) for k, v in x.items()}
        if "max_imag" in out:  # a number, even when it is nan or inf (sent as text)
            out["max_imag"] = _number(out["max_imag"])
        return out
    raise ReplyError("a value is not a number")
