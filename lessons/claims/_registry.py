"""The one registry of the lesson's claims.

A claim is a sentence the lesson states with a number (or a property), the number as the
lesson states it, and a function that recomputes it with the package's own code. The
notebooks quote the stated values, ``python -m lessons.l13`` re-runs every function, and
the tests check both, so a number in the prose and its check cannot drift apart.

How a stated value is compared with the computed one:

* a decimal string such as ``"0.4011"``: within half a unit of its last digit
  (rounding), so ``"0.4011"`` accepts 0.40105 .. 0.40115; a string with no decimal point,
  such as ``"25"``, must match to 1e-9;
* a tuple of such strings: element by element (the computed value has the same length);
* an ``int``: exactly (a count);
* ``True`` / ``False``: the computed value is that truth value;
* an explicit ``tolerance`` overrides the rule above (``"0"`` with tolerance 1e-12 says
  "zero up to float rounding").
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..i18n import gettext, pgettext

DOMAIN = "claims"  # the gettext domain of everything this package says (lessons/locale/<lang>/LC_MESSAGES)


def _(message: str) -> str:
    """``message`` in the current language (:func:`lessons.i18n.language`), English if untranslated."""
    return gettext(message, domain=DOMAIN)


@dataclass(frozen=True)
class Claim:
    id: str
    notebook: str
    text: str
    stated: Any
    compute: Callable[[], Any] = field(repr=False, compare=False)
    tolerance: float | None = None

    def tolerances(self) -> list[float]:
        """One tolerance per stated number."""
        if isinstance(self.stated, (bool, int)):
            return [0.0]
        items = self.stated if isinstance(self.stated, tuple) else (self.stated,)
        if self.tolerance is not None:
            return [self.tolerance] * len(items)
        return [_rounding_tolerance(s) for s in items]

    def stated_values(self) -> list[float]:
        if isinstance(self.stated, (bool, int)):
            return [float(self.stated)]
        items = self.stated if isinstance(self.stated, tuple) else (self.stated,)
        return [float(s) for s in items]

    def stated_text(self) -> str:
        if isinstance(self.stated, bool):
            return "true" if self.stated else "false"
        if isinstance(self.stated, int):
            return str(self.stated)
        if isinstance(self.stated, tuple):
            return "[" + ", ".join(self.stated) + "]"
        return self.stated

    def translated_text(self) -> str:
        """The claim in the current language: its catalog entry (context = the claim's id,
        message = its English text), or the English text when there is none. A claim whose
        English text changed misses its old entry, so it is shown in English until translated.
        """
        return pgettext(self.id, self.text, domain=DOMAIN)


def _rounding_tolerance(text: str) -> float:
    if "." not in text:
        return 1e-9
    decimals = len(text.split(".", 1)[1])
    return 0.5 * 10.0**-decimals * (1 + 1e-9)


@dataclass(frozen=True)
class ClaimResult:
    claim: Claim
    computed: Any
    ok: bool
    error: str | None = None

    def computed_text(self) -> str:
        if self.error is not None:
            return _("error: {error}").format(error=self.error)
        return format_like(self.claim, self.computed)


def format_like(claim: Claim, value) -> str:
    """Format a computed value the way the claim states its own."""
    if isinstance(claim.stated, bool):
        return "true" if bool(value) else "false"
    if isinstance(claim.stated, int):
        return str(int(value)) if _is_integral(value) else repr(value)
    items = claim.stated if isinstance(claim.stated, tuple) else (claim.stated,)
    values = _as_list(value)
    if len(values) != len(items):
        return repr(value)
    out = []
    for text, v in zip(items, values, strict=True):
        if claim.tolerance is not None and claim.tolerance < 1e-6 and float(text) == 0:
            out.append(f"{v:.1e}" if v != 0 else "0")
        else:
            decimals = len(text.split(".", 1)[1]) if "." in text else 0
            out.append(f"{v:.{decimals}f}" if decimals else _plain(v))
    return out[0] if not isinstance(claim.stated, tuple) else "[" + ", ".join(out) + "]"


def _plain(v: float) -> str:
    return str(int(round(v))) if abs(v - round(v)) < 1e-9 else f"{v:.6g}"


def _is_integral(value) -> bool:
    try:
        return float(value) == int(value)
    except (TypeError, ValueError, OverflowError):
        return False


def _as_list(value) -> list[float]:
    try:
        import numpy as np

        arr = np.asarray(value, dtype=np.float64).ravel()
        return [float(x) for x in arr]
    except (TypeError, ValueError):
        return []


_CLAIMS: dict[str, Claim] = {}


def claim(id: str, text: str, stated, *, tolerance: float | None = None):
    """Decorator: register the decorated function as the computation of a claim.

    ``id`` starts with the two-digit number of the notebook that states it ("03.pair_count").
    """
    notebook = id.split(".", 1)[0]
    if not (len(notebook) == 2 and notebook.isdigit()):
        raise ValueError(f"claim id must start with a two-digit notebook number; got {id!r}")
    if isinstance(stated, str):
        float(stated)
    elif isinstance(stated, tuple):
        [float(s) for s in stated]
    elif not isinstance(stated, (bool, int)):
        raise TypeError(f"stated must be a decimal string, a tuple of them, an int or a bool; got {stated!r}")

    def register(fn):
        if id in _CLAIMS:
            raise ValueError(f"claim {id!r} is registered twice")
        _CLAIMS[id] = Claim(id, notebook, text, stated, fn, tolerance)
        return fn

    return register


def evaluate(c: Claim) -> ClaimResult:
    """Run a claim's computation and compare it with the stated value."""
    try:
        value = c.compute()
    except Exception as exc:  # a failing computation is a failed claim, reported in words
        return ClaimResult(c, None, False, f"{type(exc).__name__}: {exc}")
    if isinstance(c.stated, bool):
        return ClaimResult(c, value, bool(value) is c.stated)
    if isinstance(c.stated, int):
        ok = isinstance(value, numbers.Real) and _is_integral(value) and int(value) == c.stated
        return ClaimResult(c, value, ok)
    values = _as_list(value)
    expected = c.stated_values()
    if len(values) != len(expected):
        return ClaimResult(
            c, value, False,
            _("computed {computed} number(s), the lesson states {stated}").format(
                computed=len(values), stated=len(expected)
            ),
        )
    ok = all(
        math.isfinite(v) and abs(v - e) <= tol
        for v, e, tol in zip(values, expected, c.tolerances(), strict=True)
    )
    return ClaimResult(c, value, ok)


def below(tolerance):
    """Turn a computation of a float residual into "is it within ``tolerance``?" (a bool claim).

    The residual itself (e.g. 3e-13) depends on the platform's sin/cos rounding; the truth
    of "below the tolerance" does not, so notebook outputs stay the same on every machine.
    """

    def wrap(fn):
        def within():
            return bool(abs(fn()) <= tolerance)

        within.residual = fn
        return within

    return wrap
