"""Answers as plain data, computed where the learner's code runs (``06``).

SELF-CONTAINED: this module imports numpy and the standard library only, so the grader can
ship its source text (``inspect.getsource`` of the module) into a sandboxed kernel and run it
there exactly as the learner's ``check()`` runs it in the notebook. The results are plain
data (numbers, nested lists, bools and small tagged dicts) that the one judge,
:func:`lessons.exercises.judge`, turns into a verdict in the grader's process.

Tags (dicts) that stand for an answer that cannot be judged as numbers:

* ``{"complex": [shape], "max_imag": x}``: complex numbers (refused, not silently made real);
* ``{"ragged": True}``: a list whose items do not form a regular array;
* ``{"unsupported": "type name"}``: not numbers at all (a string, a dict, an object);
* ``{"too_large": [shape]}``: more than ``MAX_ANSWER_SIZE`` numbers;
* ``{"missing": True}``: a stub (``None`` or ``raise NotImplementedError()``);
* ``{"error": "TypeError: ..."}``: the learner's code raised;
* ``{"signature": ["names", ...]}``: the function could not take the exercise's arguments
  (its parameter names are returned, so the verdict can say to keep the expected ones);
* ``{"not_bool": "type name"}``: a checker returned something else than True or False;
* ``{"not_function": "type name"}``: the name the exercise asks for is not a function;
* ``{"timeout": True}``: a call stopped at its time limit.
"""

import numbers

import numpy as np

# How many numbers one answer may hold before it is refused (a guard against huge outputs).
MAX_ANSWER_SIZE = 100_000

TAGS = (
    "complex",
    "ragged",
    "unsupported",
    "too_large",
    "missing",
    "error",
    "signature",
    "not_bool",
    "not_function",
    "timeout",
)


def is_tag(value) -> bool:
    """True for one of the tagged dicts above."""
    return isinstance(value, dict) and len(value) >= 1 and next(iter(value)) in TAGS


def to_plain(value):
    """A number or nested lists of numbers as Python ints/floats and lists, or a tag (a dict).

    Arrays, tuples and anything numpy can read as a numeric array become lists; numpy scalars
    become Python numbers; ``None`` and bools stay as they are. Complex numbers, ragged lists,
    non-numeric objects and arrays of more than ``MAX_ANSWER_SIZE`` numbers become tags.
    Never raises (an object whose conversion itself fails is "unsupported").
    """
    try:
        return _to_plain(value)
    except Exception:
        return {"unsupported": type(value).__name__}


def _to_plain(value):
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    if isinstance(value, numbers.Complex):
        return {"complex": [], "max_imag": abs(complex(value).imag)}
    if isinstance(value, (str, bytes, dict, set)):
        return {"unsupported": type(value).__name__}
    if isinstance(value, (list, tuple)):
        items = [_to_plain(v) for v in value]
        for item in items:
            if isinstance(item, dict):
                return item  # a complex / ragged / unsupported item: the whole answer is that
        shapes = [_shape(item) for item in items]
        if any(s != shapes[0] for s in shapes):
            return {"ragged": True}
        size = len(items)
        for n in shapes[0] if shapes else ():
            size *= n
        if size > MAX_ANSWER_SIZE:
            return {"too_large": [len(items), *shapes[0]]}
        return items
    if isinstance(value, np.ndarray) or hasattr(value, "__array__"):
        arr = np.asarray(value)
        if arr.dtype == object:
            return _to_plain(arr.tolist())
        if np.issubdtype(arr.dtype, np.complexfloating):
            imag = float(np.max(np.abs(arr.imag))) if arr.size else 0.0
            return {"complex": [int(n) for n in arr.shape], "max_imag": imag}
        if not (np.issubdtype(arr.dtype, np.number) or arr.dtype == np.bool_):
            return {"unsupported": f"an array of {arr.dtype}"}
        if arr.size > MAX_ANSWER_SIZE:
            return {"too_large": [int(n) for n in arr.shape]}
        return arr.astype(np.float64).tolist()
    return {"unsupported": type(value).__name__}


def _shape(item):
    if isinstance(item, list):
        inner = [_shape(v) for v in item]
        if any(s != inner[0] for s in inner):
            return None  # ragged inside: differs from any regular shape
        return (len(item), *(inner[0] if inner else ()))
    return ()


def call_arguments(case: dict) -> dict:
    """How a case is passed to a function: every list becomes a float64 numpy array.

    Scalars (ints, floats) are passed as they are. The learner's check, the grader's kernel
    and the reference all call with the same arguments.
    """
    return {
        key: np.array(value, dtype=np.float64) if isinstance(value, list) else value
        for key, value in case.items()
    }


def run_case(fn, case: dict):
    """Call ``fn(**case)`` as the judge expects it: the result as plain data, or a tag.

    A stub (``NotImplementedError``) gives ``{"missing": True}``; arguments the function
    cannot take by the exercise's names give ``{"signature": [its parameter names]}``; any
    other exception ``{"error": "Name: message"}`` (message cut at 200 characters).
    """
    import inspect

    args = call_arguments(case)
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        signature = None
    if signature is not None:
        try:
            signature.bind(**args)
        except TypeError:
            return {
                "signature": [
                    p.name
                    for p in signature.parameters.values()
                    if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
                ]
            }
    try:
        result = fn(**args)
    except NotImplementedError:
        return {"missing": True}
    except (Exception, SystemExit) as exc:
        return {"error": f"{type(exc).__name__}: {str(exc)[:200]}"}
    return to_plain(result)


def run_checker(checker, candidate):
    """``checker(candidate)`` as plain data: True, False, or a tag (error, not_bool, missing)."""
    try:
        result = checker(candidate)
    except NotImplementedError:
        return {"missing": True}
    except (Exception, SystemExit) as exc:
        return {"error": f"{type(exc).__name__}: {str(exc)[:200]}"}
    if isinstance(result, (bool, np.bool_)):
        return bool(result)
    return {"not_bool": type(result).__name__}
