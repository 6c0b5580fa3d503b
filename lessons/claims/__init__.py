"""Every claim the lesson makes, in one registry (see :mod:`lessons.claims._registry`).

Claims are grouped by notebook in modules ``nbNN``; importing this package registers all
of them. Use :func:`all_claims`, :func:`get` and :func:`check` from notebooks and tests.
"""

from __future__ import annotations

from .._modules import import_all
from ._registry import _CLAIMS, Claim, ClaimResult, claim, evaluate, format_like

# One module per notebook, listed here: a module named here that cannot be imported is an error.
MODULES = ("nb01", "nb02", "nb03", "nb04", "nb05", "nb06", "nb07", "nb08", "nb09")


def _load() -> None:
    import_all(__name__, MODULES)


def all_claims(notebook: str | None = None) -> list[Claim]:
    """All registered claims in notebook order, or those of one notebook ("01" .. "09")."""
    _load()
    claims = sorted(_CLAIMS.values(), key=lambda c: c.notebook)
    return [c for c in claims if notebook is None or c.notebook == notebook]


def get(claim_id: str) -> Claim:
    """The claim with this id; KeyError names the known ids of its notebook if absent."""
    _load()
    try:
        return _CLAIMS[claim_id]
    except KeyError:
        nb = claim_id.split(".", 1)[0]
        known = ", ".join(c.id for c in all_claims(nb)) or "none"
        raise KeyError(f"no claim {claim_id!r}; claims of notebook {nb}: {known}") from None


def stated(claim_id: str) -> str:
    """The value as the lesson states it, as text (for a notebook to quote)."""
    return get(claim_id).stated_text()


def check(notebook: str | None = None) -> list[ClaimResult]:
    """Evaluate the claims (of one notebook, or all)."""
    return [evaluate(c) for c in all_claims(notebook)]


def show(notebook: str) -> None:
    """Print a notebook's claims as a small table: stated, computed, agrees (for notebooks)."""
    results = check(notebook)
    for r in results:
        mark = "ok  " if r.ok else "FAIL"
        print(f"{mark} {r.claim.id:<34} stated {r.claim.stated_text():<32} computed {r.computed_text()}")
    failed = sum(not r.ok for r in results)
    print(f"{len(results) - failed} of {len(results)} claims of notebook {notebook} hold")


__all__ = [
    "Claim",
    "ClaimResult",
    "all_claims",
    "check",
    "claim",
    "evaluate",
    "format_like",
    "get",
    "show",
    "stated",
]
