"""Importing a registry's per-notebook modules (claims, exercises)."""

from __future__ import annotations

from functools import cache
from importlib import import_module


@cache
def import_present(package: str, names: tuple[str, ...]) -> None:
    """Import ``package.name`` for every name whose module exists; a missing one is skipped,
    an import error inside an existing one is raised. Cached: the imports run once."""
    for name in names:
        try:
            import_module(f"{package}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{package}.{name}":
                raise
