"""Importing a registry's per-notebook modules (claims, exercises)."""

from __future__ import annotations

from functools import cache
from importlib import import_module


@cache
def import_all(package: str, names: tuple[str, ...]) -> None:
    """Import ``package.name`` for every listed name. A listed module that is missing raises
    ModuleNotFoundError naming it: the list is the registry's table of contents. Cached: the
    imports run once."""
    for name in names:
        try:
            import_module(f"{package}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"{package}.{name}":
                raise ModuleNotFoundError(
                    f"{package}: module {name!r} is listed in MODULES but does not exist", name=exc.name
                ) from None
            raise
